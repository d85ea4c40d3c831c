// The operators of reduce and scan as IR: their identities, how two values
// combine, and which types and shapes they take. Shared by every primitive
// that folds with a ReduceOp.
#pragma once

#include <string_view>

#include "vyre/lib/reduce.hpp"
#include "vyre/program.hpp"

namespace vyre::lib::detail {

// Throws Error(invalid_input), naming `primitive`, for a type or an operator
// it does not take.
void check_type_and_op(std::string_view primitive, ScalarType type, ReduceOp op);

// Throws Error(invalid_input) for a shape out of range; `tile_elements` is
// the workgroup memory the pass keeps beside one element per invocation,
// which together must fit WebGPU's 16 KiB of workgroup storage.
void check_shape(std::string_view primitive, ScalarType type, const ReduceShape& shape, uint64_t tile_elements);

// An element of `type` as loaded from a buffer, as a value of
// accumulator_type(type): a bool as 0 or 1, an f16 converted (exactly) to f32.
Expr widened(ScalarType type, Expr loaded);

// The value that leaves every element as it is under `op`. A float sum's is
// -0.0, so that a sum of negative zeros stays -0.0, as in NumPy.
Expr identity(ScalarType type, ReduceOp op);

// The bits of identity(type, op), for a host-side buffer or result.
uint64_t identity_bits(ScalarType type, ReduceOp op);

// a `op` b. Float min and max give NaN when either is NaN, as NumPy's do.
Expr combine(ScalarType type, ReduceOp op, const Expr& a, const Expr& b);

}  // namespace vyre::lib::detail
