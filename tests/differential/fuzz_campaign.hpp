// A run over many seeds: generate, run on both backends, and for each
// failure shrink it and save a reproducer. Shared by the test
// (tests/differential_test.cpp) and the command-line driver
// (tests/tools/differential_fuzz.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "differential/differential_run.hpp"
#include "differential/random_program.hpp"

namespace vyre::differential {

struct CampaignOptions {
  uint64_t first_seed = 0;
  uint64_t seeds = 100;
  bool shrink = true;
  size_t shrink_attempts = 1000;  // most runs spent shrinking one failure
  std::optional<std::filesystem::path> save_to;  // folder for reproducers; none: keep nothing
  // Run every case on wgpu-native (the GPU backend), and also, or only, on
  // Dawn (Chromium), in batches of one Chromium run.
  bool wgpu_native = true;
  // Run each case on wgpu-native in the configuration Backend::tune picks
  // (docs/tuning.md) instead of the program's own.
  bool tune = false;
  // The lowering's passes (ShaderOptions::passes), and length
  // specialization: each runtime-sized buffer's length, as dispatched, fixed
  // in the shader (ShaderOptions::fixed_lengths).
  bool passes = true;
  bool specialize_lengths = false;
  // A ULP budget for every case (ShaderOptions::ulp_budget): the faster
  // forms must stay within WGSL's accuracy, which the comparison allows.
  std::optional<uint8_t> ulp_budget;
  bool dawn = false;
  size_t dawn_batch = 500;
  size_t dawn_shrink_attempts = 120;  // each one a Chromium run
  GeneratorOptions generator;
  // Called after each seed, and with each finding.
  std::function<void(uint64_t seed, const RunResult&)> on_seed;
  std::function<void(const struct Finding&)> on_finding;
};

struct Finding {
  uint64_t seed = 0;
  Outcome outcome = Outcome::agree;
  std::string detail;             // of the shrunk case
  std::string original_detail;
  size_t original_nodes = 0;      // statements and expressions
  size_t shrunk_nodes = 0;
  size_t shrink_attempts = 0;
  std::filesystem::path saved_as;  // NAME.json, when saved
};

struct CampaignReport {
  uint64_t ran = 0;
  std::map<Outcome, uint64_t> outcomes;       // on wgpu-native
  std::map<Outcome, uint64_t> dawn_outcomes;  // on Dawn
  std::string dawn_skipped;                   // why Dawn did not run
  std::vector<Finding> findings;
  uint64_t refused_by_loop_guard = 0;  // agreed by failing loudly (a loop the driver cut short)
  uint64_t retuned = 0;                // tuned runs whose configuration was not the program's own
  double seconds = 0;
};

CampaignReport run_campaign(const CampaignOptions& options);

// A Backend without a disk cache, on the default adapter.
gpu::Backend make_backend();

}  // namespace vyre::differential
