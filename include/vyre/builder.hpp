// A C++ builder that mirrors the JSON format one to one, so that programs
// written in C++ read like their JSON:
//
//   using namespace vyre::build;
//   vyre::Program p = ProgramBuilder("xor")
//       .workgroup_size(64)
//       .input("a", 0, ScalarType::U32)
//       .input("b", 1, ScalarType::U32)
//       .output("out", 2, ScalarType::U32)
//       .body({
//           let("i", gid()),
//           if_(lt(var("i"), len("out")), {
//               store("out", var("i"), bit_xor(load("a", var("i")), load("b", var("i")))),
//           }),
//       })
//       .build();
#pragma once

#include <string>
#include <vector>

#include "vyre/checked.hpp"
#include "vyre/program.hpp"

namespace vyre::build {

using vyre::Access;
using vyre::AtomicOp;
using vyre::Axis;
using vyre::BarrierKind;
using vyre::Expr;
using vyre::ScalarType;
using vyre::Stmt;

// literals
Expr u32(uint32_t value);
Expr i32(int32_t value);
Expr f32(float value);
Expr f32_bits(uint32_t bits);
Expr boolean(bool value);

// names
Expr var(std::string name);
Expr load(std::string buffer, Expr index);
Expr len(std::string buffer);

// invocation builtins
Expr gid(Axis axis = Axis::X);
Expr lid(Axis axis = Axis::X);
Expr lid_flat();
Expr wid(Axis axis = Axis::X);
Expr nwg(Axis axis = Axis::X);

// generic forms
Expr unary(Op op, Expr a);
Expr binary(Op op, Expr a, Expr b);

// binary operators (and/or/xor/not are C++ alternative tokens, hence the prefixes)
Expr add(Expr a, Expr b);
Expr sub(Expr a, Expr b);
Expr mul(Expr a, Expr b);
Expr div(Expr a, Expr b);
Expr rem(Expr a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr bit_and(Expr a, Expr b);
Expr bit_or(Expr a, Expr b);
Expr bit_xor(Expr a, Expr b);
Expr shl(Expr a, Expr b);
Expr shr(Expr a, Expr b);
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr lt(Expr a, Expr b);
Expr le(Expr a, Expr b);
Expr gt(Expr a, Expr b);
Expr ge(Expr a, Expr b);
Expr land(Expr a, Expr b);
Expr lor(Expr a, Expr b);
Expr pow(Expr a, Expr b);
Expr atan2(Expr a, Expr b);

// unary operators
Expr neg(Expr a);
Expr abs(Expr a);
Expr logical_not(Expr a);
Expr bit_not(Expr a);

// three operands
Expr fma(Expr a, Expr b, Expr c);
Expr clamp(Expr x, Expr lo, Expr hi);
Expr select(Expr cond, Expr if_true, Expr if_false);

// conversions
Expr cast(ScalarType to, Expr value);
Expr bitcast(ScalarType to, Expr value);

// atomics
Expr atomic(AtomicOp op, std::string buffer, Expr index, Expr value);
Expr atomic_compare_exchange(std::string buffer, Expr index, Expr expected, Expr value);
Expr atomic_load(std::string buffer, Expr index);

// statements
Stmt let(std::string name, Expr value);
Stmt assign(std::string name, Expr value);
Stmt store(std::string buffer, Expr index, Expr value);
Stmt if_(Expr cond, std::vector<Stmt> then_body, std::vector<Stmt> else_body = {});
Stmt loop(std::string var, Expr from, Expr to, std::vector<Stmt> body);
Stmt while_(Expr cond, std::vector<Stmt> body);
Stmt break_();
Stmt continue_();
Stmt barrier(BarrierKind kind = BarrierKind::Workgroup);
Stmt eval(Expr e);
Stmt return_();

class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::string name = {});

  ProgramBuilder& workgroup_size(uint32_t x, uint32_t y = 1, uint32_t z = 1);
  ProgramBuilder& buffer(Buffer b);
  // read-only storage input
  ProgramBuilder& input(std::string name, uint32_t binding, ScalarType type, uint32_t count = 0);
  // read_write storage read back after dispatch
  ProgramBuilder& output(std::string name, uint32_t binding, ScalarType type, uint32_t count = 0);
  // read_write storage not read back
  ProgramBuilder& storage(std::string name, uint32_t binding, ScalarType type, uint32_t count = 0);
  ProgramBuilder& uniform(std::string name, uint32_t binding, ScalarType type, uint32_t count);
  ProgramBuilder& workgroup_buffer(std::string name, ScalarType type, uint32_t count);
  ProgramBuilder& body(std::vector<Stmt> statements);
  ProgramBuilder& append(Stmt statement);

  // Checks and throws vyre::ProgramError listing every problem.
  CheckedProgram build() const;
  // The program as written, valid or not (for tests of validation itself).
  const Program& unchecked() const { return program_; }

 private:
  Program program_;
};

}  // namespace vyre::build
