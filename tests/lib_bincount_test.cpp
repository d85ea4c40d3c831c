// vyre::lib::bincount on lavapipe: u32 and i32 values at the lengths where
// workgroups change, with bins in workgroup memory and beyond it, against
// the host's count; bins chosen from the largest value; the refusals of a
// value outside the bins and of a negative one; one pass against the
// reference interpreter.
#include <gtest/gtest.h>

#include "support/lib_inputs.hpp"
#include "support/lowering_backend.hpp"
#include "vyre/error.hpp"
#include "vyre/lib/bincount.hpp"
#include "vyre/reference.hpp"

using namespace vyre;
using test::random_values;

namespace {

gpu::Backend& backend() { return vyre::test::lowering_backend(); }

template <class T>
std::vector<uint32_t> host_count(const std::vector<T>& values, uint32_t bins) {
  std::vector<uint32_t> counts(bins, 0);
  for (T v : values) ++counts.at(static_cast<uint32_t>(v));
  return counts;
}

template <class T>
void check_every_length(uint32_t seed) {
  std::vector<uint32_t> lengths = test::kLibSweepLengths;
  lengths.insert(lengths.begin(), 0);
  for (uint32_t bins : {1u, 7u, 256u, lib::kWorkgroupBins, lib::kWorkgroupBins + 1, 100000u}) {
    for (uint32_t n : lengths) {
      std::vector<T> values = random_values<T>(n, seed + n);
      for (T& v : values) v = static_cast<T>(static_cast<uint32_t>(v) % bins);
      // Many of one value too, so that one bin's atomics contend.
      for (size_t i = 0; i < values.size(); i += 2) values[i] = static_cast<T>(bins - 1);
      EXPECT_EQ(lib::bincount(backend(), values, bins), host_count(values, bins)) << n << " values, " << bins << " bins";
    }
  }
}

TEST(LibBincount, U32AtEveryLengthInAndBeyondWorkgroupMemory) { check_every_length<uint32_t>(41); }
TEST(LibBincount, I32AtEveryLengthInAndBeyondWorkgroupMemory) { check_every_length<int32_t>(42); }

TEST(LibBincount, BinsFromTheLargestValue) {
  EXPECT_EQ(lib::bincount(backend(), std::vector<uint32_t>{0, 3, 3, 1}), (std::vector<uint32_t>{1, 1, 0, 2}));
  EXPECT_EQ(lib::bincount(backend(), std::vector<int32_t>{2, 2}), (std::vector<uint32_t>{0, 0, 2}));
  EXPECT_EQ(lib::bincount(backend(), std::vector<uint32_t>{}), std::vector<uint32_t>{});
  EXPECT_EQ(lib::bincount(backend(), std::vector<uint32_t>{}, 3), (std::vector<uint32_t>{0, 0, 0}));
}

TEST(LibBincount, OnePassIsTheReferenceInterpretersResult) {
  std::vector<uint32_t> values = random_values<uint32_t>(5000, 43);
  for (auto& v : values) v %= 300;
  values[17] = 1000;  // outside
  const Program pass = lib::bincount_pass(ScalarType::U32, 300);
  Inputs in;
  in.set<uint32_t>("values", values).size("counts", 300).size("outside", 1);
  const Dim3 grid{5, 1, 1};
  const Outputs gpu_out = backend().compile(pass).dispatch(in, grid);
  const Outputs ref_out = reference::run(pass, in, {}, grid);
  EXPECT_EQ(gpu_out.get<uint32_t>("counts"), ref_out.get<uint32_t>("counts"));
  EXPECT_EQ(gpu_out.get<uint32_t>("outside"), std::vector<uint32_t>{1});
  EXPECT_EQ(ref_out.get<uint32_t>("outside"), std::vector<uint32_t>{1});
}

TEST(LibBincount, RefusalsSayWhy) {
  const auto message = [](auto f) {
    try {
      f();
    } catch (const Error& e) {  // invalid_input, or limit_exceeded for 2^32 bins
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] { lib::bincount(backend(), std::vector<uint32_t>{1, 5, 9}, 5); })
                .find("2 of the 3 values are not in [0, 5)"),
            std::string::npos);
  EXPECT_NE(message([] { lib::bincount(backend(), std::vector<int32_t>{1, -2}); }).find("given -2"), std::string::npos);
  EXPECT_NE(message([] { lib::bincount(backend(), std::vector<int32_t>{1, -2}, 4); }).find("1 of the 2 values"),
            std::string::npos);
  EXPECT_NE(message([] { lib::bincount(backend(), std::vector<float>{1}, 4); }).find("u32, i32, u8, i8, u16 or i16 values, not f32"),
            std::string::npos);
  EXPECT_NE(message([] { lib::bincount(backend(), std::vector<uint32_t>{1}, 0); }).find("at least one bin"),
            std::string::npos);
  EXPECT_NE(message([] { lib::bincount(backend(), std::vector<uint32_t>{UINT32_MAX}); }).find("2^32 bins"),
            std::string::npos);
}

}  // namespace

namespace {

TEST(LibBincount, NarrowValuesAreCountedAndNegativeOnesRefused) {
  std::vector<uint8_t> bytes = random_values<uint8_t>(70001, 44);
  std::vector<uint32_t> want(256, 0);
  for (uint8_t b : bytes) ++want[b];
  EXPECT_EQ(lib::bincount(backend(), bytes, 256), want);
  EXPECT_EQ(lib::bincount(backend(), std::vector<uint16_t>{0, 65535, 65535}).size(), 65536u);
  EXPECT_EQ(lib::bincount(backend(), std::vector<int8_t>{2, 0, 2}), (std::vector<uint32_t>{1, 0, 2}));
  EXPECT_NE(test::invalid_input_message([] { lib::bincount(backend(), std::vector<int16_t>{1, -300}); }).find("given -300"),
            std::string::npos);
  EXPECT_NE(test::invalid_input_message([] { lib::bincount(backend(), std::vector<int8_t>{1, -3}, 4); })
                .find("1 of the 2 values are not in [0, 4)"),
            std::string::npos);
}

}  // namespace
