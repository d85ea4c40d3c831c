// `vyre lib matmul`, `transpose` and `softmax` end to end, as a separate
// process on the real device: values on the command line and raw files in
// and out, against host computations; the refusals, each with its exit code
// (docs/cli.md).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "support/cli_lib.hpp"
#include "support/test_support.hpp"

using vyre::test::cache_in;
using vyre::test::contains;
using vyre::test::expect_refusals;
using vyre::test::read_file;
using vyre::test::run_vyre;
using vyre::test::TempDir;
using vyre::test::write_file;

namespace {

std::string bytes_of(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

std::vector<float> floats_of(const std::string& bytes) {
  std::vector<float> out(bytes.size() / sizeof(float));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = std::uniform_real_distribution<float>(-2, 2)(rng);
  return v;
}

TEST(CliLibMatrix, ValuesOnTheCommandLine) {
  TempDir tmp;
  // [[1, 2, 3], [4, 5, 6]] times [[1, 0], [0, 1], [2, -1]]: small integers, exact.
  auto r = run_vyre({"lib", "matmul", "--input", "a=1,2,3,4,5,6", "--input", "b=1,0,0,1,2,-1", "--m", "2", "--n", "2",
                     "--k", "3"},
                    cache_in(tmp));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[7.0, -1.0, 16.0, -1.0]\n");
  EXPECT_EQ(r.err, "");
  r = run_vyre({"lib", "matmul", "--input", "a=1,2", "--input", "b=3,4", "--m", "2", "--n", "2", "--k", "1", "--json",
                "--shape", "16,16,16,1,1"},
               cache_in(tmp));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["primitive"], "matmul");
  EXPECT_EQ(j["result"], nlohmann::json::parse("[3.0, 4.0, 6.0, 8.0]"));
  EXPECT_EQ(j["rows"], 2);
  EXPECT_EQ(j["cols"], 2);
  EXPECT_EQ(j["shapes"][0]["source"], "given");
  EXPECT_EQ(j["shapes"][0]["shape"], "tile_m=16 tile_n=16 tile_k=16 thread_m=1 thread_n=1");
  // K = 0: zeros.
  r = run_vyre({"lib", "matmul", "--input", "a=", "--input", "b=", "--m", "1", "--n", "2", "--k", "0"}, cache_in(tmp));
  EXPECT_EQ(r.out, "[0.0, 0.0]\n") << r.err;

  r = run_vyre({"lib", "transpose", "--input", "x=1,2,3,4,5,6", "--rows", "2", "--cols", "3"}, cache_in(tmp));
  EXPECT_EQ(r.out, "[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]\n") << r.err;
  r = run_vyre({"lib", "transpose", "--input", "x=200,7,255,0,1,9", "--rows", "3", "--cols", "2", "--dtype", "u8"},
               cache_in(tmp));
  EXPECT_EQ(r.out, "[200, 255, 1, 7, 0, 9]\n") << r.err;
  r = run_vyre({"lib", "transpose", "--input", "x=1,-2,3,-4", "--rows", "1", "--cols", "4", "--dtype", "i32", "--json"},
               cache_in(tmp));
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["result"], nlohmann::json::parse("[1, -2, 3, -4]")) << r.err;
  EXPECT_EQ(j["dtype"], "i32");
  EXPECT_EQ(j["rows"], 4);
  EXPECT_EQ(j["cols"], 1);

  // Rows [0, 0] and [1000, -inf]: halves, and 1 and 0; [nan, 1]: NaN.
  r = run_vyre({"lib", "softmax", "--input", "x=0,0,1000,-inf,nan,1", "--rows", "3", "--cols", "2"}, cache_in(tmp));
  EXPECT_EQ(r.out, "[0.5, 0.5, 1.0, 0.0, \"nan\", \"nan\"]\n") << r.err;
}

