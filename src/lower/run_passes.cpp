// The order of the passes: folding settles conditions and lengths, which
// lets dead-code elimination drop what they rule out, and sharing then sees
// only the expressions that remain.
#include "lower/program_passes.hpp"
#include <exception>
#include <functional>
#include <optional>

#include "util/log.hpp"

namespace vyre::passes {
namespace {

// The checked form of a pass's result; nullopt when the pass changed
// nothing (no check then), or when it threw or its result does not check:
// the input then goes on as it was, so a pass can never make a valid
// program fail. Either is a bug in the pass, said as a warning; one that
// throws fails the conformance suite and the differential tester.
std::optional<CheckedProgram> attempt(const CheckedProgram& input, const std::function<Program()>& pass,
                                      const char* name) {
  Program result;
  try {
    result = pass();
  } catch (const std::exception& e) {
    log::warn("lowering: {} threw for '{}', a bug in the pass (the program goes on without it): {}", name,
              input.name(), e.what());
    return std::nullopt;
  }
  if (result == input.program()) return std::nullopt;
  try {
    return CheckedProgram(std::move(result));
  } catch (const std::exception& e) {
    log::warn("lowering: {} made a program that does not check for '{}', a bug in the pass (the program goes on "
              "without it): {}",
              name, input.name(), e.what());
    return std::nullopt;
  }
}

}  // namespace

CheckedProgram run_passes(const CheckedProgram& program, const ShaderOptions& options) {
  if (!options.passes && options.fixed_lengths.empty()) return program;
  const Dim3 workgroup = effective_workgroup_size(program, options);
  CheckedProgram current = program;
  if (auto folded = attempt(current, [&] { return fold_constants(current, options.fixed_lengths, workgroup); },
                            "constant folding"))
    current = *folded;
  if (!options.passes) return current;
  // Removing a statement can leave a local unread that was read only there.
  for (int round = 0; round < 4; ++round) {
    std::optional<CheckedProgram> pruned = attempt(current, [&] { return remove_dead_code(current); }, "dead-code elimination");
    if (!pruned) break;
    current = *pruned;
  }
  if (auto shared = attempt(current, [&] { return share_common_subexpressions(current); }, "common-subexpression elimination")) current = *shared;
  return current;
}

}  // namespace vyre::passes
