// vyre::lib::compact and nonzero on lavapipe: every value type (f64 and f16
// where the device has them) and mask type, at the lengths where workgroups,
// scan levels and packed words change, with random masks from fixed seeds
// at densities 0, 1/1000, 1/2 and 1, against a host filter on the bytes;
// nonzero of floats with -0.0, NaN, infinities and subnormals; buffers left
// on the GPU; shapes and a grid beyond one axis; both passes against the
// reference interpreter (bounds and races checked); refusals.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "support/lib_inputs.hpp"
#include "support/lowering_backend.hpp"
#include "vyre/error.hpp"
#include "vyre/half.hpp"
#include "vyre/lib/compact.hpp"
#include "vyre/reference.hpp"

using namespace vyre;

namespace {

gpu::Backend& backend() { return vyre::test::lowering_backend(); }

constexpr ScalarType kValueTypes[] = {ScalarType::U32, ScalarType::I32, ScalarType::F32, ScalarType::F64,
                                      ScalarType::F16, ScalarType::U8,  ScalarType::I8,  ScalarType::U16,
                                      ScalarType::I16, ScalarType::Bool};
constexpr ScalarType kMaskTypes[] = {ScalarType::U32, ScalarType::I32, ScalarType::U8, ScalarType::Bool};
// Keep probabilities: none, one in a thousand, half, all.
constexpr double kDensities[] = {0.0, 0.001, 0.5, 1.0};

std::vector<uint32_t> every_length() {
  std::vector<uint32_t> lengths = test::kLibSweepLengths;
  lengths.insert(lengths.begin(), {0, 2, 3});  // 2 and 3 end inside a packed word
  return lengths;
}

// Whether the device runs programs of this type (shader-f64, shader-f16).
bool runs(ScalarType type) {
  try {
    backend().compile(lib::compact_scatter_pass(type, ScalarType::U32));
    return true;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::limit_exceeded) throw;
    return false;
  }
}

// Random elements of `type` as bytes: any bits for integers, 0 or 1 for
// bool, and for floats finite values with NaN, infinities and signed zeros
// among them (a NaN's bits must come back as they went).
std::vector<uint8_t> random_elements(ScalarType type, uint32_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  const uint32_t size = element_bytes(type);
  std::vector<uint8_t> out(size_t{n} * size);
  for (uint32_t i = 0; i < n; ++i) {
    uint8_t* at = out.data() + size_t{i} * size;
    const uint32_t pick = rng() % 16;
    const double special[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity(), -0.0, 0.0};
    const double value = pick < 5 ? special[pick] : std::uniform_real_distribution<double>(-1e4, 1e4)(rng);
    if (type == ScalarType::F32) {
      const float f = static_cast<float>(value);
      std::memcpy(at, &f, size);
    } else if (type == ScalarType::F64) {
      std::memcpy(at, &value, size);
    } else if (type == ScalarType::F16) {
      const half h = to_half(value);
      std::memcpy(at, &h.bits, size);
    } else if (type == ScalarType::Bool) {
      *at = static_cast<uint8_t>(rng() & 1);
    } else {
      const uint32_t bits = rng();
      std::memcpy(at, &bits, size);
    }
  }
  return out;
}

// A mask keeping each element with probability `density`; kept elements
// hold assorted nonzero values (negative ones for i32), dropped ones zero.
std::vector<uint8_t> random_mask(ScalarType type, uint32_t n, double density, uint32_t seed) {
  std::mt19937 rng(seed);
  std::bernoulli_distribution keep(density);
  const uint32_t size = element_bytes(type);
  std::vector<uint8_t> out(size_t{n} * size, 0);
  for (uint32_t i = 0; i < n; ++i) {
    if (!keep(rng)) continue;
    uint32_t v = type == ScalarType::Bool ? 1 : (rng() | 1u) & (size == 1 ? 0xffu : 0xffffffffu);
    if (type == ScalarType::I32 && i % 3 == 0) v = static_cast<uint32_t>(-static_cast<int32_t>(i + 1));
    std::memcpy(out.data() + size_t{i} * size, &v, size);
  }
  return out;
}

