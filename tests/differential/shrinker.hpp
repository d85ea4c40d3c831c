// Shrinking a failing case to a small reproducer.
//
// First on the generator's decisions (choice_stream.hpp): whole chunks are
// deleted, zeroed and lowered, and a change is kept when the regenerated
// case still fails the same way. Every candidate is a program the generator
// built, so it is valid, race-free and terminating by construction; this
// removes statements, turns expressions into literals, drops buffers and
// shrinks the workgroup, the grid and the inputs.
//
// Then on the case itself, with edits that keep those guarantees: deleting
// statements (never a barrier or anything holding one, never the counter
// step of a `while`), replacing stored, evaluated and integer or bool local
// values by a literal or by one of their operands, shortening inputs that
// are only indexed modulo their length, simplifying input values, and
// dropping buffers nothing uses.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "differential/generated_case.hpp"
#include "differential/random_program.hpp"

namespace vyre::differential {

// True when the case still fails as the original did.
using StillFails = std::function<bool(const GeneratedCase&)>;

struct ShrinkOptions {
  size_t max_attempts = 600;       // runs of `still_fails` on the decisions
  size_t max_case_attempts = 400;  // and then on the case
  GeneratorOptions generator;
};

struct ShrinkResult {
  GeneratedCase smallest;
  std::vector<uint32_t> decisions;  // of the smallest generated case, before the edits on the case
  size_t attempts = 0;
  size_t accepted = 0;
};

ShrinkResult shrink(const std::vector<uint32_t>& decisions, const StillFails& still_fails,
                    const ShrinkOptions& options = {});

// The second stage alone, on any generated case.
GeneratedCase shrink_case(GeneratedCase c, const StillFails& still_fails, size_t max_attempts, size_t* attempts = nullptr);

}  // namespace vyre::differential
