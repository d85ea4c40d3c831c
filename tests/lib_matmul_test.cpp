// vyre::lib::matmul on lavapipe: shapes where tiles are partial, K is not a
// multiple of tile_k or is 1, and a long K, against a double-precision host
// product within the documented bound; every candidate shape; NaN and
// infinities; zero-sized dimensions; a buffer left on the GPU; the pass
// against the reference interpreter; refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "support/lib_inputs.hpp"
#include "support/lowering_backend.hpp"
#include "vyre/error.hpp"
#include "vyre/lib/matmul.hpp"
#include "vyre/reference.hpp"

using namespace vyre;
using test::random_values;

namespace {

gpu::Backend& backend() { return vyre::test::lowering_backend(); }

constexpr double kEps = 1.0 / (1 << 23);  // f32's machine epsilon, 2^-23

struct Problem {
  uint32_t m, n, k;
};

std::string text(const Problem& p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
}

std::string text(const lib::MatmulShape& s) {
  return std::to_string(s.tile_m) + "x" + std::to_string(s.tile_n) + "x" + std::to_string(s.tile_k) + " t" +
         std::to_string(s.thread_m) + "x" + std::to_string(s.thread_n);
}

// Every element of `c` against the product in double: within
// K * eps * sum_k |A_ik B_kj| (recursive summation of K products, each
// rounded, fused or not), plus a little for a product that is subnormal;
// NaN where the product is NaN, the same infinity where it is one.
void expect_product(const std::vector<float>& c, const std::vector<float>& a, const std::vector<float>& b,
                    const Problem& p, const std::string& what) {
  ASSERT_EQ(c.size(), size_t{p.m} * p.n) << what;
  constexpr double kSubnormalSlack = 1e-36;
  size_t wrong = 0;
  for (uint32_t i = 0; i < p.m; ++i)
    for (uint32_t j = 0; j < p.n; ++j) {
      double exact = 0;
      double magnitude = 0;
      for (uint32_t k = 0; k < p.k; ++k) {
        const double product = double{a[size_t{i} * p.k + k]} * double{b[size_t{k} * p.n + j]};
        exact += product;
        magnitude += std::abs(product);
      }
      const double got = c[size_t{i} * p.n + j];
      const bool ok = std::isnan(exact)   ? std::isnan(got)
                      : std::isinf(exact) ? got == exact
                                          : std::abs(got - exact) <= p.k * kEps * magnitude + kSubnormalSlack;
      if (!ok && ++wrong <= 5)
        ADD_FAILURE() << what << ": C[" << i << "][" << j << "] = " << got << ", exact " << exact << ", bound "
                      << p.k * kEps * magnitude;
    }
  EXPECT_EQ(wrong, 0u) << what;
}

void check(const Problem& p, const std::optional<lib::MatmulShape>& shape = std::nullopt, uint32_t seed = 1) {
  const std::vector<float> a = random_values<float>(size_t{p.m} * p.k, seed + p.m);
  const std::vector<float> b = random_values<float>(size_t{p.k} * p.n, seed + p.n + 7);
  const std::string what = text(p) + (shape ? " at " + text(*shape) : std::string());
  expect_product(lib::matmul(backend(), a, b, p.m, p.n, p.k, shape), a, b, p, what);
}

TEST(LibMatmul, ShapesWithPartialTiles) {
  for (const Problem p : {Problem{1, 1, 1}, Problem{1, 1000, 1}, Problem{1000, 1, 3}, Problem{31, 33, 17},
                          Problem{64, 64, 64}, Problem{65, 129, 257}, Problem{256, 256, 256}, Problem{40, 50, 1}})
    check(p);
}

TEST(LibMatmul, ALongK) {
  check({3, 70, 4096});
  // Past lavapipe's 65,535 loop iterations an invocation, had the products a loop of their own.
  check({2, 3, 70000}, lib::MatmulShape{32, 32, 8, 4, 4});
}

TEST(LibMatmul, EveryCandidateShape) {
  for (const lib::MatmulShape& s : lib::matmul_candidates()) check({67, 45, 29}, s, 3);
  // A problem of whole tiles only, for the unguarded path of every shape.
  for (const lib::MatmulShape& s : lib::matmul_candidates()) check({128, 128, 32}, s, 4);
}

TEST(LibMatmul, TheDefaultIsACandidateAndEveryCandidateIsValid) {
  for (const lib::MatmulShape& s : lib::matmul_candidates()) EXPECT_NO_THROW(lib::matmul_pass(s)) << text(s);
  const lib::MatmulShape d = lib::default_matmul_shape(backend());
  bool found = false;
  for (const lib::MatmulShape& s : lib::matmul_candidates()) found = found || s == d;
  EXPECT_TRUE(found) << text(d);
}

TEST(LibMatmul, NanAndInfinitiesPropagate) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Problem p{5, 6, 4};
  std::vector<float> a(size_t{p.m} * p.k);
  std::vector<float> b(size_t{p.k} * p.n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.5f * static_cast<float>(i % 5) + 0.25f;
  a[1 * p.k + 2] = nan;   // row 1 of C: NaN
  a[3 * p.k + 0] = inf;   // row 3: +-inf where B[0][j] is not 0...
  b[0 * p.n + 4] = 0.0f;  // ...and NaN at column 4 (inf * 0)
  b[2 * p.n + 5] = -inf;  // column 5: -inf times A[i][2], NaN in rows 1 and where inf meets -inf
  a[4 * p.k + 2] = 0.0f;  // C[4][5]: 0 * -inf is NaN
  const std::vector<float> c = lib::matmul(backend(), a, b, p.m, p.n, p.k);
  expect_product(c, a, b, p, "edge values");
  EXPECT_TRUE(std::isnan(c[1 * p.n + 0]));
  EXPECT_EQ(c[3 * p.n + 0], inf);
  EXPECT_TRUE(std::isnan(c[3 * p.n + 4]));
  EXPECT_TRUE(std::isnan(c[4 * p.n + 5]));
}

TEST(LibMatmul, ZeroSizedDimensions) {
  const std::vector<float> a = random_values<float>(12, 5);
  const std::vector<float> none;
  EXPECT_EQ(lib::matmul(backend(), none, none, 3, 4, 0), std::vector<float>(12, 0.0f));  // K = 0: zeros
  EXPECT_TRUE(lib::matmul(backend(), none, a, 0, 4, 3).empty());                         // M = 0
  EXPECT_TRUE(lib::matmul(backend(), a, none, 4, 0, 3).empty());                         // N = 0
  const auto zeros = lib::matmul(backend(), backend().upload(none), backend().upload(none), 2, 3, 0);
  EXPECT_EQ(zeros->read_as<float>(), std::vector<float>(6, 0.0f));
  EXPECT_EQ(lib::matmul(backend(), backend().upload(none), backend().upload(a), 0, 4, 3)->elements(), 0u);
}

TEST(LibMatmul, ABufferOnTheGpuStaysThere) {
  const Problem p{70, 20, 33};
  const std::vector<float> a = random_values<float>(size_t{p.m} * p.k, 6);
  const std::vector<float> b = random_values<float>(size_t{p.k} * p.n, 7);
  const std::shared_ptr<gpu::DeviceBuffer> c = lib::matmul(backend(), backend().upload(a), backend().upload(b), p.m, p.n, p.k);
  EXPECT_EQ(c->type(), ScalarType::F32);
  expect_product(c->read_as<float>(), a, b, p, "on the GPU");
  // C, still on the GPU, as the A of the next product: (A B) B^T-shaped.
  const std::vector<float> d = random_values<float>(size_t{p.n} * 9, 8);
  const std::vector<float> cd = lib::matmul(backend(), c, backend().upload(d), p.m, 9, p.n)->read_as<float>();
  expect_product(cd, c->read_as<float>(), d, {p.m, 9, p.n}, "chained");
}

TEST(LibMatmul, ThePassIsTheReferenceInterpretersResult) {
  // Small integers: every product and sum is exact in f32, so the GPU and the
  // reference agree to the bit, fused or not.
  const Problem p{37, 21, 19};
  std::vector<float> a(size_t{p.m} * p.k);
  std::vector<float> b(size_t{p.k} * p.n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i * 7 % 13) - 6);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(static_cast<int>(i * 5 % 11) - 5);
  const lib::MatmulShape shape{32, 16, 8, 4, 2};
  const Program pass = lib::matmul_pass(shape);
  Inputs in;
  in.set<float>("a", a).set<float>("b", b).set<uint32_t>("dims", {p.m, p.n, p.k}).size("c", p.m * p.n);
  const Dim3 grid{2 * 2, 1, 1};  // ceil(37 / 32) x ceil(21 / 16)
  const std::vector<float> gpu = backend().compile(pass).dispatch(in, grid).get<float>("c");
  EXPECT_EQ(gpu, reference::run(pass, in, {}, grid).get<float>("c"));
  expect_product(gpu, a, b, p, "the pass");
  // The public call with the same shape gives the same.
  EXPECT_EQ(lib::matmul(backend(), a, b, p.m, p.n, p.k, shape), gpu);
}