TEST(CliLibMatrix, RawFilesInAndOut) {
  TempDir tmp;
  const uint32_t m = 37, n = 29, k = 45;
  const std::vector<float> a = random_floats(size_t{m} * k, 1);
  const std::vector<float> b = random_floats(size_t{k} * n, 2);
  write_file(tmp / "a.bin", bytes_of(a));
  write_file(tmp / "b.bin", bytes_of(b));
  auto r = run_vyre({"lib", "matmul", "--input", "a=@" + (tmp / "a.bin").string(), "--input",
                     "b=@" + (tmp / "b.bin").string(), "--m", std::to_string(m), "--n", std::to_string(n), "--k",
                     std::to_string(k), "--output", (tmp / "c.bin").string()},
                    cache_in(tmp));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  const std::vector<float> c = floats_of(read_file(tmp / "c.bin"));
  ASSERT_EQ(c.size(), size_t{m} * n);
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t j = 0; j < n; ++j) {
      double exact = 0, magnitude = 0;
      for (uint32_t p = 0; p < k; ++p) {
        exact += double{a[i * k + p]} * b[p * n + j];
        magnitude += std::abs(double{a[i * k + p]} * b[p * n + j]);
      }
      ASSERT_LE(std::abs(c[i * n + j] - exact), k * 0x1p-23 * magnitude) << i << " " << j;
    }

  r = run_vyre({"lib", "transpose", "--input", "x=@" + (tmp / "a.bin").string(), "--rows", std::to_string(m),
                "--cols", std::to_string(k), "--output", (tmp / "t.bin").string()},
               cache_in(tmp));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<float> t = floats_of(read_file(tmp / "t.bin"));
  ASSERT_EQ(t.size(), a.size());
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t p = 0; p < k; ++p) ASSERT_EQ(t[p * m + i], a[i * k + p]) << i << " " << p;

  r = run_vyre({"lib", "softmax", "--input", "x=@" + (tmp / "a.bin").string(), "--rows", std::to_string(m), "--cols",
                std::to_string(k), "--output", (tmp / "p.bin").string(), "--verbose"},
               cache_in(tmp));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "softmax f32, rows 2^6 cols 2^6: workgroup=")) << r.err;
  const std::vector<float> p = floats_of(read_file(tmp / "p.bin"));
  ASSERT_EQ(p.size(), a.size());
  for (uint32_t i = 0; i < m; ++i) {
    double top = -INFINITY, sum = 0;
    for (uint32_t q = 0; q < k; ++q) top = std::max(top, double{a[i * k + q]});
    for (uint32_t q = 0; q < k; ++q) sum += std::exp(a[i * k + q] - top);
    for (uint32_t q = 0; q < k; ++q) {
      const double want = std::exp(a[i * k + q] - top) / sum;
      ASSERT_NEAR(p[i * k + q], want, 1e-5 * want) << i << " " << q;
    }
  }
}

TEST(CliLibMatrix, RefusalsNameTheFlag) {
  TempDir tmp;
  write_file(tmp / "odd.bin", "123456");
  const std::vector<vyre::test::Refusal> cases = {
      {{"lib", "matmul", "--input", "a=1,2", "--input", "b=1,2", "--m", "1", "--n", "1", "--k", "3"}, 3,
       "A has 2 elements but M = 1, N = 1, K = 3 needs M * K = 3"},
      {{"lib", "matmul", "--input", "a=1,2", "--m", "1", "--n", "1", "--k", "2"}, 3, "give --input b="},
      {{"lib", "matmul", "--input", "a=1", "--input", "c=1", "--m", "1", "--n", "1", "--k", "1"}, 3,
       "'c=1' is not NAME=V1,V2,... or NAME=@FILE with NAME a and b"},
      {{"lib", "matmul", "--input", "a=1", "--input", "b=1", "--m", "1", "--n", "1"}, 2, "--k is required"},
      {{"lib", "matmul", "--input", "a=1", "--input", "b=1", "--m", "1", "--n", "1", "--k", "1", "--shape", "64,64,8"},
       3, "is not TILE_M,TILE_N,TILE_K,THREAD_M,THREAD_N (5 counts, as 128,128,8,8,8)"},
      {{"lib", "matmul", "--input", "a=1", "--input", "b=1", "--m", "1", "--n", "1", "--k", "1", "--shape",
        "64,64,8,3,4"},
       3, "thread_m and thread_n are 1, 2, 4 or 8"},
      {{"lib", "matmul", "--input", "a=@" + (tmp / "odd.bin").string(), "--input", "b=1", "--m", "1", "--n", "1", "--k",
        "1"},
       3, "6 bytes are not whole f32 elements"},
      {{"lib", "transpose", "--input", "x=1,2,3", "--rows", "2", "--cols", "2"}, 3,
       "3 elements, but rows = 2 and cols = 2 need rows * cols = 4"},
      {{"lib", "transpose", "--input", "x=1", "--rows", "1", "--cols", "1", "--dtype", "u64"}, 3,
       "--dtype: 'u64' is not one of"},
      {{"lib", "transpose", "--input", "x=1", "--rows", "1", "--cols", "1", "--shape", "64,4"}, 3, "tile is 8, 16 or 32"},
      {{"lib", "softmax", "--input", "x=1,2", "--rows", "1"}, 2, "--cols is required"},
      {{"lib", "softmax", "--input", "x=1,2", "--rows", "1", "--cols", "2", "--shape", "64"}, 3,
       "is not WORKGROUP,LANES (2 counts, as 256,64)"},
      {{"lib", "softmax", "--input", "x=1,2", "--rows", "1", "--cols", "2", "--shape", "64,128"}, 3,
       "lanes is a power of two from 1 to the workgroup"},
  };
  expect_refusals(cases, cache_in(tmp));
  const auto help = run_vyre({"lib", "matmul", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(contains(help.out, "--shape"));
}

}  // namespace
