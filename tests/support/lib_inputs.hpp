// Inputs for the standard kernels' tests: the lengths where passes and
// partial workgroups change, random values from a fixed seed, and the
// message of a refusal.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "vyre/error.hpp"

namespace vyre::test {

inline const std::vector<uint32_t> kLibLengths = {1, 31, 32, 33, 1000, 65537, (1u << 20) + 3};

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
