// Questions the lowering and its passes ask of an expression tree.
#pragma once

#include "vyre/program.hpp"

namespace vyre::lowering {

inline bool is_literal(const Expr& e) { return op_info(e.op).cls == OpClass::Literal; }

// Whether evaluating the expression has an effect: only atomics have one.
inline bool holds_atomic(const Expr& e) {
  if (e.op == Op::Atomic) return true;
  for (const Expr& a : e.args)
    if (holds_atomic(a)) return true;
  return false;
}

}  // namespace vyre::lowering
