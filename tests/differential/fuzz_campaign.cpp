#include "differential/fuzz_campaign.hpp"

#include <chrono>
#include <memory>

#include "differential/choice_stream.hpp"
#include "differential/reproducer_files.hpp"
#include "differential/shrinker.hpp"

namespace vyre::differential {

gpu::Backend make_backend() {
  gpu::BackendOptions options;
  options.cache = std::make_shared<aot::Cache>(aot::CacheOptions{});
  return gpu::Backend(options);
}

CampaignReport run_campaign(const CampaignOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  CampaignReport report;
  auto backend = std::make_unique<gpu::Backend>(make_backend());
  // A lost device cannot run anything more: open a new one.
  auto run = [&](const GeneratedCase& c) {
    RunResult r = run_differential(*backend, c);
    if (r.device_lost) backend = std::make_unique<gpu::Backend>(make_backend());
    return r;
  };

  for (uint64_t seed = options.first_seed; seed < options.first_seed + options.seeds; ++seed) {
    ChoiceStream choices = ChoiceStream::from_seed(seed);
    GeneratedCase c = generate_case(choices, options.generator);
    c.seed = seed;
    RunResult result = run(c);
    ++report.ran;
    ++report.outcomes[result.outcome];
    if (options.on_seed) options.on_seed(seed, result);
    if (result.outcome == Outcome::agree) continue;

    Finding f;
    f.seed = seed;
    f.outcome = result.outcome;
    f.original_detail = result.detail;
    f.original_nodes = c.node_count();
    GeneratedCase smallest = c;
    RunResult final_result = result;
    if (options.shrink) {
      const Outcome wanted = result.outcome;
      StillFails still_fails = [&](const GeneratedCase& candidate) {
        if (wanted == Outcome::invalid_program) return run_reference(candidate).outcome == wanted;
        return run(candidate).outcome == wanted;
      };
      ShrinkOptions shrink_options;
      shrink_options.max_attempts = options.shrink_attempts * 3 / 5;
      shrink_options.max_case_attempts = options.shrink_attempts - shrink_options.max_attempts;
      shrink_options.generator = options.generator;
      ShrinkResult shrunk = shrink(choices.decisions(), still_fails, shrink_options);
      smallest = std::move(shrunk.smallest);
      smallest.seed = seed;
      f.shrink_attempts = shrunk.attempts;
      final_result = wanted == Outcome::invalid_program ? run_reference(smallest) : run(smallest);
    }
    f.detail = final_result.detail;
    f.shrunk_nodes = smallest.node_count();
    if (options.save_to) {
      Reproducer rep;
      rep.c = smallest;
      rep.description = "seed " + std::to_string(seed) + ": " + std::string(to_string(final_result.outcome));
      rep.outcome = std::string(to_string(final_result.outcome));
      rep.detail = final_result.detail;
      rep.expect = final_result.reference;
      rep.gpu = final_result.gpu;
      f.saved_as = save_reproducer(*options.save_to, "seed" + std::to_string(seed), rep);
    }
    if (options.on_finding) options.on_finding(f);
    report.findings.push_back(std::move(f));
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace vyre::differential
