// Measuring the lowering's approximate forms (src/lower/approximate_forms.hpp):
// a dense sample of a form's domain, the exact value in double precision,
// the error in ULP, and the programs that apply an operator to the sample
// and that time it. Shared by the accuracy tests and the figures.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lower/approximate_forms.hpp"
#include "vyre/checked.hpp"

namespace vyre::samples {

// Operands spread over the form's domain: the normal floats of each of its
// intervals visited in steps of equal bit distance (so evenly in each
// binade), about `n` in all.
std::vector<float> form_sample(const lowering::ApproximateForm& form, size_t n);

// Operands between the form's two intervals (none when it has one), spread
// as form_sample spreads them.
std::vector<float> gap_sample(const lowering::ApproximateForm& form, size_t n);

// The operator's value in double precision.
double exact_value(Op op, double x);

// |got - exact| in units of the f32 spacing at |exact| (at least that of the
// smallest normal). Infinite for a NaN or infinite `got` against a finite
// exact value.
double ulp_error(float got, double exact);

// The largest ulp_error of `results` over `operands` (in the same order).
double max_ulp_error(Op op, const std::vector<float>& operands, const std::vector<float>& results);

// The largest |result - exact| over `operands`.
double max_abs_error(Op op, const std::vector<float>& operands, const std::vector<float>& results);

// out[i] = op(x[i]), one element per invocation, for a unary operator.
CheckedProgram operator_program(Op op);

// out[i] = the sum of op(x[i] * c^k) for k in [0, kOperatorRepeats), c just
// below 1: arithmetic-bound, so that a kernel's time is the operator's.
CheckedProgram operator_throughput_program(Op op);
inline constexpr uint32_t kOperatorRepeats = 64;

}  // namespace vyre::samples
