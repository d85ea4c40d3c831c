// The format's operators, with WGSL's semantics exactly as
// docs/format-v1.md ("Semantics") and docs/program-format.md state them.
// Every value is its bit pattern in the low bits of a 64-bit word: u32 and
// i32 (two's complement) as they are, f32, f16 and f64 as their IEEE bits,
// bool as 0 or 1. Results keep the bits above the type's width zero.
#pragma once

#include <cstdint>

#include "vyre/program.hpp"

namespace vyre::scalar {

// `type` is the operands' type (for comparisons too).
uint64_t apply_binary(Op op, ScalarType type, uint64_t a, uint64_t b);
uint64_t apply_unary(Op op, ScalarType type, uint64_t a);
// fma and clamp; `select` needs no helper.
uint64_t apply_ternary(Op op, ScalarType type, uint64_t a, uint64_t b, uint64_t c);
uint64_t apply_cast(ScalarType from, ScalarType to, uint64_t a);
// The new value an atomic read-modify-write stores (exchange: the operand);
// atomics are on u32 and i32 only.
uint32_t apply_atomic(AtomicOp op, ScalarType type, uint32_t old_value, uint32_t operand);

}  // namespace vyre::scalar
