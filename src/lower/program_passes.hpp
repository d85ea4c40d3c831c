// Program -> program passes that keep the format's semantics exactly, run
// before the WGSL is written (docs/lowering.md, "Passes"). Each takes a
// checked program (its facts name types and local slots) and returns a new
// program, which the next pass checks again. None changes a buffer, so the
// shader interface of the original program stays the interface of the
// result.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "vyre/checked.hpp"
#include "vyre/program.hpp"
#include "vyre/shader_options.hpp"

namespace vyre::passes {

// `s` without its expressions and bodies, which a pass rebuilds: every other
// field (a name, a barrier's kind, an array's type and count) carries over.
inline Stmt without_children(const Stmt& s) {
  Stmt out;
  out.op = s.op;
  out.name = s.name;
  out.barrier = s.barrier;
  out.element_type = s.element_type;
  out.count = s.count;
  return out;
}

// Folds operators whose operands are literals into literals (computed with
// the format's operators, ir/scalar_ops.hpp), where WGSL's own evaluation
// could not give another result; replaces `len` of fixed-size buffers and of
// buffers in `fixed_lengths` by its value; propagates literals held by
// locals never reassigned; settles `&&`, `||` and `select` whose condition
// is a literal; and settles u32 comparisons that the ranges of their
// operands decide (a loop variable between literal bounds, an invocation's
// place in its workgroup of size `workgroup`, masks and remainders), which
// is how bounds checks against a fixed length disappear.
Program fold_constants(const CheckedProgram& program, const std::map<std::string, uint32_t>& fixed_lengths,
                       const Dim3& workgroup);

// Removes what cannot run or whose result nothing reads: branches and
// loops whose condition is a literal that rules them out, statements after
// a return, break or continue, locals never read, and evaluations without
// atomics.
Program remove_dead_code(const CheckedProgram& program);

// Computes once an expression that a block repeats (without loads or
// atomics, over locals never reassigned), in a new local before the first
// statement that uses it.
Program share_common_subexpressions(const CheckedProgram& program);

// fold_constants (with options.fixed_lengths and the effective workgroup
// size), then remove_dead_code and share_common_subexpressions,
// each on the checked result of the one before. A pass whose result does not
// check (a limit it would cross) is skipped, so the passes never make a
// valid program fail.
// Folding alone when only fixed lengths are asked for (options.passes off).
CheckedProgram run_passes(const CheckedProgram& program, const ShaderOptions& options);

}  // namespace vyre::passes
