// vyre::lib::softmax on lavapipe: rows of 1 to 65,537 elements against a
// double-precision host softmax within the bound docs/lib.md derives; rows
// whose exact result is known to a few ulp (so that a missed or repeated
// element shows); large magnitudes; NaN and infinities as scipy.special.softmax
// gives them; every candidate shape; a buffer left on the GPU; the pass
// against the reference interpreter; refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>

#include "support/lib_inputs.hpp"
#include "support/lowering_backend.hpp"
#include "vyre/error.hpp"
#include "vyre/lib/softmax.hpp"
#include "vyre/reference.hpp"

using namespace vyre;

namespace {

gpu::Backend& backend() { return vyre::test::lowering_backend(); }

constexpr double kUnitRoundoff = 1.0 / (1 << 24);  // u = 2^-24
constexpr double kEps = 2 * kUnitRoundoff;         // 1 ulp relative, 2^-23
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
// Results below 2^-126 may be flushed, and exp's below it too.
constexpr double kSubnormal = 1.1754943508222875e-38;

// scipy.special.softmax's computation in double: exp(x - max) / sum, the
// max NaN when any element is; so +inf gives NaN (inf - inf), a row of
// -inf NaN (0 / 0), as scipy does.
std::vector<double> host_softmax(const std::vector<float>& x, uint32_t rows, uint32_t cols) {
  std::vector<double> out(x.size());
  for (uint32_t r = 0; r < rows; ++r) {
    const float* row = x.data() + size_t{r} * cols;
    double m = -std::numeric_limits<double>::infinity();
    for (uint32_t c = 0; c < cols; ++c) m = std::isnan(row[c]) || std::isnan(m) ? NAN : std::max(m, double{row[c]});
    double sum = 0;
    for (uint32_t c = 0; c < cols; ++c) sum += std::exp(row[c] - m);
    for (uint32_t c = 0; c < cols; ++c) out[size_t{r} * cols + c] = std::exp(row[c] - m) / sum;
  }
  return out;
}

// The relative error docs/lib.md derives for a row whose largest |x - max|
// among elements that matter is `spread`, summed in `depth` additions:
// each exp's argument rounded (u |d|) and exp itself (WGSL: 3 + 2|d| ulp),
// for the element and for the sum; the sum's additions; the division
// (2.5 ulp).
double relative_bound(double spread, uint32_t depth) {
  const double d = std::min(spread, 88.0);  // beyond, a term is below 2^-126 and counts in the absolute slack
  return 2 * (kUnitRoundoff * d + (3 + 2 * d) * kEps) + depth * kUnitRoundoff + 2.5 * kEps;
}

// The additions each element's share of the sum passes through at most:
// ceil(cols / lanes) in one invocation's loop and log2(lanes) in the tree.
uint32_t depth_of(uint32_t cols, uint32_t lanes) { return (cols + lanes - 1) / lanes + std::bit_width(lanes) - 1; }

// `lanes`: the shape's; none, the default's for this device.
void expect_softmax(const std::vector<float>& got, const std::vector<float>& x, uint32_t rows, uint32_t cols,
                    const std::string& what, std::optional<uint32_t> lanes = std::nullopt) {
  const uint32_t depth = depth_of(cols, lanes.value_or(lib::default_softmax_shape(backend(), cols).lanes));
  ASSERT_EQ(got.size(), x.size()) << what;
  const std::vector<double> want = host_softmax(x, rows, cols);
  size_t wrong = 0;
  for (uint32_t r = 0; r < rows; ++r) {
    double spread = 0;
    const float* row = x.data() + size_t{r} * cols;
    const float top = *std::max_element(row, row + cols);
    for (uint32_t c = 0; c < cols; ++c) spread = std::max(spread, std::abs(double{row[c]} - top));
    const double bound = relative_bound(spread, depth);
    for (uint32_t c = 0; c < cols; ++c) {
      const size_t i = size_t{r} * cols + c;
      const bool ok = std::isnan(want[i]) ? std::isnan(got[i]) : std::abs(got[i] - want[i]) <= bound * want[i] + kSubnormal;
      if (!ok && ++wrong <= 5)
        ADD_FAILURE() << what << ": out[" << r << "][" << c << "] = " << got[i] << ", want " << want[i]
                      << ", relative bound " << bound;
    }
  }
  EXPECT_EQ(wrong, 0u) << what;
}

std::vector<float> uniform(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = std::uniform_real_distribution<float>(lo, hi)(rng);
  return v;
}

TEST(LibSoftmax, EveryRowLength) {
  for (const uint32_t cols : {1u, 2u, 31u, 32u, 33u, 1000u, 65537u})
    for (const uint32_t rows : {1u, 3u, 70u}) {
      if (uint64_t{rows} * cols > 5'000'000) continue;
      const std::vector<float> x = uniform(size_t{rows} * cols, -10, 10, rows * 7 + cols);
      expect_softmax(lib::softmax(backend(), x, rows, cols), x, rows, cols,
                     std::to_string(rows) + "x" + std::to_string(cols));
    }
}

TEST(LibSoftmax, ResultsKnownToAFewUlp) {
  // Equal elements: exp(0) = 1 each, a sum of integers (exact), so each is
  // 1 / cols within exp's and the division's few ulp; a missed or repeated
  // element would be off by 1 / cols.
  for (const uint32_t cols : {1u, 2u, 33u, 1000u, 65537u}) {
    const std::vector<float> x(size_t{2} * cols, 3.5f);
    const std::vector<float> got = lib::softmax(backend(), x, 2, cols);
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], 1.0 / cols, 6 * kEps / cols) << cols << " at " << i;
  }
  // One element of 0 among -inf: exactly 1 there and 0 elsewhere; half 0,
  // half -inf: 2 / cols.
  const uint32_t cols = 1001;
  std::vector<float> x(size_t{2} * cols, -kInf);
  x[517] = 0;
  for (uint32_t c = 0; c < cols; c += 2) x[cols + c] = 0;
  const std::vector<float> got = lib::softmax(backend(), x, 2, cols);
  for (uint32_t c = 0; c < cols; ++c) {
    ASSERT_EQ(got[c], c == 517 ? 1.0f : 0.0f) << c;
    ASSERT_NEAR(got[cols + c], c % 2 == 0 ? 1.0 / 501 : 0.0, 6 * kEps / 501) << c;
  }
}

