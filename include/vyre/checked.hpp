// vyre::CheckedProgram: a program that passed validation, with what the
// validator learnt about it kept beside it (the type of every expression,
// the slot of every local, which buffers are atomic, which lengths the
// shader reads). Every later stage (the shader interface, the lowering, the
// cache key, the dispatch planner, the reference interpreter) takes this
// type, so a program is validated once per process and no stage infers a
// type or resolves a name itself.
//
// A CheckedProgram is immutable and cheap to copy (copies share one state),
// so the facts, which point into its program, stay valid as long as any
// copy lives.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "vyre/export.hpp"
#include "vyre/program.hpp"

namespace vyre {

class VYRE_API CheckedProgram {
 public:
  // Validates `program`; throws ProgramError listing every problem. Implicit,
  // so that a Program can be given wherever a checked one is taken: the check
  // then happens there, once.
  CheckedProgram(Program program);  // NOLINT(google-explicit-constructor)

  const Program& program() const;
  operator const Program&() const { return program(); }  // NOLINT(google-explicit-constructor)
  const std::string& name() const { return program().name; }

  // The type of any expression of program() (taken by address).
  ScalarType type(const Expr& e) const;
  // The slot of the local that a var expression reads, or that a let, assign
  // or loop statement writes. Slots are numbered from 0 across the whole
  // program, one per declaration, so a local never shares storage with
  // another local of the same name in a sibling block.
  uint32_t slot(const Expr& var) const;
  uint32_t slot(const Stmt& declaration_or_assignment) const;
  uint32_t local_count() const;
  // Whether an assign statement writes the local that a let statement
  // declares (a local never reassigned lowers to a WGSL `let`).
  bool reassigned(const Stmt& declaration) const;
  // The index into program().buffers of the buffer an expression (load, len,
  // atomic) or a store names.
  uint32_t buffer_index(const Expr& e) const;
  uint32_t buffer_index(const Stmt& store) const;
  // For a load or store of a private array's element (format version 4):
  // the array's slot, which is its declaration's; nullopt for a buffer's.
  std::optional<uint32_t> array_slot(const Expr& load) const;
  std::optional<uint32_t> array_slot(const Stmt& store) const;
  // The array statement that declares the array of `slot`.
  const Stmt& array_declaration(uint32_t slot) const;

  // Buffers in canonical order (bound buffers by binding, then workgroup
  // buffers by name), and the bound ones alone: the binding interface.
  const std::vector<const Buffer*>& canonical_buffers() const;
  const std::vector<const Buffer*>& bound_buffers() const;
  // True when some atomic expression names the buffer (indexed like
  // program().buffers): it is then atomic everywhere.
  bool atomic(uint32_t buffer_index) const;
  bool atomic(const Buffer& buffer) const;
  // Runtime-sized bound buffers whose `len` the program reads, canonical order.
  const std::vector<const Buffer*>& length_buffers() const;
  bool has_barrier() const;
  bool has_loop() const;  // a loop or while statement anywhere
  bool uses(Op op) const;  // an expression with this operator occurs

 private:
  struct State;
  std::shared_ptr<const State> impl_;
};

}  // namespace vyre
