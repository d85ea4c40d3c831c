// What validation learns about a valid program, recorded as it checks: the
// facts a CheckedProgram answers from. Keyed by node address, so they are
// only meaningful for the program object that was checked.
#pragma once

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "vyre/error.hpp"
#include "vyre/program.hpp"

namespace vyre::ir {

struct CheckedFacts {
  std::unordered_map<const Expr*, ScalarType> types;
  std::unordered_map<const void*, uint32_t> slots;    // Var exprs; Let, Assign, Loop stmts
  std::unordered_map<const void*, uint32_t> buffers;  // Load, Len, Atomic exprs; Store stmts
  // Load exprs and Store stmts of a private array's elements: the array's
  // slot; and each array's declaration by slot.
  std::unordered_map<const void*, uint32_t> arrays;
  std::unordered_map<uint32_t, const Stmt*> array_declarations;
  uint32_t local_count = 0;
  std::vector<bool> reassigned;  // by slot: an assign statement writes the local
  std::vector<bool> atomic;  // indexed like Program::buffers
  bool has_barrier = false;
  bool has_loop = false;  // a loop or while statement anywhere
  std::bitset<64> ops;    // by Op: an expression with that operator occurs
  static_assert(static_cast<size_t>(Op::Atomic) < 64, "ops holds one bit per operator");
};

// Validates `program`, recording facts as it goes (when `facts` is given).
// The facts are complete only when no diagnostic is returned.
std::vector<Diagnostic> check(const Program& program, CheckedFacts* facts);

// How many programs this process has checked (validate() and
// CheckedProgram alike): the tests' proof that each stage takes the checked
// form instead of validating again.
uint64_t checks_run();

}  // namespace vyre::ir
