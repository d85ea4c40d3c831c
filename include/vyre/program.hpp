// vyre::Program: the in-memory form of a compute program, one to one with the
// JSON format of docs/program-format.md (format version 1).
//
// Expressions and statements are small tagged nodes (an operator plus its
// operands) rather than one C++ type per operator: every pass (JSON, wire,
// validation, lowering, interpreter, fuzzing) walks the same shape, and the
// operator table (op_info) is the single place that names each operator.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vyre/export.hpp"

namespace vyre {

// The newest format version this build reads (docs/format-v2.md, docs/format-v3.md). A program
// is written in the oldest version that holds it (format_version), so a
// version-1 program keeps its bytes and its digest.
inline constexpr uint32_t kFormatVersion = 4;

// Value types (u32, i32, f32, bool) and, from format version 4, the narrow
// storage types: a buffer of U8, I8, U16 or I16 holds 1- or 2-byte elements
// that load as u32 or i32 (zero- or sign-extended) and store from them
// (keeping the low bits); a Bool buffer holds one byte per element (0 or 1).
// Expressions never have a narrow type. F16 (version 4) is IEEE binary16, a
// value type with arithmetic of its own, on devices with WebGPU's
// `shader-f16`. F64 (version 4) is IEEE binary64, on devices with
// `shader-f64`, with the operators Vulkan defines for 64-bit floats (the
// validator refuses the rest). New types go at the end: the enum's values
// are the wire's type tags.
enum class ScalarType : uint8_t { U32, I32, F32, Bool, U8, I8, U16, I16, F16, F64 };

// True for f32, f16 and f64.
VYRE_API bool is_float(ScalarType t);

// True for the storage-only types, which no expression has.
VYRE_API bool is_narrow(ScalarType t);
// The type a load of an element of this storage type gives, and a store takes:
// u32 for U8 and U16, i32 for I8 and I16, the type itself otherwise.
VYRE_API ScalarType value_type(ScalarType storage);
// The bytes of one element in host memory and in a dispatch's contents.
VYRE_API uint32_t element_bytes(ScalarType t);

enum class Access : uint8_t { Read, ReadWrite, Uniform, Workgroup };

struct VYRE_API Buffer {
  std::string name;
  std::optional<uint32_t> binding;  // absent for workgroup buffers
  Access access = Access::Read;
  ScalarType type = ScalarType::U32;
  uint32_t count = 0;  // 0: runtime-sized, length given at dispatch
  bool output = false;

  bool runtime_sized() const { return count == 0; }
  friend bool operator==(const Buffer&, const Buffer&) = default;
};

enum class Op : uint8_t {
  // literals: Expr::imm holds the value's bits (bool: 0 or 1; f64: all 64)
  LitU32, LitI32, LitF32, LitBool,
  // named values: Expr::name is the local or buffer
  Var, Load, Len,
  // invocation builtins: Expr::imm is an Axis
  Gid, Lid, Wid, Nwg,
  // binary operators: args = [a, b]
  Add, Sub, Mul, Div, Rem, Min, Max,
  And, Or, Xor, Shl, Shr,
  Eq, Ne, Lt, Le, Gt, Ge,
  LAnd, LOr,
  Pow, Atan2,
  // unary operators: args = [a]
  Neg, Abs, Not, BitNot, Popcount, Clz, Ctz, ReverseBits,
  Sqrt, InverseSqrt, Exp, Exp2, Log, Log2, Sin, Cos, Tan, Tanh,
  Floor, Ceil, Round, Trunc, Fract,
  // three operands: fma [a, b, c]; clamp [x, lo, hi]; select [cond, t, f]
  Fma, Clamp, Select,
  // conversions: Expr::imm is the target ScalarType, args = [value]
  Cast, Bitcast,
  // atomics: Expr::imm is an AtomicOp, Expr::name the buffer,
  // args = [index, value] | [index, expected, value] (compare_exchange) | [index] (load)
  Atomic,
  // an f16 literal (version 4): Expr::imm holds its 16 bits
  LitF16,
  // an f64 literal (version 4): Expr::imm holds its 64 bits
  LitF64,
};

enum class Axis : uint8_t { X, Y, Z, Flat };  // Flat only for Lid

enum class AtomicOp : uint8_t { Add, Sub, Min, Max, And, Or, Xor, Exchange, CompareExchange, Load };

enum class OpClass : uint8_t { Literal, Var, Load, Len, Builtin, Binary, Unary, Ternary, Conversion, Atomic };

struct VYRE_API OpInfo {
  std::string_view json;  // operator key in JSON
  OpClass cls;
  uint8_t arity;          // operand count for Binary/Unary/Ternary
};

VYRE_API const OpInfo& op_info(Op op);
VYRE_API std::optional<Op> op_from_json(std::string_view key);
VYRE_API std::span<const Op> all_ops();

VYRE_API std::string_view to_string(ScalarType t);
VYRE_API std::optional<ScalarType> scalar_type_from_string(std::string_view s);
VYRE_API std::string_view to_string(Access a);
VYRE_API std::optional<Access> access_from_string(std::string_view s);
VYRE_API std::string_view to_string(AtomicOp op);
VYRE_API std::optional<AtomicOp> atomic_op_from_string(std::string_view s);
VYRE_API std::string_view to_string(Axis a);

struct VYRE_API Expr {
  Op op = Op::LitU32;
  // A literal's bits, an axis, a conversion's target type or an atomic
  // operation. 64 bits wide for f64 literals; every other use fits 32.
  uint64_t imm = 0;
  std::string name;
  std::vector<Expr> args;

