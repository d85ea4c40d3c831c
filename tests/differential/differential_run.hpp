// Running one case on the reference interpreter and on the GPU, and the
// verdict.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "differential/dawn_batch.hpp"
#include "differential/generated_case.hpp"
#include "differential/output_comparison.hpp"
#include "vyre/gpu.hpp"

namespace vyre::differential {

enum class Outcome {
  agree,
  mismatch,         // the outputs differ beyond the comparison rules
  gpu_error,        // compiling or dispatching on the GPU failed
  reference_error,  // the reference interpreter failed
  invalid_program,  // the generator made a program vyre::validate refuses: a generator bug
  dawn_mismatch,    // Dawn's outputs differ from the reference's beyond the rules
  dawn_error,       // Dawn (Tint) refused the shader, or its dispatch failed
};

std::string_view to_string(Outcome outcome);

struct RunResult {
  Outcome outcome = Outcome::agree;
  std::string detail;  // the first differences, the error, or the diagnostics
  std::optional<Outputs> reference;
  std::optional<Outputs> gpu;
  std::vector<Difference> differences;
  std::string wgsl;  // the shader, when it was compiled
  bool device_lost = false;
  // The adapter's loop guard failed the dispatch (a loop the driver cut
  // short, docs/conformance.md): the right answer there, so the outcome is
  // agree; counted apart.
  bool refused_by_loop_guard = false;
  // Tuned runs: the configuration ran differs from the program's own.
  bool retuned = false;
};

// With `tuned`, the GPU runs the configuration Backend::tune picks (one
// timed dispatch per candidate), and RunResult::tuned says what it was.
RunResult run_differential(gpu::Backend& backend, const GeneratedCase& c, bool tuned = false);

// The reference alone (for the shrinker's cheap checks and for replays).
RunResult run_reference(const GeneratedCase& c);

// The verdict on Dawn's result for a case whose reference outputs are known.
RunResult judge_dawn(const GeneratedCase& c, const Outputs& reference, const DawnResult& dawn);

// The reference and Dawn, for one case (one Chromium run: slow).
RunResult run_reference_and_dawn(const GeneratedCase& c);

}  // namespace vyre::differential
