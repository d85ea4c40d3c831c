// The operator cases of the conformance suite: each operator and type with
// its edge-value operands, the programs that apply it (operands loaded from
// buffers, or as literals), and the rule that decides whether a device's
// result is acceptable next to the reference's (docs/conformance.md).
// Shared by the GPU conformance test and the second-implementation test.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vyre/dispatch.hpp"
#include "vyre/program.hpp"

namespace vyre::test::conformance {

using Tuple = std::vector<uint32_t>;
// Decides whether a device's result is acceptable given the operands and
// the reference's result.
using Accept = std::function<bool(const Tuple& in, uint32_t ref, uint32_t device)>;

struct Case {
  std::string name;
  Op op;
  uint32_t imm = 0;  // target type of a conversion
  std::vector<ScalarType> operands;
  ScalarType result;
  std::vector<Tuple> tuples;
  Accept accept;
};

const std::vector<std::unique_ptr<Case>>& all_cases();

// The reference's scalar semantics applied to one tuple.
uint32_t evaluate(const Case& c, const Tuple& in);

// out[i] = op(in0[i], in1[i], ...), operands loaded from buffers.
Program loaded_program(const Case& c);
Inputs loaded_inputs(const Case& c);
// out[k] = op(literal, ...) for every tuple k, in one invocation (grid 1).
Program literal_program(const Case& c);
Inputs literal_inputs(const Case& c);

std::string describe(const Case& c, const Tuple& in);

// Programs exercising whole constructs with integer results that compare
// exactly: invocation builtins in three dimensions, workgroup memory
// starting zeroed, atomics of every kind, control flow of every kind.
struct Scenario {
  std::string name;
  Program program;
  Inputs inputs;
  ShaderOptions options;
  std::optional<Dim3> grid;  // the launch's
};
std::vector<Scenario> construct_scenarios();

}  // namespace vyre::test::conformance
