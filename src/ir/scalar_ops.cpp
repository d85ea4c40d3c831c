#include "ir/scalar_ops.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "vyre/half.hpp"

namespace vyre::scalar {
namespace {

float as_f32(uint32_t bits) { return std::bit_cast<float>(bits); }
uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }
int32_t as_i32(uint32_t bits) { return static_cast<int32_t>(bits); }
uint32_t bits_of(int32_t v) { return static_cast<uint32_t>(v); }

constexpr int32_t kMin = std::numeric_limits<int32_t>::min();

// Transcendentals are computed in double and rounded once: the oracle holds
// the best f32 answer, and GPUs are checked against WGSL's error bounds.
float via_double(double (*f)(double), float x) { return static_cast<float>(f(static_cast<double>(x))); }

uint32_t binary_u32(Op op, uint32_t a, uint32_t b) {
  switch (op) {
    case Op::Add: return a + b;
    case Op::Sub: return a - b;
    case Op::Mul: return a * b;
    case Op::Div: return b == 0 ? a : a / b;
    case Op::Rem: return b == 0 ? 0 : a % b;
    case Op::Min: return std::min(a, b);
    case Op::Max: return std::max(a, b);
    case Op::And: return a & b;
    case Op::Or: return a | b;
    case Op::Xor: return a ^ b;
    case Op::Shl: return a << (b & 31);
    case Op::Shr: return a >> (b & 31);
    case Op::Eq: return a == b;
    case Op::Ne: return a != b;
    case Op::Lt: return a < b;
    case Op::Le: return a <= b;
    case Op::Gt: return a > b;
    case Op::Ge: return a >= b;
    default: break;
  }
  throw std::logic_error("reference: bad u32 operator");
}

uint32_t binary_i32(Op op, uint32_t ua, uint32_t ub) {
  const int32_t a = as_i32(ua), b = as_i32(ub);
  switch (op) {
    // Wrapping arithmetic: compute on the bits.
    case Op::Add: return ua + ub;
    case Op::Sub: return ua - ub;
    case Op::Mul: return ua * ub;
    case Op::Div: return (b == 0 || (a == kMin && b == -1)) ? ua : bits_of(a / b);
    case Op::Rem: return (b == 0 || (a == kMin && b == -1)) ? 0 : bits_of(a % b);
    case Op::Min: return bits_of(std::min(a, b));
    case Op::Max: return bits_of(std::max(a, b));
    case Op::And: return ua & ub;
    case Op::Or: return ua | ub;
    case Op::Xor: return ua ^ ub;
    case Op::Shl: return ua << (ub & 31);
    case Op::Shr: return bits_of(a >> (ub & 31));  // arithmetic (C++20 defines it)
    case Op::Eq: return a == b;
    case Op::Ne: return a != b;
    case Op::Lt: return a < b;
    case Op::Le: return a <= b;
    case Op::Gt: return a > b;
    case Op::Ge: return a >= b;
    default: break;
  }
  throw std::logic_error("reference: bad i32 operator");
}

// The binary operators f32 and f64 share, in the type's own arithmetic:
// the result's bits (through `bits`), or nullopt for another operator.
template <class F, class Bits>
std::optional<uint64_t> shared_float_binary(Op op, F a, F b, Bits bits) {
  switch (op) {
    case Op::Add: return bits(a + b);
    case Op::Sub: return bits(a - b);
    case Op::Mul: return bits(a * b);
    case Op::Div: return bits(a / b);
    // WGSL: x % y = x - y * trunc(x / y).
    case Op::Rem: return bits(a - b * std::trunc(a / b));
    case Op::Min: return bits(std::fmin(a, b));
    case Op::Max: return bits(std::fmax(a, b));
    case Op::Eq: return a == b;
    case Op::Ne: return a != b;
    case Op::Lt: return a < b;
    case Op::Le: return a <= b;
    case Op::Gt: return a > b;
    case Op::Ge: return a >= b;
    default: return std::nullopt;
  }
}

uint32_t binary_f32(Op op, uint32_t ua, uint32_t ub) {
  const float a = as_f32(ua), b = as_f32(ub);
  if (auto r = shared_float_binary(op, a, b, [](float f) { return bits_of(f); })) return static_cast<uint32_t>(*r);
  switch (op) {
    case Op::Pow: return bits_of(static_cast<float>(std::pow(static_cast<double>(a), static_cast<double>(b))));
    case Op::Atan2: return bits_of(static_cast<float>(std::atan2(static_cast<double>(a), static_cast<double>(b))));
    default: break;
  }
  throw std::logic_error("reference: bad f32 operator");
}

uint32_t unary_f32(Op op, float x) {
  switch (op) {
    case Op::Neg: return bits_of(-x);
    case Op::Abs: return bits_of(std::fabs(x));
    case Op::Sqrt: return bits_of(via_double(std::sqrt, x));
    case Op::InverseSqrt: return bits_of(static_cast<float>(1.0 / std::sqrt(static_cast<double>(x))));
    case Op::Exp: return bits_of(via_double(std::exp, x));
    case Op::Exp2: return bits_of(via_double(std::exp2, x));
    case Op::Log: return bits_of(via_double(std::log, x));
    case Op::Log2: return bits_of(via_double(std::log2, x));
    case Op::Sin: return bits_of(via_double(std::sin, x));
    case Op::Cos: return bits_of(via_double(std::cos, x));
    case Op::Tan: return bits_of(via_double(std::tan, x));
    case Op::Tanh: return bits_of(via_double(std::tanh, x));
    case Op::Floor: return bits_of(std::floor(x));
    case Op::Ceil: return bits_of(std::ceil(x));
    case Op::Round: return bits_of(std::nearbyint(x));  // ties to even (the default rounding mode)
    case Op::Trunc: return bits_of(std::trunc(x));
    case Op::Fract: return bits_of(x - std::floor(x));
    default: break;
  }
  throw std::logic_error("reference: bad f32 unary operator");
}

// f16: the operands widened to f32 exactly, the operation done there, the
// result rounded once to binary16. For + - * / and sqrt that is the
// correctly rounded f16 result (f32's 24 bits are at least 2 x 11 + 2, so
// rounding twice cannot differ from rounding once); fma is done in double.
float as_f16(uint32_t bits) { return static_cast<float>(to_double(half{static_cast<uint16_t>(bits)})); }
uint32_t f16_bits_of(double v) { return to_half(v).bits; }
uint32_t f16_from_f32_bits(uint32_t f32_bits) { return f16_bits_of(as_f32(f32_bits)); }

uint32_t binary_f16(Op op, uint32_t ua, uint32_t ub) {
  const uint32_t r = binary_f32(op, bits_of(as_f16(ua)), bits_of(as_f16(ub)));
  switch (op) {
    case Op::Eq: case Op::Ne: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge: return r;
    default: return f16_from_f32_bits(r);
  }
}

uint32_t unary_f16(Op op, uint32_t a) {
  switch (op) {
    case Op::Neg: return a ^ 0x8000u;
    case Op::Abs: return a & 0x7fffu;
    default: return f16_from_f32_bits(unary_f32(op, as_f16(a)));
  }
}

uint32_t binary32(Op op, ScalarType type, uint32_t a, uint32_t b) {
  switch (op) {
    case Op::LAnd: return (a && b) ? 1 : 0;
    case Op::LOr: return (a || b) ? 1 : 0;
    default: break;
  }
  switch (type) {
    case ScalarType::U32: return binary_u32(op, a, b);
    case ScalarType::I32: return binary_i32(op, a, b);
    case ScalarType::F32: return binary_f32(op, a, b);
    case ScalarType::F16: return binary_f16(op, a, b);
    case ScalarType::Bool:
      if (op == Op::Eq) return a == b;
      if (op == Op::Ne) return a != b;
      break;
    default: break;  // storage types: no expression has one
  }
  throw std::logic_error("reference: bad operator for its type");
}

uint32_t unary32(Op op, ScalarType type, uint32_t a) {
  switch (op) {
    case Op::Not: return a ? 0 : 1;
    case Op::BitNot: return ~a;
    case Op::Popcount: return static_cast<uint32_t>(std::popcount(a));
    case Op::Clz: return static_cast<uint32_t>(std::countl_zero(a));
    case Op::Ctz: return static_cast<uint32_t>(std::countr_zero(a));
    case Op::ReverseBits: {
      uint32_t r = 0;
      for (int i = 0; i < 32; ++i) r |= ((a >> i) & 1u) << (31 - i);
      return r;
    }
    default: break;
  }
  if (type == ScalarType::F32) return unary_f32(op, as_f32(a));
  if (type == ScalarType::F16) return unary_f16(op, a);
  if (type == ScalarType::I32) {
    if (op == Op::Neg) return 0u - a;  // wraps: -MIN is MIN
    if (op == Op::Abs) return as_i32(a) < 0 ? 0u - a : a;
  }
  if (type == ScalarType::U32 && op == Op::Abs) return a;
  throw std::logic_error("reference: bad unary operator for its type");
}

uint32_t ternary32(Op op, ScalarType type, uint32_t a, uint32_t b, uint32_t c) {
  if (op == Op::Fma && type == ScalarType::F16)
    return f16_bits_of(std::fma(static_cast<double>(as_f16(a)), static_cast<double>(as_f16(b)), static_cast<double>(as_f16(c))));
  if (op == Op::Fma) return bits_of(std::fma(as_f32(a), as_f32(b), as_f32(c)));
  if (op == Op::Clamp) return binary32(Op::Min, type, binary32(Op::Max, type, a, b), c);
  throw std::logic_error("reference: bad ternary operator");
}

uint32_t cast32(ScalarType from, ScalarType to, uint32_t a) {
  if (from == to) return a;
  // f16 through f32, which holds every f16 exactly.
  if (from == ScalarType::F16) return cast32(ScalarType::F32, to, bits_of(as_f16(a)));
  if (to == ScalarType::F16) {
    switch (from) {
      case ScalarType::F32: return f16_from_f32_bits(a);
      case ScalarType::U32: return f16_bits_of(static_cast<double>(a));
      case ScalarType::I32: return f16_bits_of(static_cast<double>(as_i32(a)));
      default: return f16_bits_of(a ? 1.0 : 0.0);  // bool
    }
  }
  if (to == ScalarType::Bool) return from == ScalarType::F32 ? (as_f32(a) != 0.0f ? 1 : 0) : (a != 0 ? 1 : 0);
  if (from == ScalarType::Bool) return to == ScalarType::F32 ? bits_of(a ? 1.0f : 0.0f) : (a ? 1u : 0u);
  if (from == ScalarType::F32) {
    const float x = as_f32(a);
    if (std::isnan(x)) return 0;
    if (to == ScalarType::U32) {
      if (x >= 4294967296.0f) return 0xffffffffu;
      if (x <= 0.0f) return 0;
      return static_cast<uint32_t>(x);
    }
    if (x >= 2147483648.0f) return bits_of(std::numeric_limits<int32_t>::max());
    if (x <= -2147483648.0f) return bits_of(kMin);
    return bits_of(static_cast<int32_t>(x));
  }
  if (to == ScalarType::F32) return from == ScalarType::U32 ? bits_of(static_cast<float>(a)) : bits_of(static_cast<float>(as_i32(a)));
  return a;  // u32 <-> i32 keeps the bits
}

// ---- f64: binary64 in the host's double, every operation rounded once ----

double as_f64(uint64_t bits) { return std::bit_cast<double>(bits); }
uint64_t bits64(double d) { return std::bit_cast<uint64_t>(d); }

uint64_t binary_f64(Op op, uint64_t ua, uint64_t ub) {
  // Validation refuses pow and atan2 for f64: the shared operators are all.
  if (auto r = shared_float_binary(op, as_f64(ua), as_f64(ub), [](double d) { return bits64(d); })) return *r;
  throw std::logic_error("reference: bad f64 operator");
}

uint64_t unary_f64(Op op, double x) {
  switch (op) {
    case Op::Neg: return bits64(-x);
    case Op::Abs: return bits64(std::fabs(x));
    case Op::Sqrt: return bits64(std::sqrt(x));
    case Op::InverseSqrt: return bits64(1.0 / std::sqrt(x));
    case Op::Floor: return bits64(std::floor(x));
    case Op::Ceil: return bits64(std::ceil(x));
    case Op::Round: return bits64(std::nearbyint(x));  // ties to even
    case Op::Trunc: return bits64(std::trunc(x));
    case Op::Fract: return bits64(x - std::floor(x));
    default: break;  // validation refuses the transcendentals for f64
  }
  throw std::logic_error("reference: bad f64 unary operator");
}

// A conversion to f64 (exact from every other type) or from it.
uint64_t cast_f64(ScalarType from, ScalarType to, uint64_t a) {
  if (to == ScalarType::F64) {
    switch (from) {
      case ScalarType::U32: return bits64(static_cast<double>(static_cast<uint32_t>(a)));
      case ScalarType::I32: return bits64(static_cast<double>(as_i32(static_cast<uint32_t>(a))));
      case ScalarType::F32: return bits64(static_cast<double>(as_f32(static_cast<uint32_t>(a))));
      case ScalarType::F16: return bits64(to_double(half{static_cast<uint16_t>(a)}));
      default: return bits64(a ? 1.0 : 0.0);  // bool
    }
  }
  const double x = as_f64(a);
  switch (to) {
    case ScalarType::F32: return bits_of(static_cast<float>(x));  // rounds to nearest even
    case ScalarType::F16: return f16_bits_of(x);
    case ScalarType::Bool: return x != 0.0 ? 1 : 0;
    case ScalarType::U32:  // NaN is 0; out of range saturates, as for f32
      if (std::isnan(x) || x <= 0.0) return 0;
      return x >= 4294967295.0 ? 0xffffffffu : static_cast<uint32_t>(x);
    default:  // i32
      if (std::isnan(x)) return 0;
      if (x >= 2147483647.0) return bits_of(std::numeric_limits<int32_t>::max());
      if (x <= -2147483648.0) return bits_of(kMin);
      return bits_of(static_cast<int32_t>(x));
  }
}

}  // namespace

