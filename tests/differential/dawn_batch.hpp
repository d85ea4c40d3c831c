// Running generated cases on Dawn, Chromium's WebGPU on SwiftShader
// (tests/dawn/): a second WGSL compiler (Tint, with WGSL's full uniformity
// analysis) and a second device. One Chromium run serves a whole batch.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "differential/generated_case.hpp"
#include "vyre/dispatch.hpp"

namespace vyre::differential {

struct DawnResult {
  std::optional<Outputs> outputs;
  std::string error;  // shader or pipeline creation, or the dispatch, failed
};

struct DawnBatch {
  std::string skipped;  // why Dawn did not run (no Chromium here)
  std::string adapter;
  std::vector<DawnResult> results;  // one per case, in order
};

// Throws std::runtime_error when Chromium runs but gives no result.
DawnBatch run_on_dawn(const std::vector<const GeneratedCase*>& cases);

}  // namespace vyre::differential