TEST(LibMatmul, RefusalsSayWhy) {
  const auto message = [](auto f) { return test::invalid_input_message(f); };
  const std::vector<float> a(6, 1.0f);
  const auto has = [](const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  };
  EXPECT_TRUE(has(message([&] { lib::matmul(backend(), a, a, 2, 2, 2); }),
                  "A has 6 elements but M = 2, N = 2, K = 2 needs M * K = 4"));
  EXPECT_TRUE(has(message([&] { lib::matmul(backend(), a, a, 2, 3, 3); }), "B has 6 elements but"));
  EXPECT_TRUE(has(message([&] {
                    lib::matmul(backend(), backend().upload(std::vector<uint32_t>(6)), backend().upload(a), 2, 3, 3);
                  }),
                  "f32 matrices; A is u32"));
  EXPECT_TRUE(has(message([&] { lib::matmul(backend(), nullptr, backend().upload(a), 2, 3, 3); }), "null"));
  EXPECT_TRUE(has(message([] { lib::matmul_pass({64, 64, 8, 16, 4}); }), "1, 2, 4 or 8"));
  EXPECT_TRUE(has(message([] { lib::matmul_pass({128, 128, 8, 4, 4}); }), "1024 invocations; WebGPU promises 256"));
  EXPECT_TRUE(has(message([] { lib::matmul_pass({128, 128, 16, 8, 8}); }), "16448 bytes of workgroup memory"));
  EXPECT_TRUE(has(message([] { lib::matmul_pass({48, 64, 8, 4, 4}); }), "powers of two"));
  EXPECT_TRUE(has(message([] { lib::matmul_pass({4, 64, 8, 8, 4}); }), "must fit"));
  EXPECT_TRUE(has(message([&] { lib::matmul(backend(), a, a, 2, 2, 3, lib::MatmulShape{64, 64, 8, 3, 4}); }),
                  "1, 2, 4 or 8"));
}

}  // namespace
