// Sample programs built with the C++ builder, shared by the benchmarks and
// the tests (one definition of each, so both measure and check the same).
#pragma once

#include <cstdint>
#include <string>

#include "vyre/checked.hpp"
#include "vyre/dispatch.hpp"
#include "vyre/program.hpp"

namespace vyre::samples {

// out[i] = a[i] ^ b[i], the spec's example: the tiny kernel of the overhead
// figures.
CheckedProgram xor_program(std::string name = "xor");

// y[i] = alpha * x[i] + y[i], in place, one element per invocation; the grid
// spreads over x and y so that 2^26 and more elements fit the per-axis limit.
CheckedProgram saxpy_program();
inline constexpr uint32_t kSaxpyWorkgroup = 256;
Dim3 saxpy_grid(uint64_t elements);

// y[i] = x[i], indexed as saxpy is: the bandwidth a compute kernel reaches.
CheckedProgram copy_program();

// A chain of `statements` arithmetic statements over one loaded value: a
// large program, whose lowering is a real share of a cold start.
CheckedProgram chain_program(int statements);

// Three kernels that read nothing of their workgroup (only gid), so tuning
// may re-tile them (docs/tuning.md); examples/ has workgroup-memory forms.
//
// The first stage of a sum: partial[i] = x[i] + x[i + P] + ... over
// kPartialSumTerms terms, P = len(partial); neighbours read neighbours.
CheckedProgram partial_sum_program();
inline constexpr uint32_t kPartialSumTerms = 64;

// c (M x N) = a (M x K) times b (K x N), row-major, dims = [M, N, K]: one
// element of c per invocation, at row gid.y and column gid.x; workgroups of
// 8 x 8, grid [N / 8, M / 8].
CheckedProgram matmul_program();

// y = softmax of each row of x (dims[0] elements per row), one row per
// invocation: the row's maximum, the sum of exp(x - max), then each value.
CheckedProgram softmax_rows_program();

// A 1-D stencil unrolled by the C++ builder, as generated kernels are:
// out[i] = the sum over `taps` taps t of x[i + t * kStencilStride] * w_t,
// each read checked against len(x). The builder writes each offset and
// weight as the constant expression it comes from (t * stride, the weight's
// numerator over its denominator), which the lowering's constant folding
// settles. x holds len(out) + taps * kStencilStride elements.
CheckedProgram stencil_program(int taps);
inline constexpr uint32_t kStencilStride = 64;

}  // namespace vyre::samples
