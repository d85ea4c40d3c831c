// The programs the benchmarks run, built with the C++ builder.
#pragma once

#include <cstdint>

#include "vyre/checked.hpp"
#include "vyre/dispatch.hpp"
#include "vyre/program.hpp"

namespace vyre::bench {

// out[i] = a[i] ^ b[i]: the tiny kernel of the overhead figures.
CheckedProgram xor_program();

// y[i] = alpha * x[i] + y[i], in place, one element per invocation; the grid
// spreads over x and y so that 2^26 and more elements fit the per-axis limit.
CheckedProgram saxpy_program();
inline constexpr uint32_t kSaxpyWorkgroup = 256;
Dim3 saxpy_grid(uint64_t elements);

// y[i] = x[i], indexed as saxpy is: the bandwidth a compute kernel reaches.
CheckedProgram copy_program();

// Saxpy on vec4<f32> elements, handwritten: for the diagnosis of where
// saxpy's time goes (WGSL that vyre's scalar IR cannot express).
extern const char* const kSaxpyVec4Wgsl;

// A chain of `statements` arithmetic statements over one loaded value: a
// large program, whose lowering is a real share of a cold start.
CheckedProgram chain_program(int statements);

}  // namespace vyre::bench