bool element_is_nonzero(ScalarType type, const uint8_t* at) {
  switch (type) {
    case ScalarType::F32: {
      float f;
      std::memcpy(&f, at, 4);
      return f != 0.0f || std::isnan(f);
    }
    case ScalarType::F64: {
      double d;
      std::memcpy(&d, at, 8);
      return d != 0.0 || std::isnan(d);
    }
    case ScalarType::F16: {
      half h;
      std::memcpy(&h.bits, at, 2);
      const double d = to_double(h);
      return d != 0.0 || std::isnan(d);
    }
    default:
      for (uint32_t k = 0; k < element_bytes(type); ++k)
        if (at[k] != 0) return true;
      return false;
  }
}

std::vector<uint8_t> host_compact(const std::vector<uint8_t>& values, ScalarType values_type,
                                  const std::vector<uint8_t>& mask, ScalarType mask_type) {
  const uint32_t vs = element_bytes(values_type), ms = element_bytes(mask_type);
  std::vector<uint8_t> out;
  for (size_t i = 0; i * ms < mask.size(); ++i)
    if (element_is_nonzero(mask_type, mask.data() + i * ms))
      out.insert(out.end(), values.begin() + static_cast<std::ptrdiff_t>(i * vs),
                 values.begin() + static_cast<std::ptrdiff_t>((i + 1) * vs));
  return out;
}

std::vector<uint32_t> host_nonzero(const std::vector<uint8_t>& x, ScalarType type) {
  const uint32_t size = element_bytes(type);
  std::vector<uint32_t> out;
  for (size_t i = 0; i * size < x.size(); ++i)
    if (element_is_nonzero(type, x.data() + i * size)) out.push_back(static_cast<uint32_t>(i));
  return out;
}

void check_compact(ScalarType values_type, ScalarType mask_type, uint32_t seed) {
  for (uint32_t n : every_length()) {
    for (size_t d = 0; d < std::size(kDensities); ++d) {
      const std::vector<uint8_t> values = random_elements(values_type, n, seed + n);
      const std::vector<uint8_t> mask = random_mask(mask_type, n, kDensities[d], seed + n * 7 + static_cast<uint32_t>(d));
      const std::vector<uint8_t> got = lib::compact_bytes(backend(), values, values_type, mask, mask_type);
      ASSERT_EQ(got, host_compact(values, values_type, mask, mask_type))
          << to_string(values_type) << " by " << to_string(mask_type) << ", " << n << " elements, density "
          << kDensities[d];
    }
  }
}

TEST(LibCompact, EveryValueTypeAtEveryLengthAndDensity) {
  for (ScalarType type : kValueTypes) {
    if (!runs(type)) {
      std::cout << "skipping " << to_string(type) << ": the device lacks its feature\n";
      continue;
    }
    check_compact(type, ScalarType::U32, 100 + static_cast<uint32_t>(type));
  }
}

TEST(LibCompact, EveryMaskTypeAtEveryLengthAndDensity) {
  for (ScalarType mask_type : kMaskTypes) {
    check_compact(ScalarType::U8, mask_type, 200 + static_cast<uint32_t>(mask_type));
    if (mask_type != ScalarType::U32) check_compact(ScalarType::F32, mask_type, 300 + static_cast<uint32_t>(mask_type));
  }
}

TEST(LibCompact, NonzeroOfEveryTypeAtEveryLengthAndDensity) {
  for (ScalarType type : kValueTypes) {
    if (!runs(type)) continue;
    for (uint32_t n : every_length()) {
      for (size_t d = 0; d < std::size(kDensities); ++d) {
        // Nonzero values where the mask keeps, zeros elsewhere.
        std::vector<uint8_t> x = random_elements(type, n, 400 + n);
        const std::vector<uint8_t> keep = random_mask(ScalarType::U8, n, kDensities[d], 500 + n + static_cast<uint32_t>(d));
        const uint32_t size = element_bytes(type);
        for (uint32_t i = 0; i < n; ++i)
          if (keep[i] == 0) std::memset(x.data() + size_t{i} * size, 0, size);
        ASSERT_EQ(lib::nonzero_bytes(backend(), x, type), host_nonzero(x, type))
            << to_string(type) << ", " << n << " elements, density " << kDensities[d];
      }
    }
  }
}

