// vyre::lib::scan on lavapipe: every type, operator and kind at the lengths
// where levels and partial workgroups change, against the host's running
// fold (a float sum within its documented bound); one pass against the
// reference interpreter; edge values; shapes down to one invocation, whose
// grid goes beyond 65,535 workgroups; and the refusals.
#include <gtest/gtest.h>

#include <memory>

#include <cmath>
#include <limits>

#include "kernels/passes.hpp"
#include "support/lib_inputs.hpp"
#include "support/lowering_backend.hpp"
#include "vyre/error.hpp"
#include "vyre/lib/scan.hpp"
#include "vyre/reference.hpp"

using namespace vyre;
using lib::ReduceOp;
using lib::ScanKind;
using test::random_values;

namespace {

gpu::Backend& backend() { return vyre::test::lowering_backend(); }

template <class T>
T host_combine(T a, T b, ReduceOp op) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    switch (op) {
      case ReduceOp::Sum: return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));  // wraps
      case ReduceOp::Min: return std::min(a, b);
      case ReduceOp::Max: return std::max(a, b);
      case ReduceOp::And: return a & b;
      case ReduceOp::Or: return a | b;
      case ReduceOp::Xor: return a ^ b;
    }
  } else {
    if (op == ReduceOp::Sum) return a + b;
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    return op == ReduceOp::Min ? std::min(a, b) : std::max(a, b);
  }
  return a;
}

template <class T>
T host_identity(ReduceOp op) {
  using limits = std::numeric_limits<T>;
  if (op == ReduceOp::Min) return std::is_integral_v<T> ? limits::max() : limits::infinity();
  if (op == ReduceOp::Max) return std::is_integral_v<T> ? limits::min() : -limits::infinity();
  if (op == ReduceOp::And) return static_cast<T>(-1);
  return T{};
}

// The running fold, inclusive or exclusive.
template <class T>
std::vector<T> host_scan(const std::vector<T>& x, ReduceOp op, ScanKind kind) {
  std::vector<T> out(x.size());
  T acc = host_identity<T>(op);
  for (size_t i = 0; i < x.size(); ++i) {
    if (kind == ScanKind::Exclusive) out[i] = acc;
    acc = host_combine(acc, x[i], op);
    if (kind == ScanKind::Inclusive) out[i] = acc;
  }
  return out;
}

// The most additions on any element's way to its prefix, per level: its
// invocation's items, the workgroup's log2(W) steps, the two offsets and,
// where a workgroup scans T tiles in turn, the T - 1 tiles' totals carried.
double additions_bound(size_t n, const lib::ReduceShape& shape, uint32_t tiles = 1) {
  const uint64_t span = uint64_t{shape.workgroup} * shape.items * tiles;
  int levels = 0;
  for (uint64_t left = n; levels == 0 || left > 1; ++levels) left = (left + span - 1) / span;
  return levels * (shape.items + std::log2(shape.workgroup) + 2 + (tiles - 1));
}

// How many prefixes of a float sum `got` of `x` lie further from the exact
// prefix than `per_unit` times the sum of the magnitudes before them.
template <class T>
size_t prefixes_out_of_bound(const std::vector<T>& x, const std::vector<T>& got, ScanKind kind, double per_unit) {
  double exact = 0, magnitude = 0;
  size_t worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (kind == ScanKind::Inclusive) exact += x[i], magnitude += std::fabs(double(x[i]));
    if (std::fabs(double(got[i]) - exact) > per_unit * magnitude) ++worst;
    if (kind == ScanKind::Exclusive) exact += x[i], magnitude += std::fabs(double(x[i]));
  }
  return worst;
}

