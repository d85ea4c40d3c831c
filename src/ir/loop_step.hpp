// A loop step of 1 is the loop without a step: the readers and the builder
// drop it and validation refuses it stored, so one program has one encoding.
#pragma once

#include "vyre/program.hpp"

namespace vyre {

inline bool is_unit_step(const Expr& step) {
  return (step.op == Op::LitU32 || step.op == Op::LitI32) && step.imm == 1;
}

}  // namespace vyre
