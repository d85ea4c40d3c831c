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
#include "vyre/export.hpp"
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
VYRE_API Expr u32(uint32_t value);
VYRE_API Expr i32(int32_t value);
VYRE_API Expr f32(float value);
VYRE_API Expr f32_bits(uint32_t bits);
VYRE_API Expr boolean(bool value);
// f16 (format version 4): the binary16 nearest to `value`, or these bits.
VYRE_API Expr f16(double value);
VYRE_API Expr f16_bits(uint16_t bits);
// f64 (format version 4): this binary64 value, or these bits.
VYRE_API Expr f64(double value);
VYRE_API Expr f64_bits(uint64_t bits);

// names
VYRE_API Expr var(std::string name);
VYRE_API Expr load(std::string buffer, Expr index);
VYRE_API Expr len(std::string buffer);

// invocation builtins
VYRE_API Expr gid(Axis axis = Axis::X);
VYRE_API Expr lid(Axis axis = Axis::X);
VYRE_API Expr lid_flat();
VYRE_API Expr wid(Axis axis = Axis::X);
VYRE_API Expr nwg(Axis axis = Axis::X);

// generic forms
VYRE_API Expr unary(Op op, Expr a);
VYRE_API Expr binary(Op op, Expr a, Expr b);

// binary operators (and/or/xor/not are C++ alternative tokens, hence the prefixes)
VYRE_API Expr add(Expr a, Expr b);
VYRE_API Expr sub(Expr a, Expr b);
VYRE_API Expr mul(Expr a, Expr b);
VYRE_API Expr div(Expr a, Expr b);
VYRE_API Expr rem(Expr a, Expr b);
VYRE_API Expr min(Expr a, Expr b);
VYRE_API Expr max(Expr a, Expr b);
VYRE_API Expr bit_and(Expr a, Expr b);
VYRE_API Expr bit_or(Expr a, Expr b);
VYRE_API Expr bit_xor(Expr a, Expr b);
VYRE_API Expr shl(Expr a, Expr b);
VYRE_API Expr shr(Expr a, Expr b);
VYRE_API Expr eq(Expr a, Expr b);
VYRE_API Expr ne(Expr a, Expr b);
VYRE_API Expr lt(Expr a, Expr b);
VYRE_API Expr le(Expr a, Expr b);
VYRE_API Expr gt(Expr a, Expr b);
VYRE_API Expr ge(Expr a, Expr b);
VYRE_API Expr land(Expr a, Expr b);
VYRE_API Expr lor(Expr a, Expr b);
VYRE_API Expr pow(Expr a, Expr b);
VYRE_API Expr atan2(Expr a, Expr b);

// unary operators
VYRE_API Expr neg(Expr a);
VYRE_API Expr abs(Expr a);
VYRE_API Expr logical_not(Expr a);
VYRE_API Expr bit_not(Expr a);

// three operands
VYRE_API Expr fma(Expr a, Expr b, Expr c);
VYRE_API Expr clamp(Expr x, Expr lo, Expr hi);
VYRE_API Expr select(Expr cond, Expr if_true, Expr if_false);

// conversions
VYRE_API Expr cast(ScalarType to, Expr value);
VYRE_API Expr bitcast(ScalarType to, Expr value);

// atomics
VYRE_API Expr atomic(AtomicOp op, std::string buffer, Expr index, Expr value);
VYRE_API Expr atomic_compare_exchange(std::string buffer, Expr index, Expr expected, Expr value);
VYRE_API Expr atomic_load(std::string buffer, Expr index);

// statements
VYRE_API Stmt let(std::string name, Expr value);
VYRE_API Stmt assign(std::string name, Expr value);
VYRE_API Stmt store(std::string buffer, Expr index, Expr value);
VYRE_API Stmt if_(Expr cond, std::vector<Stmt> then_body, std::vector<Stmt> else_body = {});
VYRE_API Stmt loop(std::string var, Expr from, Expr to, std::vector<Stmt> body);
// A loop counting by `step`, a literal of the bounds' type (format version 4):
// up while var < to for a positive step, down while var > to for a negative
// i32 one. A step of 1 gives the loop above.
VYRE_API Stmt loop(std::string var, Expr from, Expr to, Expr step, std::vector<Stmt> body);
VYRE_API Stmt while_(Expr cond, std::vector<Stmt> body);
// A private array of `count` zeroed elements (format version 4); load and
// store name it as they name a buffer.
VYRE_API Stmt array(std::string name, ScalarType element_type, uint32_t count);
VYRE_API Stmt break_();
VYRE_API Stmt continue_();
VYRE_API Stmt barrier(BarrierKind kind = BarrierKind::Workgroup);
VYRE_API Stmt eval(Expr e);
VYRE_API Stmt return_();

class VYRE_API ProgramBuilder {
 public:
  explicit ProgramBuilder(std::string name = {});

  ProgramBuilder& workgroup_size(uint32_t x, uint32_t y = 1, uint32_t z = 1);
  // Declares the launch domain: one invocation per element of this buffer
  // (format version 2), or in its row-major shape, {H, W} or {D, H, W}, x
  // along the last extent (format version 3; the buffer's count is their
  // product).
  ProgramBuilder& domain(std::string buffer, std::vector<uint32_t> shape = {});
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