uint64_t apply_binary(Op op, ScalarType type, uint64_t a, uint64_t b) {
  if (type == ScalarType::F64 && op != Op::LAnd && op != Op::LOr) return binary_f64(op, a, b);
  return binary32(op, type, static_cast<uint32_t>(a), static_cast<uint32_t>(b));
}

uint64_t apply_unary(Op op, ScalarType type, uint64_t a) {
  if (type == ScalarType::F64) return unary_f64(op, as_f64(a));
  return unary32(op, type, static_cast<uint32_t>(a));
}

uint64_t apply_ternary(Op op, ScalarType type, uint64_t a, uint64_t b, uint64_t c) {
  if (type != ScalarType::F64)
    return ternary32(op, type, static_cast<uint32_t>(a), static_cast<uint32_t>(b), static_cast<uint32_t>(c));
  if (op == Op::Fma) return bits64(std::fma(as_f64(a), as_f64(b), as_f64(c)));
  if (op == Op::Clamp) return apply_binary(Op::Min, type, apply_binary(Op::Max, type, a, b), c);
  throw std::logic_error("reference: bad ternary operator");
}

uint64_t apply_cast(ScalarType from, ScalarType to, uint64_t a) {
  if (from == to) return a;
  if (from == ScalarType::F64 || to == ScalarType::F64) return cast_f64(from, to, a);
  return cast32(from, to, static_cast<uint32_t>(a));
}

uint32_t apply_atomic(AtomicOp op, ScalarType type, uint32_t old_value, uint32_t operand) {
  switch (op) {
    case AtomicOp::Add: return old_value + operand;
    case AtomicOp::Sub: return old_value - operand;
    case AtomicOp::Min: return binary32(Op::Min, type, old_value, operand);
    case AtomicOp::Max: return binary32(Op::Max, type, old_value, operand);
    case AtomicOp::And: return old_value & operand;
    case AtomicOp::Or: return old_value | operand;
    case AtomicOp::Xor: return old_value ^ operand;
    case AtomicOp::Exchange: return operand;
    default: break;
  }
  throw std::logic_error("reference: bad atomic operation");
}

}  // namespace vyre::scalar