template <class T>
void check_every_operator(uint32_t seed) {
  constexpr bool integer = std::is_integral_v<T>;
  std::vector<uint32_t> lengths = test::kLibLengths;
  lengths.insert(lengths.begin(), 0);
  for (uint32_t n : lengths) {
    const std::vector<T> x = random_values<T>(n, seed + n);
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max, ReduceOp::And, ReduceOp::Or, ReduceOp::Xor}) {
      if (!integer && (op == ReduceOp::And || op == ReduceOp::Or || op == ReduceOp::Xor)) continue;
      for (ScanKind kind : {ScanKind::Inclusive, ScanKind::Exclusive}) {
        const std::vector<T> got = lib::scan(backend(), x, op, kind);
        ASSERT_EQ(got.size(), x.size());
        if (integer || op != ReduceOp::Sum) {
          EXPECT_EQ(got, host_scan(x, op, kind)) << lib::to_string(op) << " of " << n;
          continue;
        }
        // A float sum: each prefix within the rounding of its additions.
        const lib::ReduceShape shape = lib::default_scan_shape(backend(), scalar_type_of<T>());
        const double per_unit = additions_bound(n, shape, lib::detail::default_scan_tiles(backend(), n, shape).count) *
                                std::numeric_limits<T>::epsilon();
        EXPECT_EQ(prefixes_out_of_bound(x, got, kind, per_unit), 0u) << "sum of " << n << (kind == ScanKind::Inclusive ? " inclusive" : " exclusive");
      }
    }
  }
}

TEST(LibScan, U32EveryOperatorAndKindAtEveryLength) { check_every_operator<uint32_t>(21); }
TEST(LibScan, I32EveryOperatorAndKindAtEveryLength) { check_every_operator<int32_t>(22); }
TEST(LibScan, F32EveryOperatorAndKindAtEveryLength) { check_every_operator<float>(23); }

TEST(LibScan, F64WhereTheDeviceHasIt) {
  try {
    backend().compile(lib::scan_pass(ScalarType::F64, ReduceOp::Sum, ScanKind::Inclusive));
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::limit_exceeded) throw;
    GTEST_SKIP() << "no shader-f64: " << e.what();
  }
  check_every_operator<double>(24);
}

TEST(LibScan, OnePassIsTheReferenceInterpretersResult) {
  for (ScanKind kind : {ScanKind::Inclusive, ScanKind::Exclusive}) {
    const std::vector<float> x = random_values<float>(2500, 25);
    const Program pass = lib::scan_pass(ScalarType::F32, ReduceOp::Sum, kind);
    Inputs in;
    in.set<float>("in", x).set<float>("offsets", {0.5f, -3.0f, 100.0f}).size("out", 2500);
    const Dim3 grid{3, 1, 1};
    // The same order of additions: the same bits.
    EXPECT_EQ(backend().compile(pass).dispatch(in, grid).get<float>("out"),
              reference::run(pass, in, {}, grid).get<float>("out"));
  }
}

TEST(LibScan, EdgeValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // NaN from its place on, across spans and levels.
  std::vector<float> x(5000, 1.0f);
  x[3000] = nan;
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max}) {
    const std::vector<float> got = lib::scan(backend(), x, op);
    EXPECT_FALSE(std::isnan(got[2999])) << lib::to_string(op);
    EXPECT_TRUE(std::isnan(got[3000]) && std::isnan(got[4999])) << lib::to_string(op);
  }
  const std::vector<float> y = {2.0f, inf, -1.0f, -inf, 5.0f};
  EXPECT_EQ(lib::scan(backend(), y, ReduceOp::Max), (std::vector<float>{2, inf, inf, inf, inf}));
  EXPECT_EQ(lib::scan(backend(), y, ReduceOp::Min), (std::vector<float>{2, 2, -1, -inf, -inf}));
  const std::vector<float> sums = lib::scan(backend(), y, ReduceOp::Sum);
  EXPECT_EQ(sums[1], inf);
  EXPECT_TRUE(std::isnan(sums[3]));  // inf + -inf
  // Negative zeros stay negative, across spans; an exclusive sum starts from +0.
  const std::vector<float> zeros = lib::scan(backend(), std::vector<float>(3000, -0.0f), ReduceOp::Sum);
  EXPECT_TRUE(std::signbit(zeros[0]) && std::signbit(zeros[2999]));
  const std::vector<float> from = lib::scan(backend(), std::vector<float>{-0.0f, 1.0f}, ReduceOp::Sum, ScanKind::Exclusive);
  EXPECT_FALSE(std::signbit(from[0]));
  EXPECT_EQ(from[1], 0.0f);
  // Integer sums wrap at 32 bits.
  EXPECT_EQ(lib::scan(backend(), std::vector<int32_t>{INT32_MAX, 1, INT32_MIN}, ReduceOp::Sum),
            (std::vector<int32_t>{INT32_MAX, INT32_MIN, 0}));
  EXPECT_EQ(lib::scan(backend(), std::vector<uint32_t>{UINT32_MAX, 2}, ReduceOp::Sum, ScanKind::Exclusive),
            (std::vector<uint32_t>{0, UINT32_MAX}));
}

