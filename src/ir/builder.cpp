#include "vyre/builder.hpp"

#include <bit>

#include "ir/loop_step.hpp"
#include "vyre/half.hpp"
#include "vyre/checked.hpp"

namespace vyre::build {
namespace {

Expr leaf(Op op, uint64_t imm = 0, std::string name = {}) {
  Expr e;
  e.op = op;
  e.imm = imm;
  e.name = std::move(name);
  return e;
}

Expr node(Op op, std::vector<Expr> args, uint64_t imm = 0, std::string name = {}) {
  Expr e = leaf(op, imm, std::move(name));
  e.args = std::move(args);
  return e;
}

Stmt statement(StmtOp op, std::string name = {}, std::vector<Expr> exprs = {}) {
  Stmt s;
  s.op = op;
  s.name = std::move(name);
  s.exprs = std::move(exprs);
  return s;
}

}  // namespace

Expr u32(uint32_t value) { return leaf(Op::LitU32, value); }
Expr i32(int32_t value) { return leaf(Op::LitI32, static_cast<uint32_t>(value)); }
Expr f32(float value) { return leaf(Op::LitF32, std::bit_cast<uint32_t>(value)); }
Expr f32_bits(uint32_t bits) { return leaf(Op::LitF32, bits); }
Expr boolean(bool value) { return leaf(Op::LitBool, value ? 1u : 0u); }
Expr f16(double value) { return leaf(Op::LitF16, to_half(value).bits); }
Expr f16_bits(uint16_t bits) { return leaf(Op::LitF16, bits); }
Expr f64(double value) { return leaf(Op::LitF64, std::bit_cast<uint64_t>(value)); }
Expr f64_bits(uint64_t bits) { return leaf(Op::LitF64, bits); }

Expr var(std::string name) { return leaf(Op::Var, 0, std::move(name)); }
Expr load(std::string buffer, Expr index) { return node(Op::Load, {std::move(index)}, 0, std::move(buffer)); }
Expr len(std::string buffer) { return leaf(Op::Len, 0, std::move(buffer)); }

Expr gid(Axis axis) { return leaf(Op::Gid, static_cast<uint32_t>(axis)); }
Expr lid(Axis axis) { return leaf(Op::Lid, static_cast<uint32_t>(axis)); }
Expr lid_flat() { return leaf(Op::Lid, static_cast<uint32_t>(Axis::Flat)); }
Expr wid(Axis axis) { return leaf(Op::Wid, static_cast<uint32_t>(axis)); }
Expr nwg(Axis axis) { return leaf(Op::Nwg, static_cast<uint32_t>(axis)); }

Expr unary(Op op, Expr a) { return node(op, {std::move(a)}); }
Expr binary(Op op, Expr a, Expr b) { return node(op, {std::move(a), std::move(b)}); }

Expr add(Expr a, Expr b) { return binary(Op::Add, std::move(a), std::move(b)); }
Expr sub(Expr a, Expr b) { return binary(Op::Sub, std::move(a), std::move(b)); }
Expr mul(Expr a, Expr b) { return binary(Op::Mul, std::move(a), std::move(b)); }
Expr div(Expr a, Expr b) { return binary(Op::Div, std::move(a), std::move(b)); }
Expr rem(Expr a, Expr b) { return binary(Op::Rem, std::move(a), std::move(b)); }
Expr min(Expr a, Expr b) { return binary(Op::Min, std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return binary(Op::Max, std::move(a), std::move(b)); }
Expr bit_and(Expr a, Expr b) { return binary(Op::And, std::move(a), std::move(b)); }
Expr bit_or(Expr a, Expr b) { return binary(Op::Or, std::move(a), std::move(b)); }
Expr bit_xor(Expr a, Expr b) { return binary(Op::Xor, std::move(a), std::move(b)); }
Expr shl(Expr a, Expr b) { return binary(Op::Shl, std::move(a), std::move(b)); }
Expr shr(Expr a, Expr b) { return binary(Op::Shr, std::move(a), std::move(b)); }
Expr eq(Expr a, Expr b) { return binary(Op::Eq, std::move(a), std::move(b)); }
Expr ne(Expr a, Expr b) { return binary(Op::Ne, std::move(a), std::move(b)); }
Expr lt(Expr a, Expr b) { return binary(Op::Lt, std::move(a), std::move(b)); }
Expr le(Expr a, Expr b) { return binary(Op::Le, std::move(a), std::move(b)); }
Expr gt(Expr a, Expr b) { return binary(Op::Gt, std::move(a), std::move(b)); }
Expr ge(Expr a, Expr b) { return binary(Op::Ge, std::move(a), std::move(b)); }
Expr land(Expr a, Expr b) { return binary(Op::LAnd, std::move(a), std::move(b)); }
Expr lor(Expr a, Expr b) { return binary(Op::LOr, std::move(a), std::move(b)); }
Expr pow(Expr a, Expr b) { return binary(Op::Pow, std::move(a), std::move(b)); }
Expr atan2(Expr a, Expr b) { return binary(Op::Atan2, std::move(a), std::move(b)); }

Expr neg(Expr a) { return unary(Op::Neg, std::move(a)); }
Expr abs(Expr a) { return unary(Op::Abs, std::move(a)); }
Expr logical_not(Expr a) { return unary(Op::Not, std::move(a)); }
Expr bit_not(Expr a) { return unary(Op::BitNot, std::move(a)); }

Expr fma(Expr a, Expr b, Expr c) { return node(Op::Fma, {std::move(a), std::move(b), std::move(c)}); }
Expr clamp(Expr x, Expr lo, Expr hi) { return node(Op::Clamp, {std::move(x), std::move(lo), std::move(hi)}); }
Expr select(Expr cond, Expr if_true, Expr if_false) {
  return node(Op::Select, {std::move(cond), std::move(if_true), std::move(if_false)});
}

Expr cast(ScalarType to, Expr value) { return node(Op::Cast, {std::move(value)}, static_cast<uint32_t>(to)); }
Expr bitcast(ScalarType to, Expr value) { return node(Op::Bitcast, {std::move(value)}, static_cast<uint32_t>(to)); }

Expr atomic(AtomicOp op, std::string buffer, Expr index, Expr value) {
  return node(Op::Atomic, {std::move(index), std::move(value)}, static_cast<uint32_t>(op), std::move(buffer));
}
Expr atomic_compare_exchange(std::string buffer, Expr index, Expr expected, Expr value) {
  return node(Op::Atomic, {std::move(index), std::move(expected), std::move(value)},
              static_cast<uint32_t>(AtomicOp::CompareExchange), std::move(buffer));
}
Expr atomic_load(std::string buffer, Expr index) {
  return node(Op::Atomic, {std::move(index)}, static_cast<uint32_t>(AtomicOp::Load), std::move(buffer));
}

Stmt let(std::string name, Expr value) { return statement(StmtOp::Let, std::move(name), {std::move(value)}); }
Stmt assign(std::string name, Expr value) { return statement(StmtOp::Assign, std::move(name), {std::move(value)}); }
Stmt store(std::string buffer, Expr index, Expr value) {
  return statement(StmtOp::Store, std::move(buffer), {std::move(index), std::move(value)});
}
Stmt if_(Expr cond, std::vector<Stmt> then_body, std::vector<Stmt> else_body) {
  Stmt s = statement(StmtOp::If, {}, {std::move(cond)});
  s.body = std::move(then_body);
  s.else_body = std::move(else_body);
  return s;
}
Stmt loop(std::string var, Expr from, Expr to, std::vector<Stmt> body) {
  Stmt s = statement(StmtOp::Loop, std::move(var), {std::move(from), std::move(to)});
  s.body = std::move(body);
  return s;
}
Stmt loop(std::string var, Expr from, Expr to, Expr step, std::vector<Stmt> body) {
  Stmt s = loop(std::move(var), std::move(from), std::move(to), std::move(body));
  if (!is_unit_step(step)) s.exprs.push_back(std::move(step));
  return s;
}
Stmt array(std::string name, ScalarType element_type, uint32_t count) {
  Stmt s = statement(StmtOp::Array, std::move(name), {});
  s.element_type = element_type;
  s.count = count;
  return s;
}
Stmt while_(Expr cond, std::vector<Stmt> body) {
  Stmt s = statement(StmtOp::While, {}, {std::move(cond)});
  s.body = std::move(body);
  return s;
}
Stmt break_() { return statement(StmtOp::Break); }
Stmt continue_() { return statement(StmtOp::Continue); }
Stmt barrier(BarrierKind kind) {
  Stmt s = statement(StmtOp::Barrier);
  s.barrier = kind;
  return s;
}
Stmt eval(Expr e) { return statement(StmtOp::Eval, {}, {std::move(e)}); }
Stmt return_() { return statement(StmtOp::Return); }

ProgramBuilder::ProgramBuilder(std::string name) { program_.name = std::move(name); }

ProgramBuilder& ProgramBuilder::domain(std::string buffer, std::vector<uint32_t> shape) {
  program_.domain = std::move(buffer);
  program_.domain_shape = std::move(shape);
  return *this;
}

ProgramBuilder& ProgramBuilder::workgroup_size(uint32_t x, uint32_t y, uint32_t z) {
  program_.workgroup_size = {x, y, z};
  return *this;
}

ProgramBuilder& ProgramBuilder::buffer(Buffer b) {
  program_.buffers.push_back(std::move(b));
  return *this;
}

ProgramBuilder& ProgramBuilder::input(std::string name, uint32_t binding, ScalarType type, uint32_t count) {
  return buffer({std::move(name), binding, Access::Read, type, count, false});
}
ProgramBuilder& ProgramBuilder::output(std::string name, uint32_t binding, ScalarType type, uint32_t count) {
  return buffer({std::move(name), binding, Access::ReadWrite, type, count, true});
}
ProgramBuilder& ProgramBuilder::storage(std::string name, uint32_t binding, ScalarType type, uint32_t count) {
  return buffer({std::move(name), binding, Access::ReadWrite, type, count, false});
}
ProgramBuilder& ProgramBuilder::uniform(std::string name, uint32_t binding, ScalarType type, uint32_t count) {
  return buffer({std::move(name), binding, Access::Uniform, type, count, false});
}
ProgramBuilder& ProgramBuilder::workgroup_buffer(std::string name, ScalarType type, uint32_t count) {
  return buffer({std::move(name), std::nullopt, Access::Workgroup, type, count, false});
}

ProgramBuilder& ProgramBuilder::body(std::vector<Stmt> statements) {
  program_.body = std::move(statements);
  return *this;
}

ProgramBuilder& ProgramBuilder::append(Stmt statement) {
  program_.body.push_back(std::move(statement));
  return *this;
}

CheckedProgram ProgramBuilder::build() const { return CheckedProgram(program_); }

}  // namespace vyre::build