TEST(LibCompact, NonzeroOfFloatsIsNumpys) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float tiny = std::numeric_limits<float>::denorm_min();
  const std::vector<float> x = {0.0f, -0.0f, nan, -nan, inf, -inf, tiny, -tiny, 1.0f, 0.0f};
  EXPECT_EQ(lib::nonzero(backend(), x), (std::vector<uint32_t>{2, 3, 4, 5, 6, 7, 8}));
  if (runs(ScalarType::F64)) {
    const double dnan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> y = {-0.0, 0.0, dnan, 1e-300, std::numeric_limits<double>::denorm_min(), -1.0, 0.0};
    EXPECT_EQ(lib::nonzero(backend(), y), (std::vector<uint32_t>{2, 3, 4, 5}));
  }
  if (runs(ScalarType::F16)) {
    const std::vector<half> h = {half{0x8000}, half{0x0000}, half{0x7e00}, half{0x0001}, half{0xfc00}, half{0}};
    EXPECT_EQ(lib::nonzero(backend(), h), (std::vector<uint32_t>{2, 3, 4}));
  }
  EXPECT_EQ(lib::nonzero(backend(), std::vector<int32_t>{0, INT32_MIN, -1, 0, INT32_MAX}),
            (std::vector<uint32_t>{1, 2, 4}));
  EXPECT_EQ(lib::nonzero(backend(), std::vector<uint32_t>{}), std::vector<uint32_t>{});
}

TEST(LibCompact, TypedFormsAndBools) {
  const std::vector<float> v = {1.5f, -2.0f, 3.0f, 4.0f};
  EXPECT_EQ(lib::compact(backend(), v, std::vector<int32_t>{0, -1, 0, 7}), (std::vector<float>{-2.0f, 4.0f}));
  const bool mask[] = {true, false, true, true, false};
  const bool values[] = {false, true, true, false, true};
  EXPECT_EQ(lib::compact(backend(), std::span<const bool>(values), std::span<const bool>(mask)),
            (std::vector<bool>{false, true, false}));
  EXPECT_EQ(lib::compact(backend(), std::vector<uint16_t>{}, std::vector<uint8_t>{}), std::vector<uint16_t>{});
}

TEST(LibCompact, BuffersOnTheGpuStayThere) {
  const std::vector<uint32_t> x = test::random_values<uint32_t>(70000, 61);
  std::vector<uint8_t> mask(x.size());
  for (size_t i = 0; i < x.size(); ++i) mask[i] = static_cast<uint8_t>(x[i] % 3 == 0);
  const lib::Compacted kept = lib::compact(backend(), backend().upload(x), backend().upload(mask));
  std::vector<uint32_t> want;
  for (size_t i = 0; i < x.size(); ++i)
    if (mask[i] != 0) want.push_back(x[i]);
  EXPECT_EQ(kept.count, want.size());
  EXPECT_EQ(kept.buffer->elements(), want.size());
  EXPECT_EQ(kept.buffer->read_as<uint32_t>(), want);
  // Nothing kept: an empty buffer of the values' type.
  const lib::Compacted none =
      lib::compact(backend(), backend().upload(x), backend().upload(std::vector<uint8_t>(x.size(), 0)));
  EXPECT_EQ(none.count, 0u);
  EXPECT_EQ(none.buffer->elements(), 0u);
  EXPECT_EQ(none.buffer->type(), ScalarType::U32);
  const lib::Compacted where = lib::nonzero(backend(), backend().upload(mask));
  EXPECT_EQ(where.count, want.size());
  EXPECT_EQ(where.buffer->type(), ScalarType::U32);
}

TEST(LibCompact, ShapesAndAGridBeyondOneAxis) {
  const uint32_t n = 140001;
  const std::vector<uint8_t> values = random_elements(ScalarType::I16, n, 62);
  const std::vector<uint8_t> mask = random_mask(ScalarType::Bool, n, 0.5, 63);
  const std::vector<uint8_t> want = host_compact(values, ScalarType::I16, mask, ScalarType::Bool);
  // {1, 2}: 70,001 workgroups on two axes and many scan levels.
  for (const lib::ReduceShape shape : {lib::ReduceShape{1, 2}, lib::ReduceShape{64, 1}, lib::ReduceShape{1024, 32},
                                       lib::ReduceShape{32, 32}})
    EXPECT_EQ(lib::compact_bytes(backend(), values, ScalarType::I16, mask, ScalarType::Bool, shape), want)
        << shape.workgroup << "x" << shape.items;
}

