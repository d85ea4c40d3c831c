// The random program generator of the differential tester: well-typed,
// valid programs whose outputs are fully determined by the format's
// semantics, with their inputs and comparison rules.
//
// What keeps every generated program comparable (docs/conformance.md,
// "Differential testing"):
// - every index is in bounds by construction (an owned element, or an index
//   taken modulo the buffer's nonzero length), so no access is unspecified;
// - an invocation writes only elements it owns; shared counters get only
//   commutative read-modify-writes whose old values are dropped; workgroup
//   memory (and group-shared storage) is written to the invocation's own
//   slots and read by others only after a barrier of its kind; barriers
//   stand only in uniform control flow;
// - every loop has a small bound (a `while` is guarded by a counter);
// - f32 arithmetic stays in an exact domain (exact_range.hpp), and each
//   imprecise operation (division, transcendentals, ...) feeds an output
//   compared with the bound WGSL gives for it.
#pragma once

#include <cstdint>

#include "differential/choice_stream.hpp"
#include "differential/generated_case.hpp"

namespace vyre::differential {

struct GeneratorOptions {
  int max_block_statements = 4;  // statements per block
  int max_nesting = 3;           // nested if / loop / while
  int max_expression_depth = 3;
  uint32_t max_invocations = 256;
  uint32_t packed_percent = 20;  // the chance, in percent, that an input or output holds u8, i8, u16, i16 or bool
};

// Builds a case from the decisions of `choices`. The program is not
// validated here: the caller checks it with vyre::validate, and an invalid
// one is a bug in the generator.
GeneratedCase generate_case(ChoiceStream& choices, const GeneratorOptions& options = {});

// The case of one seed.
GeneratedCase generate_case(uint64_t seed, const GeneratorOptions& options = {});

}  // namespace vyre::differential
