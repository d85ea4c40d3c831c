#include "kernels/combine.hpp"

#include <bit>
#include <limits>
#include <string>

#include "vyre/builder.hpp"
#include "vyre/error.hpp"

namespace vyre::lib::detail {
namespace {

using namespace vyre::build;

// WebGPU's default maxComputeWorkgroupStorageSize.
constexpr uint64_t kWorkgroupStorageBytes = 16384;

bool is_foldable_type(ScalarType t) {
  return t == ScalarType::U32 || t == ScalarType::I32 || t == ScalarType::F32 || t == ScalarType::F64;
}

// Every element type vyre buffers have: the narrow ones, bool and f16
// accumulate in a wider type (accumulator_type).
bool is_element_type(ScalarType t) { return is_foldable_type(t) || is_narrow(t) || t == ScalarType::Bool || t == ScalarType::F16; }

bool is_bitwise(ReduceOp op) { return op == ReduceOp::And || op == ReduceOp::Or || op == ReduceOp::Xor; }

// Whether a float is NaN, decided on the bits of its f32 (an f64 NaN converts
// to an f32 NaN): WGSL lets a compiler assume no NaN in float comparisons.
Expr is_nan(ScalarType type, Expr x) {
  Expr as_f32 = type == ScalarType::F64 ? cast(ScalarType::F32, std::move(x)) : std::move(x);
  return gt(bit_and(bitcast(ScalarType::U32, std::move(as_f32)), u32(0x7fffffffu)), u32(0x7f800000u));
}

}  // namespace

void check_type_and_op(std::string_view primitive, ScalarType type, ReduceOp op) {
  const std::string name(primitive);
  if (!is_element_type(type))
    throw Error(ErrorKind::invalid_input, name + " takes u32, i32, f32, f64, f16, u8, i8, u16, i16 or bool elements, not " +
                                              std::string(vyre::to_string(type)));
  if (is_bitwise(op) && is_float(type))
    throw Error(ErrorKind::invalid_input, name + " " + std::string(to_string(op)) + " takes integer or bool elements (u32, i32, u8, i8, u16, i16, bool), not " +
                                              std::string(vyre::to_string(type)));
}

void check_shape(std::string_view primitive, ScalarType type, const ReduceShape& shape, uint64_t tile_elements) {
  const std::string name(primitive);
  if (shape.workgroup == 0 || shape.workgroup > 1024 || !std::has_single_bit(shape.workgroup))
    throw Error(ErrorKind::invalid_input,
                name + ": the workgroup is a power of two from 1 to 1024, not " + std::to_string(shape.workgroup));
  if (shape.items == 0 || shape.items > 64)
    throw Error(ErrorKind::invalid_input, name + ": items is 1 to 64, not " + std::to_string(shape.items));
  // Each pass must shrink what is left, or the passes never end.
  if (shape.workgroup * shape.items < 2)
    throw Error(ErrorKind::invalid_input, name + ": a workgroup of 1 invocation needs 2 or more items");
  const uint64_t storage =
      (tile_elements + shape.workgroup) * element_bytes(type);
  if (storage > kWorkgroupStorageBytes)
    throw Error(ErrorKind::invalid_input, name + ": workgroup " + std::to_string(shape.workgroup) + " x items " +
                                              std::to_string(shape.items) + " of " +
                                              std::string(vyre::to_string(type)) + " needs " +
                                              std::to_string(storage) +
                                              " bytes of workgroup memory; WebGPU promises 16384");
}

Expr widened(ScalarType type, Expr loaded) {
  if (type == ScalarType::Bool) return select(std::move(loaded), u32(1), u32(0));
  if (type == ScalarType::F16) return cast(ScalarType::F32, std::move(loaded));
  return loaded;  // a narrow load is already a u32 or i32
}

uint64_t identity_bits(ScalarType type, ReduceOp op) {
  const bool f64_type = type == ScalarType::F64;
  switch (op) {
    case ReduceOp::Min:
      if (type == ScalarType::U32) return UINT32_MAX;
      if (type == ScalarType::I32) return static_cast<uint32_t>(INT32_MAX);
      return f64_type ? std::bit_cast<uint64_t>(std::numeric_limits<double>::infinity())
                      : std::bit_cast<uint32_t>(std::numeric_limits<float>::infinity());
    case ReduceOp::Max:
      if (type == ScalarType::U32) return 0;
      if (type == ScalarType::I32) return static_cast<uint32_t>(INT32_MIN);
      return f64_type ? std::bit_cast<uint64_t>(-std::numeric_limits<double>::infinity())
                      : std::bit_cast<uint32_t>(-std::numeric_limits<float>::infinity());
    case ReduceOp::And: return UINT32_MAX;
    case ReduceOp::Sum:
      if (type == ScalarType::F32) return std::bit_cast<uint32_t>(-0.0f);
      if (f64_type) return std::bit_cast<uint64_t>(-0.0);
      return 0;
    default: return 0;  // or, xor
  }
}

Expr identity(ScalarType type, ReduceOp op) {
  const uint64_t bits = identity_bits(type, op);
  switch (type) {
    case ScalarType::U32: return u32(static_cast<uint32_t>(bits));
    case ScalarType::I32: return i32(static_cast<int32_t>(static_cast<uint32_t>(bits)));
    case ScalarType::F32: return f32_bits(static_cast<uint32_t>(bits));
    default: return f64_bits(bits);
  }
}

Expr combine(ScalarType type, ReduceOp op, const Expr& a, const Expr& b) {
  switch (op) {
    case ReduceOp::Sum: return add(a, b);
    case ReduceOp::And: return bit_and(a, b);
    case ReduceOp::Or: return bit_or(a, b);
    case ReduceOp::Xor: return bit_xor(a, b);
    default: break;
  }
  Expr chosen = op == ReduceOp::Min ? min(a, b) : max(a, b);
  if (!is_float(type)) return chosen;
  Expr nan = type == ScalarType::F64 ? f64_bits(0x7ff8000000000000ull) : f32_bits(0x7fc00000u);
  return select(lor(is_nan(type, a), is_nan(type, b)), std::move(nan), std::move(chosen));
}

}  // namespace vyre::lib::detail