TEST(LibCompact, PassesAreTheReferenceInterpretersResult) {
  const uint32_t n = 3001;
  const lib::ReduceShape shape{64, 8};  // 6 workgroups, the last partial
  const uint32_t groups = 6;
  const std::vector<uint8_t> mask = random_mask(ScalarType::U8, n, 0.5, 64);
  const std::vector<uint8_t> values = random_elements(ScalarType::I8, n, 65);
  reference::RunChecks checks;
  checks.bounds = true;
  checks.races = true;
  const Program count = lib::compact_count_pass(ScalarType::U8, shape);
  Inputs counted;
  counted.bytes("mask", mask).size("counts", groups + 1);
  const Dim3 grid{groups, 1, 1};
  const std::vector<uint32_t> counts = reference::run(count, counted, {}, grid, checks).get<uint32_t>("counts");
  EXPECT_EQ(backend().compile(count).dispatch(counted, grid).get<uint32_t>("counts"), counts);
  ASSERT_EQ(counts.size(), groups + 1);
  EXPECT_EQ(counts.back(), 0u);
  std::vector<uint32_t> offsets(groups + 1, 0);
  for (uint32_t g = 1; g <= groups; ++g) offsets[g] = offsets[g - 1] + counts[g - 1];
  const std::vector<uint8_t> want = host_compact(values, ScalarType::I8, mask, ScalarType::U8);
  ASSERT_EQ(offsets.back(), want.size());
  const Program scatter = lib::compact_scatter_pass(ScalarType::I8, ScalarType::U8, shape);
  Inputs placed;
  placed.bytes("mask", mask).bytes("values", values).set<uint32_t>("offsets", offsets).size("out", offsets.back());
  const Outputs ref = reference::run(scatter, placed, {}, grid, checks);
  EXPECT_EQ(ref.get<int8_t>("out"), backend().compile(scatter).dispatch(placed, grid).get<int8_t>("out"));
  std::vector<int8_t> want_values(want.size());
  std::memcpy(want_values.data(), want.data(), want.size());
  EXPECT_EQ(ref.get<int8_t>("out"), want_values);
}

TEST(LibCompact, RefusalsSayWhy) {
  const auto message = [](auto f) { return test::invalid_input_message(f); };
  EXPECT_NE(message([] { lib::compact(backend(), std::vector<uint32_t>{1, 2}, std::vector<uint32_t>{1}); })
                .find("2 values but a mask of 1"),
            std::string::npos);
  EXPECT_NE(message([] { lib::compact(backend(), std::vector<uint32_t>{1}, std::vector<float>{1}); })
                .find("u32, i32, u8 or bool mask, not f32"),
            std::string::npos);
  EXPECT_NE(message([] { lib::compact(backend(), nullptr, backend().upload(std::vector<uint32_t>{1})); })
                .find("values buffer is null"),
            std::string::npos);
  EXPECT_NE(message([] { lib::compact(backend(), backend().upload(std::vector<uint32_t>{1}), nullptr); })
                .find("mask buffer is null"),
            std::string::npos);
  EXPECT_NE(message([] { lib::nonzero(backend(), nullptr); }).find("nonzero: the buffer is null"), std::string::npos);
  EXPECT_NE(message([] { lib::nonzero(backend(), std::vector<uint32_t>{1}, lib::ReduceShape{64, 33}); })
                .find("items is 1 to 32"),
            std::string::npos);
  EXPECT_NE(message([] { lib::nonzero(backend(), std::vector<uint32_t>{1}, lib::ReduceShape{48, 4}); })
                .find("power of two"),
            std::string::npos);
  const std::vector<uint8_t> odd(6);
  EXPECT_NE(message([&] { lib::nonzero_bytes(backend(), odd, ScalarType::F32); }).find("whole f32"), std::string::npos);
}

}  // namespace
