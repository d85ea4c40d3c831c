// The format's operators on 32-bit values, with WGSL's semantics exactly as
// docs/format-v1.md ("Semantics") and docs/program-format.md state them.
// Every value is its 32-bit pattern: u32 and i32 (two's complement) as they
// are, f32 as its IEEE bits, bool as 0 or 1.
#pragma once

#include <cstdint>

#include "vyre/program.hpp"

namespace vyre::scalar {

// `type` is the operands' type (for comparisons too).
uint32_t apply_binary(Op op, ScalarType type, uint32_t a, uint32_t b);
uint32_t apply_unary(Op op, ScalarType type, uint32_t a);
// fma and clamp; `select` needs no helper.
uint32_t apply_ternary(Op op, ScalarType type, uint32_t a, uint32_t b, uint32_t c);
uint32_t apply_cast(ScalarType from, ScalarType to, uint32_t a);
// The new value an atomic read-modify-write stores (exchange: the operand).
uint32_t apply_atomic(AtomicOp op, ScalarType type, uint32_t old_value, uint32_t operand);

}  // namespace vyre::scalar