  friend bool operator==(const Expr&, const Expr&) = default;
};

// Array (format version 4) declares a private array: `count` elements of
// `element_type`, zeroed, owned by the invocation, in scope like a local.
// Its elements are read by load and written by store, as a buffer's are.
enum class StmtOp : uint8_t { Let, Assign, Store, If, Loop, While, Break, Continue, Barrier, Eval, Return, Array };

enum class BarrierKind : uint8_t { Workgroup, Storage };

struct VYRE_API Stmt {
  StmtOp op = StmtOp::Return;
  // Let/Assign: the local; Store: the buffer or private array; Loop: the
  // loop variable; Array: the array
  std::string name;
  // Let/Assign: [value]; Store: [index, value]; If/While: [cond];
  // Loop: [from, to] or [from, to, step]; Eval: [expr]; otherwise empty.
  // A step (format version 4) is a literal of the loop's type other than
  // 0 and 1: a loop counting up by one has no step, so it has one encoding.
  std::vector<Expr> exprs;
  std::vector<Stmt> body;       // If: then; Loop/While: body
  std::vector<Stmt> else_body;  // If only
  BarrierKind barrier = BarrierKind::Workgroup;
  ScalarType element_type = ScalarType::U32;  // Array only
  uint32_t count = 0;                         // Array only

  friend bool operator==(const Stmt&, const Stmt&) = default;
};

VYRE_API std::string_view to_string(StmtOp op);

struct VYRE_API Program {
  std::string name;  // label only; not part of the program's identity
  std::array<uint32_t, 3> workgroup_size{1, 1, 1};
  std::vector<Buffer> buffers;  // in declaration order
  std::vector<Stmt> body;
  // Format version 2: the buffer whose element count is the program's launch
  // domain (one invocation per element, along x), used when a dispatch gives
  // neither a domain nor a grid. Empty: none declared.
  std::string domain;
  // Format version 3: the declared domain in the buffer's row-major shape
  // ({H, W} or {D, H, W}: x runs along W, y along H, z along D). Empty: the
  // domain is flat, along x.
  std::vector<uint32_t> domain_shape;

  const Buffer* find_buffer(std::string_view buffer_name) const;
  friend bool operator==(const Program&, const Program&) = default;
};

// The oldest format version that holds `program`: 4 when it uses a version-4
// feature (a narrow, bool, f16 or f64 buffer, a loop with a step, a private array), 3 when it declares a domain in a shape,
// 2 when it declares a flat domain, else 1.
VYRE_API uint32_t format_version(const Program& program);

// Whether `program` has an f16 value anywhere (a buffer, a literal, a
// conversion to f16): it needs a device with WebGPU's `shader-f16`.
VYRE_API bool uses_f16(const Program& program);
// The same for f64, which needs `shader-f64`.
VYRE_API bool uses_f64(const Program& program);

// Buffers in canonical order: bound buffers by binding, then workgroup
// buffers by name. Identity, lowering and binding layout all use this order,
// so declaration order never changes a digest or a shader.
VYRE_API std::vector<const Buffer*> canonical_buffer_order(const Program& program);

// True when some atomic expression names this buffer: it is then atomic
// everywhere, its plain loads and stores included.
VYRE_API bool buffer_is_atomic(const Program& program, std::string_view buffer_name);

}  // namespace vyre