TEST(LibSoftmax, LargeMagnitudesDoNotOverflow) {
  const std::vector<float> x = {1000, 999, -1000, 1000, -1000, -999, -1000, -1000, 88, 89, 87, -50};
  const std::vector<float> got = lib::softmax(backend(), x, 3, 4);
  expect_softmax(got, x, 3, 4, "large");
  for (float v : got) EXPECT_TRUE(std::isfinite(v));
  EXPECT_NEAR(got[4 + 1], 1 / (1 + 3 * std::exp(-1.0)), 1e-6);  // -999 among -1000s
}

TEST(LibSoftmax, NanAndInfinitiesAsScipy) {
  // Rows: a NaN; a +inf (inf - inf is NaN); only -inf (0 / 0); -inf among
  // finite values (0 there); +inf twice; -inf and +inf.
  const uint32_t rows = 6, cols = 3;
  const std::vector<float> layout = {
      1,     kNan, 2,      // NaN
      -kInf, -kInf, -kInf,  // NaN
      0,     -kInf, 1,      // 0 at the -inf
      3,     kInf, -kInf,   // NaN
      kInf,  kInf, 1,       // NaN
      1,     2,    kInf,    // NaN
  };
  const std::vector<float> got = lib::softmax(backend(), layout, rows, cols);
  expect_softmax(got, layout, rows, cols, "edge values");
  for (uint32_t r : {0u, 1u, 3u, 4u, 5u})
    for (uint32_t c = 0; c < cols; ++c) EXPECT_TRUE(std::isnan(got[r * cols + c])) << r << " " << c;
  EXPECT_EQ(got[2 * cols + 1], 0.0f);
  EXPECT_NEAR(got[2 * cols + 2], 1 / (1 + std::exp(-1.0)), 1e-6);
}

