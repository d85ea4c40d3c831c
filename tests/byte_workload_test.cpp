// Bytes end to end (format version 4): a file's bytes counted and every
// occurrence of a 4-byte pattern found, by examples/byte_count and
// examples/find_pattern, from C++ (the file read into a uint8_t vector,
// bound without conversion) and from the CLI (`--input data=@FILE`), each
// equal to plain loops over the same bytes. The 64 MiB run against NumPy is
// bench/byte_scan.py (docs/benchmarks.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>

#include "support/gpu_test_support.hpp"
#include "support/programs.hpp"
#include "support/test_support.hpp"
#include "vyre/gpu.hpp"

namespace {

using vyre::test::TempDir;

constexpr uint32_t kBytesPerWorkgroup = 256 * 16;  // both examples: 256 invocations of 16 positions
constexpr uint32_t kCapacity = 1024;
const std::vector<uint8_t> kPattern{'v', 'y', 'r', 'e'};

// 3 MiB and 5 bytes of noise with the pattern planted 200 times, twice
// back to back ("vyrevyre") and once in the last four bytes.
std::vector<uint8_t> file_bytes() {
  std::vector<uint8_t> bytes((3u << 20) + 5);
  std::mt19937 rng(2024);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  for (size_t k = 0; k < 200; ++k) std::copy(kPattern.begin(), kPattern.end(), bytes.begin() + k * 15'000 + 7);
  std::copy(kPattern.begin(), kPattern.end(), bytes.begin() + 3'000'000);
  std::copy(kPattern.begin(), kPattern.end(), bytes.begin() + 3'000'004);
  std::copy(kPattern.begin(), kPattern.end(), bytes.end() - 4);
  return bytes;
}

std::vector<uint32_t> counted(const std::vector<uint8_t>& bytes) {
  std::vector<uint32_t> counts(256);
  for (uint8_t b : bytes) ++counts[b];
  return counts;
}

std::vector<uint32_t> occurrences(const std::vector<uint8_t>& bytes) {
  std::vector<uint32_t> at;
  for (size_t i = 0; i + 4 <= bytes.size(); ++i)
    if (std::equal(kPattern.begin(), kPattern.end(), bytes.begin() + static_cast<std::ptrdiff_t>(i)))
      at.push_back(static_cast<uint32_t>(i));
  return at;
}

vyre::Dim3 grid_for(size_t bytes) { return {static_cast<uint32_t>((bytes + kBytesPerWorkgroup - 1) / kBytesPerWorkgroup), 1, 1}; }

class ByteWorkload : public ::testing::Test {
 protected:
  void SetUp() override {
    bytes_ = file_bytes();
    std::ofstream(dir_ / "data.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes_.data()), static_cast<std::streamsize>(bytes_.size()));
    want_where_ = occurrences(bytes_);
    ASSERT_GE(want_where_.size(), 203u);
    ASSERT_LE(want_where_.size(), kCapacity);
  }
  TempDir dir_;
  std::vector<uint8_t> bytes_;
  std::vector<uint32_t> want_where_;
};

TEST_F(ByteWorkload, FromCppTheFilesBytesAreCountedAndEveryOccurrenceFound) {
  std::ifstream in(dir_ / "data.bin", std::ios::binary);
  const std::vector<uint8_t> file{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  ASSERT_EQ(file, bytes_);

  vyre::gpu::Backend backend(vyre::test::no_disk_cache());
  vyre::Inputs count_inputs;
  count_inputs.view<uint8_t>("data", file);
  const auto counts = backend.compile(vyre::test::example("byte_count")).dispatch(count_inputs, grid_for(file.size()));
  EXPECT_EQ(counts.get<uint32_t>("counts"), counted(file));

  vyre::Inputs find_inputs;
  find_inputs.view<uint8_t>("data", file).set<uint8_t>("pattern", kPattern).size("where", kCapacity);
  const auto found = backend.compile(vyre::test::example("find_pattern")).dispatch(find_inputs, grid_for(file.size()));
  const uint32_t count = found.get<uint32_t>("count").at(0);
  ASSERT_EQ(count, want_where_.size());
  auto where = found.get<uint32_t>("where");
  where.resize(count);
  std::sort(where.begin(), where.end());
  EXPECT_EQ(where, want_where_);
}

TEST_F(ByteWorkload, FromTheCliTheFileIsTheBuffer) {
  const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", (dir_ / "cache").string()}};
  const vyre::Dim3 g = grid_for(bytes_.size());
  const std::string grid = std::to_string(g[0]) + ",1,1";
  const std::string data = "data=@" + (dir_ / "data.bin").string();

  const auto count = vyre::test::run_vyre(
      {"run", vyre::test::source_path("examples/byte_count.json").string(), "--input", data, "--grid", grid}, env);
  ASSERT_EQ(count.exit_code, 0) << count.err;
  EXPECT_EQ(nlohmann::json::parse(count.out)["counts"].get<std::vector<uint32_t>>(), counted(bytes_));

  const auto find = vyre::test::run_vyre({"run", vyre::test::source_path("examples/find_pattern.json").string(),
                                          "--input", data, "--input", "pattern=118,121,114,101", "--size",
                                          "where=" + std::to_string(kCapacity), "--grid", grid},
                                         env);
  ASSERT_EQ(find.exit_code, 0) << find.err;
  const auto out = nlohmann::json::parse(find.out);
  ASSERT_EQ(out["count"].get<std::vector<uint32_t>>(), std::vector<uint32_t>{static_cast<uint32_t>(want_where_.size())});
  auto where = out["where"].get<std::vector<uint32_t>>();
  where.resize(want_where_.size());
  std::sort(where.begin(), where.end());
  EXPECT_EQ(where, want_where_);
}

}  // namespace