TEST(LibScan, ShapesAndAGridBeyondOneAxis) {
  const std::vector<uint32_t> x = random_values<uint32_t>(140001, 26);
  const std::vector<uint32_t> want = host_scan(x, ReduceOp::Sum, ScanKind::Inclusive);
  // {1, 2}: 70,001 workgroups on two axes, and sixteen levels.
  for (const lib::ReduceShape shape : {lib::ReduceShape{1, 2}, lib::ReduceShape{64, 1}, lib::ReduceShape{1024, 2}})
    EXPECT_EQ(lib::scan(backend(), x, ReduceOp::Sum, ScanKind::Inclusive, shape), want)
        << shape.workgroup << "x" << shape.items;
}

// The first pass at another workgroup over the same spans (a benchmark
// switch): the same spans' totals (u32 sums, which no order of addition
// changes), so the same prefix, over one level and several.
TEST(LibScan, AFirstPassOfAnotherWorkgroupGivesTheSamePrefix) {
  const std::vector<uint32_t> x = random_values<uint32_t>(140001, 28);
  for (const ScanKind kind : {ScanKind::Inclusive, ScanKind::Exclusive})
    for (const lib::ReduceShape shape : {lib::ReduceShape{64, 8}, lib::ReduceShape{1024, 2}}) {
      const std::vector<uint32_t> want = host_scan(x, ReduceOp::Sum, kind);
      for (const uint32_t w : {16u, 32u, 128u}) {
        lib::detail::set_scan_first_pass_workgroup(w);
        const std::vector<uint32_t> got = lib::scan(backend(), x, ReduceOp::Sum, kind, shape);
        lib::detail::set_scan_first_pass_workgroup(0);
        EXPECT_EQ(got, want) << shape.workgroup << "x" << shape.items << ", first pass of " << w;
      }
    }
}

// Several tiles per workgroup of the last pass (a benchmark switch), the
// running total carried from tile to tile, each tile's elements loaded at
// its turn or during the tile before: the same prefix for every kind
// and op, at lengths that end inside a workgroup's first, middle and last
// tile, over one level and several.
TEST(LibScan, SeveralTilesPerWorkgroupGiveTheSamePrefix) {
  const std::vector<uint32_t> u = random_values<uint32_t>(140001, 29);
  for (const uint32_t tiles : {2u, 3u, 16u})
    for (const bool prefetched : {false, true})
    for (const ScanKind kind : {ScanKind::Inclusive, ScanKind::Exclusive})
      for (const lib::ReduceShape shape : {lib::ReduceShape{64, 8}, lib::ReduceShape{32, 2}}) {
        const std::string what =
            std::to_string(shape.workgroup) + "x" + std::to_string(shape.items) + ", " + std::to_string(tiles) + " tiles" +
            (prefetched ? ", prefetched" : "");
        for (const size_t n : {size_t{1}, size_t{33}, size_t{64 * 8 + 1}, size_t{64 * 8 * 3 - 1}, u.size()}) {
          const std::vector<uint32_t> x(u.begin(), u.begin() + static_cast<std::ptrdiff_t>(n));
          const std::vector<uint32_t> want_sum = host_scan(x, ReduceOp::Sum, kind);
          const std::vector<uint32_t> want_max = host_scan(x, ReduceOp::Max, kind);
          lib::detail::set_scan_tiles_per_workgroup(tiles, prefetched);
          const std::vector<uint32_t> sum = lib::scan(backend(), x, ReduceOp::Sum, kind, shape);
          const std::vector<uint32_t> max = lib::scan(backend(), x, ReduceOp::Max, kind, shape);
          lib::detail::set_scan_tiles_per_workgroup(0);
          EXPECT_EQ(sum, want_sum) << what << ", n " << n;
          EXPECT_EQ(max, want_max) << what << ", n " << n;
        }
        // A float sum: each prefix within the rounding of its additions,
        // the carried tiles' totals counted.
        const std::vector<float> f = random_values<float>(u.size(), 30);
        lib::detail::set_scan_tiles_per_workgroup(tiles, prefetched);
        const std::vector<float> got = lib::scan(backend(), f, ReduceOp::Sum, kind, shape);
        lib::detail::set_scan_tiles_per_workgroup(0);
        const double per_unit = additions_bound(f.size(), shape, tiles) * std::numeric_limits<float>::epsilon();
        EXPECT_EQ(prefixes_out_of_bound(f, got, kind, per_unit), 0u) << what << ", f32 sum";
      }
}