TEST(LibSoftmax, EveryCandidateShape) {
  for (const uint32_t cols : {5u, 100u}) {
    const std::vector<float> x = uniform(size_t{37} * cols, -20, 20, cols);
    for (const lib::SoftmaxShape& s : lib::softmax_candidates(cols))
      expect_softmax(lib::softmax(backend(), x, 37, cols, s), x, 37, cols,
                     std::to_string(cols) + " at " + std::to_string(s.workgroup) + "/" + std::to_string(s.lanes),
                     s.lanes);
  }
  // Shapes beyond the candidates: one invocation a row, and 256 lanes on short rows.
  const std::vector<float> x = uniform(size_t{300} * 7, -5, 5, 9);
  for (const lib::SoftmaxShape s : {lib::SoftmaxShape{1, 1}, lib::SoftmaxShape{256, 256}, lib::SoftmaxShape{32, 2}})
    expect_softmax(lib::softmax(backend(), x, 300, 7, s), x, 300, 7, "7 at " + std::to_string(s.workgroup), s.lanes);
}

TEST(LibSoftmax, ManyRowsOnAGridBeyondOneAxis) {
  // 70,000 rows of 3 at one row a workgroup: 70,000 workgroups, on two axes.
  const uint32_t rows = 70000, cols = 3;
  const std::vector<float> x = uniform(size_t{rows} * cols, -3, 3, 10);
  expect_softmax(lib::softmax(backend(), x, rows, cols, lib::SoftmaxShape{4, 4}), x, rows, cols, "70000 rows", 4);
}

TEST(LibSoftmax, ZeroSizesAndABufferOnTheGpu) {
  const std::vector<float> none;
  EXPECT_TRUE(lib::softmax(backend(), none, 0, 5).empty());
  EXPECT_TRUE(lib::softmax(backend(), none, 5, 0).empty());
  const std::vector<float> x = uniform(size_t{20} * 30, -4, 4, 11);
  const std::shared_ptr<gpu::DeviceBuffer> p = lib::softmax(backend(), backend().upload(x), 20, 30);
  EXPECT_EQ(p->type(), ScalarType::F32);
  expect_softmax(p->read_as<float>(), x, 20, 30, "on the GPU");
}

TEST(LibSoftmax, ThePassIsTheReferenceInterpretersResult) {
  const uint32_t rows = 9, cols = 45;
  const std::vector<float> x = uniform(size_t{rows} * cols, -6, 6, 12);
  const lib::SoftmaxShape shape{64, 16};
  const Program pass = lib::softmax_pass(shape);
  Inputs in;
  in.set<float>("x", x).set<uint32_t>("dims", {rows, cols}).size("out", rows * cols);
  const Dim3 grid{3, 1, 1};  // 4 rows a workgroup
  const std::vector<float> gpu = backend().compile(pass).dispatch(in, grid).get<float>("out");
  const std::vector<float> ref = reference::run(pass, in, {}, grid).get<float>("out");
  expect_softmax(gpu, x, rows, cols, "gpu pass", shape.lanes);
  expect_softmax(ref, x, rows, cols, "reference pass", shape.lanes);
  // The two differ only by their exp and division: a few ulp.
  for (size_t i = 0; i < gpu.size(); ++i) EXPECT_NEAR(gpu[i], ref[i], 1e-5 * ref[i]) << i;
}

TEST(LibSoftmax, RefusalsSayWhy) {
  const auto message = [](auto f) { return test::invalid_input_message(f); };
  const auto has = [](const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; };
  const std::vector<float> x(6, 1.0f);
  EXPECT_TRUE(has(message([&] { lib::softmax(backend(), x, 4, 2); }),
                  "6 elements, but rows = 4 and cols = 2 need rows * cols = 8"));
  EXPECT_TRUE(has(message([&] { lib::softmax(backend(), backend().upload(std::vector<int32_t>(6)), 2, 3); }),
                  "f32 elements, not i32"));
  EXPECT_TRUE(has(message([&] { lib::softmax(backend(), nullptr, 2, 3); }), "null"));
  EXPECT_TRUE(has(message([] { lib::softmax_pass({512, 512}); }), "from 1 to 256"));
  EXPECT_TRUE(has(message([] { lib::softmax_pass({64, 128}); }), "lanes is a power of two from 1 to the workgroup"));
  EXPECT_TRUE(has(message([] { lib::softmax_pass({64, 3}); }), "lanes is a power of two"));
}

}  // namespace
