// Inputs for the standard kernels' tests: the lengths where passes and
// partial workgroups change, random values from a fixed seed, and the
// message of a refusal.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "vyre/error.hpp"
#include "vyre/half.hpp"
#include "support/test_support.hpp"
#include "vyre/lib/reduce.hpp"

namespace vyre::test {

inline const std::vector<uint32_t> kLibLengths = {1, 31, 32, 33, 1000, 65537, (1u << 20) + 3};

// The lengths of the sweeps over many shapes, types and bins (sort, compact,
// find, histogram, bincount): all of kLibLengths, less the million in the
// sanitized builds, where those sweeps' million-element cases took most of
// ten minutes of test time. scan and reduce, whose plans there have more
// than one level, keep it in every build.
inline const std::vector<uint32_t> kLibSweepLengths = [] {
  std::vector<uint32_t> lengths = kLibLengths;
  if (kSanitizedBuild) lengths.pop_back();
  return lengths;
}();

// Integers over their whole range; floats in [-1000, 1000).
template <class T>
std::vector<T> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_floating_point_v<T>)
      x = static_cast<T>(std::uniform_real_distribution<double>(-1000.0, 1000.0)(rng));
    else
      x = static_cast<T>(rng());
  }
  return v;
}

// n elements of a narrow, bool or f16 type from a fixed seed, and each
// widened to its accumulator (lib::accumulator_t): f16 as eighths of at most
// 1000, whose f32 sums of up to 2^17 terms are exact; bools a third true.
template <class T>
struct Widened {
  std::unique_ptr<T[]> x;  // not a vector: std::vector<bool> holds no bools
  std::vector<lib::accumulator_t<T>> wide;
};
template <class T>
Widened<T> widened_values(uint32_t n, uint32_t seed) {
  const std::vector<uint32_t> raw = random_values<uint32_t>(n, seed);
  Widened<T> out{std::unique_ptr<T[]>(new T[n]), std::vector<lib::accumulator_t<T>>(n)};
  for (uint32_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, half>) {
      out.x[i] = to_half(static_cast<double>(static_cast<int32_t>(raw[i] % 2001) - 1000) / 8);
      out.wide[i] = static_cast<float>(to_double(out.x[i]));
    } else if constexpr (std::is_same_v<T, bool>) {
      out.x[i] = raw[i] % 3 == 0;
      out.wide[i] = out.x[i] ? 1 : 0;
    } else {
      out.x[i] = static_cast<T>(raw[i]);
      out.wide[i] = static_cast<lib::accumulator_t<T>>(out.x[i]);
    }
  }
  return out;
}

// What `f` throws, as text, expecting Error(invalid_input); "no error" when
// it returns.
template <class F>
std::string invalid_input_message(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_input) << e.what();
    return e.what();
  }
  return "no error";
}

}  // namespace vyre::test
