#include "vyre/program.hpp"

#include <algorithm>
#include <array>
#include <functional>

namespace vyre {

namespace {
bool has_version_4_statement(const std::vector<Stmt>& stmts) {
  return std::any_of(stmts.begin(), stmts.end(), [](const Stmt& s) {
    return (s.op == StmtOp::Loop && s.exprs.size() == 3) || s.op == StmtOp::Array ||
           has_version_4_statement(s.body) || has_version_4_statement(s.else_body);
  });
}

// Whether a literal, a conversion or a private array names the float type
// `t` (f16 or f64), whose literal operator is `literal`.
bool names_type(const Expr& e, ScalarType t, Op literal) {
  if (e.op == literal || ((e.op == Op::Cast || e.op == Op::Bitcast) && e.imm == static_cast<uint32_t>(t))) return true;
  return std::any_of(e.args.begin(), e.args.end(), [&](const Expr& a) { return names_type(a, t, literal); });
}

bool names_type(const std::vector<Stmt>& stmts, ScalarType t, Op literal) {
  return std::any_of(stmts.begin(), stmts.end(), [&](const Stmt& s) {
    return std::any_of(s.exprs.begin(), s.exprs.end(), [&](const Expr& e) { return names_type(e, t, literal); }) ||
           (s.op == StmtOp::Array && s.element_type == t) || names_type(s.body, t, literal) ||
           names_type(s.else_body, t, literal);
  });
}

bool uses_float_type(const Program& program, ScalarType t, Op literal) {
  return std::any_of(program.buffers.begin(), program.buffers.end(), [&](const Buffer& b) { return b.type == t; }) ||
         names_type(program.body, t, literal);
}

bool uses_version_4(const Program& program) {
  return std::any_of(program.buffers.begin(), program.buffers.end(),
                     [](const Buffer& b) { return is_narrow(b.type) || b.type == ScalarType::Bool; }) ||
         has_version_4_statement(program.body) || uses_f16(program) || uses_f64(program);
}
}  // namespace

bool uses_f16(const Program& program) { return uses_float_type(program, ScalarType::F16, Op::LitF16); }
bool uses_f64(const Program& program) { return uses_float_type(program, ScalarType::F64, Op::LitF64); }

uint32_t format_version(const Program& program) {
  if (uses_version_4(program)) return 4;
  if (!program.domain_shape.empty()) return 3;
  return program.domain.empty() ? 1 : 2;
}
namespace {

struct OpRow {
  Op op{};
  OpInfo info;
};

// The one table that names every operator. Order follows the Op enum.
constexpr std::array kOps{
    OpRow{Op::LitU32, {"u32", OpClass::Literal, 0}},
    OpRow{Op::LitI32, {"i32", OpClass::Literal, 0}},
    OpRow{Op::LitF32, {"f32", OpClass::Literal, 0}},
    OpRow{Op::LitBool, {"bool", OpClass::Literal, 0}},
    OpRow{Op::Var, {"var", OpClass::Var, 0}},
    OpRow{Op::Load, {"load", OpClass::Load, 1}},
    OpRow{Op::Len, {"len", OpClass::Len, 0}},
    OpRow{Op::Gid, {"gid", OpClass::Builtin, 0}},
    OpRow{Op::Lid, {"lid", OpClass::Builtin, 0}},
    OpRow{Op::Wid, {"wid", OpClass::Builtin, 0}},
    OpRow{Op::Nwg, {"nwg", OpClass::Builtin, 0}},
    OpRow{Op::Add, {"add", OpClass::Binary, 2}},
    OpRow{Op::Sub, {"sub", OpClass::Binary, 2}},
    OpRow{Op::Mul, {"mul", OpClass::Binary, 2}},
    OpRow{Op::Div, {"div", OpClass::Binary, 2}},
    OpRow{Op::Rem, {"rem", OpClass::Binary, 2}},
    OpRow{Op::Min, {"min", OpClass::Binary, 2}},
    OpRow{Op::Max, {"max", OpClass::Binary, 2}},
    OpRow{Op::And, {"and", OpClass::Binary, 2}},
    OpRow{Op::Or, {"or", OpClass::Binary, 2}},
    OpRow{Op::Xor, {"xor", OpClass::Binary, 2}},
    OpRow{Op::Shl, {"shl", OpClass::Binary, 2}},
    OpRow{Op::Shr, {"shr", OpClass::Binary, 2}},
    OpRow{Op::Eq, {"eq", OpClass::Binary, 2}},
    OpRow{Op::Ne, {"ne", OpClass::Binary, 2}},
    OpRow{Op::Lt, {"lt", OpClass::Binary, 2}},
    OpRow{Op::Le, {"le", OpClass::Binary, 2}},
    OpRow{Op::Gt, {"gt", OpClass::Binary, 2}},
    OpRow{Op::Ge, {"ge", OpClass::Binary, 2}},
    OpRow{Op::LAnd, {"land", OpClass::Binary, 2}},
    OpRow{Op::LOr, {"lor", OpClass::Binary, 2}},
    OpRow{Op::Pow, {"pow", OpClass::Binary, 2}},
    OpRow{Op::Atan2, {"atan2", OpClass::Binary, 2}},
    OpRow{Op::Neg, {"neg", OpClass::Unary, 1}},
    OpRow{Op::Abs, {"abs", OpClass::Unary, 1}},
    OpRow{Op::Not, {"not", OpClass::Unary, 1}},
    OpRow{Op::BitNot, {"bitnot", OpClass::Unary, 1}},
    OpRow{Op::Popcount, {"popcount", OpClass::Unary, 1}},
    OpRow{Op::Clz, {"clz", OpClass::Unary, 1}},
    OpRow{Op::Ctz, {"ctz", OpClass::Unary, 1}},
    OpRow{Op::ReverseBits, {"reverse_bits", OpClass::Unary, 1}},
    OpRow{Op::Sqrt, {"sqrt", OpClass::Unary, 1}},
    OpRow{Op::InverseSqrt, {"inverse_sqrt", OpClass::Unary, 1}},
    OpRow{Op::Exp, {"exp", OpClass::Unary, 1}},
    OpRow{Op::Exp2, {"exp2", OpClass::Unary, 1}},
    OpRow{Op::Log, {"log", OpClass::Unary, 1}},
    OpRow{Op::Log2, {"log2", OpClass::Unary, 1}},
    OpRow{Op::Sin, {"sin", OpClass::Unary, 1}},
    OpRow{Op::Cos, {"cos", OpClass::Unary, 1}},
    OpRow{Op::Tan, {"tan", OpClass::Unary, 1}},
    OpRow{Op::Tanh, {"tanh", OpClass::Unary, 1}},
    OpRow{Op::Floor, {"floor", OpClass::Unary, 1}},
    OpRow{Op::Ceil, {"ceil", OpClass::Unary, 1}},
    OpRow{Op::Round, {"round", OpClass::Unary, 1}},
    OpRow{Op::Trunc, {"trunc", OpClass::Unary, 1}},
    OpRow{Op::Fract, {"fract", OpClass::Unary, 1}},
    OpRow{Op::Fma, {"fma", OpClass::Ternary, 3}},
    OpRow{Op::Clamp, {"clamp", OpClass::Ternary, 3}},
    OpRow{Op::Select, {"select", OpClass::Ternary, 3}},
    OpRow{Op::Cast, {"cast", OpClass::Conversion, 1}},
    OpRow{Op::Bitcast, {"bitcast", OpClass::Conversion, 1}},
    OpRow{Op::Atomic, {"atomic", OpClass::Atomic, 0}},
    OpRow{Op::LitF16, {"f16", OpClass::Literal, 0}},
    OpRow{Op::LitF64, {"f64", OpClass::Literal, 0}},
};

constexpr bool table_follows_enum() {
  for (size_t i = 0; i < kOps.size(); ++i)
    if (static_cast<size_t>(kOps[i].op) != i) return false;
  return true;
}
static_assert(table_follows_enum(), "kOps must list operators in Op enum order");

constexpr std::array<Op, kOps.size()> make_all_ops() {
  std::array<Op, kOps.size()> out{};
  for (size_t i = 0; i < kOps.size(); ++i) out[i] = kOps[i].op;
  return out;
}
constexpr auto kAllOps = make_all_ops();

}  // namespace

const OpInfo& op_info(Op op) { return kOps[static_cast<size_t>(op)].info; }

std::optional<Op> op_from_json(std::string_view key) {
  for (const auto& row : kOps)
    if (row.info.json == key) return row.op;
  return std::nullopt;
}

std::span<const Op> all_ops() { return kAllOps; }

std::string_view to_string(ScalarType t) {
  switch (t) {
    case ScalarType::U32: return "u32";
    case ScalarType::I32: return "i32";
    case ScalarType::F32: return "f32";
    case ScalarType::Bool: return "bool";
    case ScalarType::U8: return "u8";
    case ScalarType::I8: return "i8";
    case ScalarType::U16: return "u16";
    case ScalarType::I16: return "i16";
    case ScalarType::F16: return "f16";
    case ScalarType::F64: return "f64";
  }
  return "?";
}

std::optional<ScalarType> scalar_type_from_string(std::string_view s) {
  for (auto t : {ScalarType::U32, ScalarType::I32, ScalarType::F32, ScalarType::Bool, ScalarType::U8, ScalarType::I8,
                 ScalarType::U16, ScalarType::I16, ScalarType::F16, ScalarType::F64})
    if (to_string(t) == s) return t;
  return std::nullopt;
}

bool is_float(ScalarType t) { return t == ScalarType::F32 || t == ScalarType::F16 || t == ScalarType::F64; }

bool is_narrow(ScalarType t) {
  return t == ScalarType::U8 || t == ScalarType::I8 || t == ScalarType::U16 || t == ScalarType::I16;
}

ScalarType value_type(ScalarType storage) {
  switch (storage) {
    case ScalarType::U8: case ScalarType::U16: return ScalarType::U32;
    case ScalarType::I8: case ScalarType::I16: return ScalarType::I32;
    default: return storage;
  }
}

uint32_t element_bytes(ScalarType t) {
  switch (t) {
    case ScalarType::U8: case ScalarType::I8: case ScalarType::Bool: return 1;
    case ScalarType::U16: case ScalarType::I16: case ScalarType::F16: return 2;
    case ScalarType::F64: return 8;
    default: return 4;
  }
}

std::string_view to_string(Access a) {
  switch (a) {
    case Access::Read: return "read";
    case Access::ReadWrite: return "read_write";
    case Access::Uniform: return "uniform";
    case Access::Workgroup: return "workgroup";
  }
  return "?";
}

std::optional<Access> access_from_string(std::string_view s) {
  for (auto a : {Access::Read, Access::ReadWrite, Access::Uniform, Access::Workgroup})
    if (to_string(a) == s) return a;
  return std::nullopt;
}

std::string_view to_string(AtomicOp op) {
  switch (op) {
    case AtomicOp::Add: return "add";
    case AtomicOp::Sub: return "sub";
    case AtomicOp::Min: return "min";
    case AtomicOp::Max: return "max";
    case AtomicOp::And: return "and";
    case AtomicOp::Or: return "or";
    case AtomicOp::Xor: return "xor";
    case AtomicOp::Exchange: return "exchange";
    case AtomicOp::CompareExchange: return "compare_exchange";
    case AtomicOp::Load: return "load";
  }
  return "?";
}

std::optional<AtomicOp> atomic_op_from_string(std::string_view s) {
  for (int i = 0; i <= static_cast<int>(AtomicOp::Load); ++i) {
    auto op = static_cast<AtomicOp>(i);
    if (to_string(op) == s) return op;
  }
  return std::nullopt;
}

std::string_view to_string(Axis a) {
  switch (a) {
    case Axis::X: return "x";
    case Axis::Y: return "y";
    case Axis::Z: return "z";
    case Axis::Flat: return "flat";
  }
  return "?";
}

std::string_view to_string(StmtOp op) {
  switch (op) {
    case StmtOp::Let: return "let";
    case StmtOp::Assign: return "assign";
    case StmtOp::Store: return "store";
    case StmtOp::If: return "if";
    case StmtOp::Loop: return "loop";
    case StmtOp::While: return "while";
    case StmtOp::Break: return "break";
    case StmtOp::Continue: return "continue";
    case StmtOp::Barrier: return "barrier";
    case StmtOp::Eval: return "eval";
    case StmtOp::Return: return "return";
    case StmtOp::Array: return "array";
  }
  return "?";
}

const Buffer* Program::find_buffer(std::string_view buffer_name) const {
  for (const auto& b : buffers)
    if (b.name == buffer_name) return &b;
  return nullptr;
}

std::vector<const Buffer*> canonical_buffer_order(const Program& program) {
  std::vector<const Buffer*> order;
  order.reserve(program.buffers.size());
  for (const auto& b : program.buffers) order.push_back(&b);
  std::stable_sort(order.begin(), order.end(), [](const Buffer* a, const Buffer* b) {
    const bool a_wg = a->access == Access::Workgroup, b_wg = b->access == Access::Workgroup;
    if (a_wg != b_wg) return !a_wg;  // bound buffers first
    if (!a_wg) return a->binding.value_or(0) < b->binding.value_or(0);
    return a->name < b->name;
  });
  return order;
}

namespace {
bool names_atomic(const Expr& e, std::string_view buffer) {
  if (e.op == Op::Atomic && e.name == buffer) return true;
  return std::any_of(e.args.begin(), e.args.end(), [&](const Expr& a) { return names_atomic(a, buffer); });
}
bool names_atomic(const std::vector<Stmt>& body, std::string_view buffer) {
  for (const auto& s : body) {
    for (const auto& e : s.exprs)
      if (names_atomic(e, buffer)) return true;
    if (names_atomic(s.body, buffer) || names_atomic(s.else_body, buffer)) return true;
  }
  return false;
}
}  // namespace

bool buffer_is_atomic(const Program& program, std::string_view buffer_name) {
  return names_atomic(program.body, buffer_name);
}

}  // namespace vyre
