// Random element-wise programs, shared by the widening and tuning tests:
// a u32 body over a[i], b[i], a gather from g, i itself and earlier locals,
// with plain and conditional stores, a store read back, and a loop.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "vyre/checked.hpp"
#include "vyre/program.hpp"

namespace vyre::test {

class ElementWise {
 public:
  explicit ElementWise(uint32_t seed) : rng_(seed) {}

  // Buffers a, b, g (inputs), out and c (outputs), workgroups of 64. With
  // `guarded` the body is `let i = gid.x; if (i < len(out)) { ... }`;
  // without it the bounds check is left out, so the program is not
  // element-wise and every invocation must have its element.
  CheckedProgram program(bool guarded = true);

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  Expr leaf();
  Expr value(int depth);

  std::mt19937 rng_;
  std::vector<std::string> locals_;
};

// n random u32 values from `seed`.
std::vector<uint32_t> words(uint32_t n, uint32_t seed);

}  // namespace vyre::test
