// vyre::lib::histogram on lavapipe: u32, i32, f32, u8, u16, i8 and i16
// values at the lengths where workgroups change, with bins in workgroup
// memory and beyond it, against a host histogram that follows NumPy's rule
// (its own linspace, f32 comparisons for f32, f64 for integers); values on
// the edges, at hi, NaN, infinities, -0.0; ranges at the integer extremes;
// given edges, duplicates among them; the counts of values left out; one pass
// against the reference interpreter (bounds and races checked); refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>

#include "support/lib_inputs.hpp"
#include "support/lowering_backend.hpp"
#include "vyre/error.hpp"
#include "vyre/lib/histogram.hpp"
#include "vyre/reference.hpp"

using namespace vyre;

namespace {

gpu::Backend& backend() { return vyre::test::lowering_backend(); }

// numpy.linspace(lo, hi, bins + 1) after numpy.histogram's widening of an
// empty range, written out again here.
std::vector<double> numpy_edges(uint32_t bins, double lo, double hi) {
  if (lo == hi) lo -= 0.5, hi += 0.5;
  const double step = (hi - lo) / bins;
  std::vector<double> edges;
  for (uint32_t i = 0; i <= bins; ++i) {
    const double scaled = step == 0 ? (static_cast<double>(i) / bins) * (hi - lo) : static_cast<double>(i) * step;
    edges.push_back(scaled + lo);
  }
  edges.back() = hi;
  return edges;
}

// The rule: v counted when edges[0] <= v <= edges[bins], in the last bin
// whose left edge is at most v; comparisons in E (f32 for f32 values,
// f64 for the rest).
template <class E, class T>
lib::Histogram host_histogram(const std::vector<T>& values, const std::vector<double>& edges) {
  std::vector<E> e(edges.begin(), edges.end());
  const size_t bins = e.size() - 1;
  lib::Histogram h{std::vector<uint32_t>(bins, 0), 0};
  for (T x : values) {
    const E v = static_cast<E>(x);
    if (std::isnan(v) || v < e.front() || v > e.back()) {
      ++h.outside;
      continue;
    }
    const size_t above = static_cast<size_t>(std::upper_bound(e.begin(), e.end() - 1, v) - e.begin());
    ++h.counts[std::min(above - 1, bins - 1)];
  }
  return h;
}

template <class T>
using Compared = std::conditional_t<std::is_same_v<T, float>, float, double>;

template <class T>
lib::Histogram host_uniform(const std::vector<T>& values, uint32_t bins, double lo, double hi) {
  return host_histogram<Compared<T>>(values, numpy_edges(bins, lo, hi));
}

void expect_same(const lib::Histogram& got, const lib::Histogram& want, const std::string& what) {
  EXPECT_EQ(got.outside, want.outside) << what;
  ASSERT_EQ(got.counts.size(), want.counts.size()) << what;
  size_t wrong = 0, first = 0;
  for (size_t i = 0; i < got.counts.size(); ++i)
    if (got.counts[i] != want.counts[i] && wrong++ == 0) first = i;
  EXPECT_EQ(wrong, 0u) << what << ": first at bin " << first << " (" << got.counts[first] << " for "
                       << want.counts[first] << ")";
}

// Random values of T: floats in [-1000, 1000); integers over a range a
// little wider than [lo, hi] (clamped to T's), so that some fall outside.
template <class T>
std::vector<T> values_around(uint32_t n, double lo, double hi, uint32_t seed) {
  std::mt19937 rng(seed);
  const double margin = (hi - lo) / 8;
  const double from = std::max(lo - margin, static_cast<double>(std::numeric_limits<T>::lowest()));
  const double to = std::min(hi + margin, static_cast<double>(std::numeric_limits<T>::max()));
  std::uniform_real_distribution<double> pick(from, to);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(std::is_floating_point_v<T> ? pick(rng) : std::floor(pick(rng)));
  return v;
}

template <class T>
void check_every_length(double lo, double hi, uint32_t seed) {
  std::vector<uint32_t> lengths = test::kLibSweepLengths;
  lengths.insert(lengths.begin(), 0);
  for (uint32_t bins : {1u, 7u, 256u, 4095u, 4096u, 100000u}) {
    for (uint32_t n : lengths) {
      std::vector<T> values = values_around<T>(n, lo, hi, seed + n + bins);
      // Some values exactly on the edges (as T holds them) and at hi.
      const std::vector<double> edges = numpy_edges(bins, lo, hi);
      for (size_t i = 0; i < values.size() && i < 3000; i += 3) values[i] = static_cast<T>(edges[(i / 3) % edges.size()]);
      if (!values.empty()) values.back() = static_cast<T>(hi);
      const std::string what = std::string(to_string(scalar_type_of<T>())) + ", " + std::to_string(n) + " values, " +
                               std::to_string(bins) + " bins";
      expect_same(lib::histogram(backend(), values, bins, lo, hi), host_uniform(values, bins, lo, hi), what);
    }
  }
}

TEST(LibHistogram, F32AtEveryLengthAndBins) { check_every_length<float>(-800.0, 900.5, 10); }
TEST(LibHistogram, I32AtEveryLengthAndBins) { check_every_length<int32_t>(-1e9, 2e9 + 0.5, 11); }
TEST(LibHistogram, U32AtEveryLengthAndBins) { check_every_length<uint32_t>(1e6, 4e9, 12); }
TEST(LibHistogram, U8AtEveryLengthAndBins) { check_every_length<uint8_t>(10, 250.5, 13); }
TEST(LibHistogram, I8AtEveryLengthAndBins) { check_every_length<int8_t>(-100.25, 99, 14); }
TEST(LibHistogram, U16AtEveryLengthAndBins) { check_every_length<uint16_t>(0, 65535, 15); }
TEST(LibHistogram, I16AtEveryLengthAndBins) { check_every_length<int16_t>(-30000, 31000.75, 16); }

TEST(LibHistogram, EdgeValues) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // Edges 0, 0.25, 0.5, 0.75, 1: each value on an edge goes right, 1 in the
  // last bin; -0.0 is 0; NaN, infinities and values outside are left out.
  const std::vector<float> x = {0.0f, -0.0f, 0.25f, 0.5f, 0.75f, 1.0f, nan, -nan, inf, -inf, -1e-30f, 1.0000001f,
                                0.2499999f};
  const lib::Histogram h = lib::histogram(backend(), x, 4, 0.0, 1.0);
  EXPECT_EQ(h.counts, (std::vector<uint32_t>{3, 1, 1, 2}));
  EXPECT_EQ(h.outside, 6u);
  expect_same(h, host_uniform(x, 4, 0.0, 1.0), "edges");
  // Edges of f32: 0.1 rounds to the f32 nearest, and 0.1f itself is counted.
  const lib::Histogram tenth = lib::histogram(backend(), std::vector<float>{0.1f, 0.0999999f}, 1, 0.1, 1.0);
  EXPECT_EQ(tenth.counts, std::vector<uint32_t>{1});
  // Integer ranges at the extremes of their types, and values there.
  const std::vector<int32_t> ints = {INT32_MIN, INT32_MIN + 1, -1, 0, 1, INT32_MAX - 1, INT32_MAX};
  for (uint32_t bins : {1u, 2u, 3u, 7u, 4096u}) {
    expect_same(lib::histogram(backend(), ints, bins, INT32_MIN, INT32_MAX),
                host_uniform(ints, bins, INT32_MIN, INT32_MAX), "i32 extremes, " + std::to_string(bins));
    expect_same(lib::histogram(backend(), ints, bins, -0.5, 0.5), host_uniform(ints, bins, -0.5, 0.5), "i32 -0.5..0.5");
  }
  const std::vector<uint32_t> words = {0, 1, 2147483648u, UINT32_MAX - 1, UINT32_MAX};
  expect_same(lib::histogram(backend(), words, 5, 0, UINT32_MAX), host_uniform(words, 5, 0, UINT32_MAX), "u32 extremes");
  // A range beyond the type's: the thresholds are clamped to it.
  expect_same(lib::histogram(backend(), words, 9, -1e10, 1e10), host_uniform(words, 9, -1e10, 1e10), "u32 wide range");
  const std::vector<int8_t> bytes = {-128, -127, -1, 0, 1, 126, 127};
  for (uint32_t bins : {1u, 3u, 255u, 256u, 300u})
    expect_same(lib::histogram(backend(), bytes, bins, -128, 127), host_uniform(bytes, bins, -128, 127),
                "i8 extremes, " + std::to_string(bins));
  expect_same(lib::histogram(backend(), bytes, 10, -1000, 1000), host_uniform(bytes, 10, -1000, 1000), "i8 wide");
  // No integer in the range: nothing counted, every value outside.
  const lib::Histogram none = lib::histogram(backend(), bytes, 3, 0.25, 0.75);
  EXPECT_EQ(none.counts, (std::vector<uint32_t>{0, 0, 0}));
  EXPECT_EQ(none.outside, bytes.size());
  // lo == hi widens to [lo - 0.5, hi + 0.5], as NumPy.
  const lib::Histogram widened = lib::histogram(backend(), std::vector<int32_t>{2, 3, 3, 4}, 2, 3, 3);
  EXPECT_EQ(widened.counts, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(widened.outside, 2u);
  // Zero values: the bins, all zero.
  const lib::Histogram empty = lib::histogram(backend(), std::vector<float>{}, 5, 0, 1);
  EXPECT_EQ(empty.counts, std::vector<uint32_t>(5, 0));
  EXPECT_EQ(empty.outside, 0u);
}

TEST(LibHistogram, GivenEdges) {
  std::mt19937 rng(20);
  for (uint32_t bins : {1u, 5u, 300u, 5000u}) {
    // Sorted random edges, some of them repeated.
    std::vector<double> edges(bins + 1);
    std::uniform_real_distribution<double> pick(-900, 900);
    for (double& e : edges) e = pick(rng);
    for (size_t i = 1; i < edges.size(); i += 7) edges[i] = edges[i - 1];
    std::sort(edges.begin(), edges.end());
    std::vector<float> f = values_around<float>(50000, -1000, 1000, bins);
    for (size_t i = 0; i < edges.size() && i < f.size(); ++i) f[i] = static_cast<float>(edges[i]);
    f.push_back(std::numeric_limits<float>::quiet_NaN());
    // f32 values against f64 edges: compared in f64, exactly.
    expect_same(lib::histogram(backend(), f, std::span<const double>(edges)), host_histogram<double>(f, edges),
                "f32, given " + std::to_string(bins));
    std::vector<int16_t> s = values_around<int16_t>(50000, -1000, 1000, bins + 1);
    expect_same(lib::histogram(backend(), s, std::span<const double>(edges)), host_histogram<double>(s, edges),
                "i16, given " + std::to_string(bins));
  }
  // Infinite edges take everything but NaN; the last bin takes its right edge.
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> open = {-inf, 0, inf};
  const lib::Histogram h = lib::histogram(
      backend(), std::vector<float>{-1, 0, 1, static_cast<float>(inf), std::numeric_limits<float>::quiet_NaN()},
      std::span<const double>(open));
  EXPECT_EQ(h.counts, (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(h.outside, 1u);
  const std::vector<double> twos = {0, 2, 2, 3};  // numpy: [1, 0, 2] for [1, 2, 3]
  EXPECT_EQ(lib::histogram(backend(), std::vector<uint32_t>{1, 2, 3}, std::span<const double>(twos)).counts,
            (std::vector<uint32_t>{1, 0, 2}));
}

TEST(LibHistogram, ABufferOnTheGpuStaysThere) {
  const std::vector<float> x = values_around<float>(70000, -500, 500, 30);
  const lib::DeviceHistogram h = lib::histogram(backend(), backend().upload(x), 64, -400, 400);
  const lib::Histogram want = host_uniform(x, 64, -400, 400);
  EXPECT_EQ(h.counts->elements(), 64u);
  EXPECT_EQ(h.counts->read_as<uint32_t>(), want.counts);
  EXPECT_EQ(h.outside->read_as<uint32_t>(), std::vector<uint32_t>{want.outside});
}

TEST(LibHistogram, ShapesAndAGridBeyondOneAxis) {
  const std::vector<int32_t> x = values_around<int32_t>(140001, -5000, 5000, 31);
  const lib::Histogram want = host_uniform(x, 77, -4000, 4000);
  for (const lib::ReduceShape shape : {lib::ReduceShape{1, 2}, lib::ReduceShape{64, 1}, lib::ReduceShape{1024, 8}})
    expect_same(lib::histogram(backend(), x, 77, -4000, 4000, shape), want,
                std::to_string(shape.workgroup) + "x" + std::to_string(shape.items));
}

TEST(LibHistogram, OnePassIsTheReferenceInterpretersResult) {
  reference::RunChecks checks;
  checks.bounds = true;
  checks.races = true;
  for (uint32_t bins : {10u, 5000u}) {  // in workgroup memory and beyond it
    std::vector<float> x = values_around<float>(3000, -100, 100, 32);
    x[5] = std::numeric_limits<float>::quiet_NaN();
    for (size_t i = 10; i < 400; i += 13) x[i] = static_cast<float>(i % 120);  // on edges
    // Thresholds as the pass takes them: the keys of 0, 1, ..., bins - 1,
    // then of bins (the largest kept).
    std::vector<uint32_t> keys;
    for (uint32_t i = 0; i <= bins; ++i) keys.push_back(std::bit_cast<uint32_t>(static_cast<float>(i)) | 0x80000000u);
    const Program pass = lib::histogram_pass(ScalarType::F32, bins, lib::ReduceShape{64, 8});
    Inputs in;
    in.set<float>("values", x).set<uint32_t>("edges", keys).size("counts", bins).size("outside", 1);
    const Dim3 grid{6, 1, 1};
    const Outputs gpu_out = backend().compile(pass).dispatch(in, grid);
    const Outputs ref_out = reference::run(pass, in, {}, grid, checks);
    EXPECT_EQ(gpu_out.get<uint32_t>("counts"), ref_out.get<uint32_t>("counts"));
    EXPECT_EQ(gpu_out.get<uint32_t>("outside"), ref_out.get<uint32_t>("outside"));
    std::vector<double> edges;
    for (uint32_t i = 0; i <= bins; ++i) edges.push_back(i);
    const lib::Histogram want = host_histogram<float>(x, edges);
    EXPECT_EQ(ref_out.get<uint32_t>("counts"), want.counts);
    EXPECT_EQ(ref_out.get<uint32_t>("outside"), std::vector<uint32_t>{want.outside});
  }
}

TEST(LibHistogram, RefusalsSayWhy) {
  const auto message = [](auto f) { return test::invalid_input_message(f); };
  const std::vector<float> x = {1};
  EXPECT_NE(message([&] { lib::histogram(backend(), x, 0, 0, 1); }).find("at least one bin"), std::string::npos);
  EXPECT_NE(message([&] { lib::histogram(backend(), x, 4, 2, 1); }).find("low end 2 is above its high end 1"),
            std::string::npos);
  EXPECT_NE(message([&] { lib::histogram(backend(), x, 4, 0, std::numeric_limits<double>::infinity()); })
                .find("is not finite"),
            std::string::npos);
  EXPECT_NE(message([&] { lib::histogram(backend(), x, 4, std::nan(""), 1); }).find("is not finite"),
            std::string::npos);
  EXPECT_NE(message([&] { lib::histogram(backend(), x, 4, -1e308, 1e308); }).find("wider than f64 holds"),
            std::string::npos);
  EXPECT_NE(message([&] { lib::histogram(backend(), x, 4, 0, 1e39); }).find("beyond f32's"), std::string::npos);
  EXPECT_NE(message([&] { lib::histogram(backend(), x, 1000, 1, 1.00001); }).find("too many bins"),
            std::string::npos);
  const std::vector<double> unsorted = {0, 2, 1};
  EXPECT_NE(message([&] { lib::histogram(backend(), x, std::span<const double>(unsorted)); })
                .find("edge 2 (1) is below edge 1 (2)"),
            std::string::npos);
  const std::vector<double> one = {0};
  EXPECT_NE(message([&] { lib::histogram(backend(), x, std::span<const double>(one)); }).find("at least two edges"),
            std::string::npos);
  const std::vector<double> nan_edge = {0, std::nan("")};
  EXPECT_NE(message([&] { lib::histogram(backend(), x, std::span<const double>(nan_edge)); }).find("edge 1 is NaN"),
            std::string::npos);
  EXPECT_NE(message([] { lib::histogram(backend(), std::vector<double>{1}, 4, 0, 1); }).find("not f64"),
            std::string::npos);
  EXPECT_NE(message([] { lib::histogram(backend(), nullptr, 4, 0, 1); }).find("buffer is null"), std::string::npos);
}

}  // namespace