TEST(LibScan, ABufferOnTheGpuStaysThere) {
  const std::vector<uint32_t> x = random_values<uint32_t>(50000, 27);
  const std::shared_ptr<gpu::DeviceBuffer> out = lib::scan(backend(), backend().upload(x));
  EXPECT_EQ(out->elements(), 50000u);
  EXPECT_EQ(out->read_as<uint32_t>(), host_scan(x, ReduceOp::Sum, ScanKind::Inclusive));
}

TEST(LibScan, RefusalsSayWhy) {
  const auto message = [](auto f) { return test::invalid_input_message(f); };
  EXPECT_NE(message([] { lib::scan(backend(), std::vector<float>{1}, ReduceOp::And); }).find("scan and takes integer or bool elements"),
            std::string::npos);
  EXPECT_NE(message([] { lib::scan_pass(ScalarType::F64, ReduceOp::Xor, ScanKind::Inclusive); }).find("xor takes integer or bool"),
            std::string::npos);
  // 1024 x 4 f32 elements, padded by one in 32, and 1,024 totals: 20,992 bytes.
  EXPECT_NE(message([] { lib::scan(backend(), std::vector<float>{1}, ReduceOp::Sum, ScanKind::Inclusive, lib::ReduceShape{1024, 4}); })
                .find("needs 20992 bytes of workgroup memory"),
            std::string::npos);
  const std::vector<uint8_t> odd(6);
  EXPECT_NE(message([&] { lib::scan_bytes(backend(), odd, ScalarType::F32); }).find("whole f32"), std::string::npos);
}

}  // namespace

namespace {

// Narrow, bool and f16 elements scan in their accumulator type: the running
// fold of the widened elements, as u32, i32 or f32.
template <class T>
void check_widened(uint32_t seed) {
  using Acc = lib::accumulator_t<T>;
  for (uint32_t n : {1u, 33u, 65537u}) {
    const test::Widened<T> values = test::widened_values<T>(n, seed + n);
    const std::vector<Acc>& wide = values.wide;
    // Each operator and kind is programs of its own to compile: a sample of them.
    for (auto [op, kind] : {std::pair{ReduceOp::Sum, ScanKind::Inclusive}, std::pair{ReduceOp::Max, ScanKind::Exclusive}}) {
      {
        const std::vector<Acc> got = lib::scan(backend(), std::span<const T>(values.x.get(), n), op, kind);
        // Eighths of at most 1000 in an f32 sum of up to 2^17 terms are exact.
        EXPECT_EQ(got, host_scan(wide, op, kind)) << lib::to_string(op) << " of " << n;
      }
    }
  }
}

TEST(LibScan, NarrowBoolAndF16ElementsScanInTheirWiderType) {
  check_widened<uint8_t>(71);
  check_widened<int8_t>(72);
  check_widened<uint16_t>(73);
  check_widened<int16_t>(74);
  check_widened<bool>(75);
  check_widened<half>(76);
  // A running count of 255s passes a byte's range, as NumPy's cumsum of uint8 does.
  EXPECT_EQ(lib::scan(backend(), std::vector<uint8_t>(3, 255)), (std::vector<uint32_t>{255, 510, 765}));
  EXPECT_TRUE(lib::scan(backend(), std::vector<int16_t>{}).empty());
}

}  // namespace
