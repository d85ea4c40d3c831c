#include "differential/fuzz_campaign.hpp"

#include <chrono>
#include <memory>

#include "differential/choice_stream.hpp"
#include "differential/dawn_batch.hpp"
#include "differential/reproducer_files.hpp"
#include "differential/shrinker.hpp"

namespace vyre::differential {

namespace {
constexpr size_t kProgramsPerBackend = 250;
}  // namespace

gpu::Backend make_backend() {
  gpu::BackendOptions options;
  options.cache = std::make_shared<aot::Cache>(aot::CacheOptions{});
  return gpu::Backend(options);
}

CampaignReport run_campaign(const CampaignOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  CampaignReport report;
  auto backend = std::make_unique<gpu::Backend>(make_backend());
  // A Backend keeps every pipeline it compiled: a new one now and then keeps
  // memory bounded. A lost device cannot run anything more: open a new one.
  size_t compiled = 0;
  auto run = [&](const GeneratedCase& c) {
    if (++compiled % kProgramsPerBackend == 0) backend = std::make_unique<gpu::Backend>(make_backend());
    RunResult r = run_differential(*backend, c, options.tune);
    if (r.device_lost) backend = std::make_unique<gpu::Backend>(make_backend());
    return r;
  };

  // Shrinks a failure (with the check that found it), saves it, reports it.
  auto failure = [&](const GeneratedCase& c, const std::vector<uint32_t>& decisions, const RunResult& result) {
    Finding f;
    f.seed = c.seed;
    f.outcome = result.outcome;
    f.original_detail = result.detail;
    f.original_nodes = c.node_count();
    const Outcome wanted = result.outcome;
    const bool on_dawn = wanted == Outcome::dawn_mismatch || wanted == Outcome::dawn_error;
    auto check = [&](const GeneratedCase& candidate) {
      if (wanted == Outcome::invalid_program) return run_reference(candidate);
      return on_dawn ? run_reference_and_dawn(candidate) : run(candidate);
    };
    GeneratedCase smallest = c;
    RunResult final_result = result;
    if (options.shrink) {
      StillFails still_fails = [&](const GeneratedCase& candidate) { return check(candidate).outcome == wanted; };
      ShrinkOptions shrink_options;
      const size_t budget = on_dawn ? options.dawn_shrink_attempts : options.shrink_attempts;
      shrink_options.max_attempts = budget * 3 / 5;
      shrink_options.max_case_attempts = budget - shrink_options.max_attempts;
      shrink_options.generator = options.generator;
      ShrinkResult shrunk = shrink(decisions, still_fails, shrink_options);
      smallest = std::move(shrunk.smallest);
      smallest.seed = c.seed;
      f.shrink_attempts = shrunk.attempts;
      final_result = check(smallest);
    }
    f.detail = final_result.detail;
    f.shrunk_nodes = smallest.node_count();
    if (options.save_to) {
      Reproducer rep;
      rep.c = smallest;
      rep.description = "seed " + std::to_string(c.seed) + ": " + std::string(to_string(final_result.outcome));
      rep.outcome = std::string(to_string(final_result.outcome));
      rep.detail = final_result.detail;
      rep.expect = final_result.reference;
      rep.gpu = final_result.gpu;
      f.saved_as = save_reproducer(*options.save_to, "seed" + std::to_string(c.seed) + (on_dawn ? "-dawn" : ""), rep);
    }
    if (options.on_finding) options.on_finding(f);
    report.findings.push_back(std::move(f));
  };

  // Cases that agree on wgpu-native wait here for one Chromium run.
  struct Pending {
    GeneratedCase c;
    std::vector<uint32_t> decisions;
    Outputs reference;
  };
  std::vector<Pending> pending;
  auto run_pending_on_dawn = [&] {
    if (pending.empty() || !report.dawn_skipped.empty()) {
      pending.clear();
      return;
    }
    std::vector<const GeneratedCase*> cases;
    for (const auto& p : pending) cases.push_back(&p.c);
    const DawnBatch batch = run_on_dawn(cases);
    if (!batch.skipped.empty()) {
      report.dawn_skipped = batch.skipped;
      pending.clear();
      return;
    }
    for (size_t i = 0; i < pending.size(); ++i) {
      const RunResult r = judge_dawn(pending[i].c, pending[i].reference, batch.results[i]);
      ++report.dawn_outcomes[r.outcome];
      if (r.outcome != Outcome::agree) failure(pending[i].c, pending[i].decisions, r);
    }
    pending.clear();
  };

  for (uint64_t seed = options.first_seed; seed < options.first_seed + options.seeds; ++seed) {
    ChoiceStream choices = ChoiceStream::from_seed(seed);
    GeneratedCase c = generate_case(choices, options.generator);
    c.seed = seed;
    c.options.passes = options.passes;
    if (options.ulp_budget) c.options.ulp_budget = options.ulp_budget;
    if (options.specialize_lengths) {
      for (const Buffer& b : c.program.buffers) {
        if (!b.binding || !b.runtime_sized()) continue;
        auto contents = c.contents.find(b.name);
        auto size = c.sizes.find(b.name);
        if (contents != c.contents.end()) c.options.fixed_lengths[b.name] = static_cast<uint32_t>(contents->second.size());
        else if (size != c.sizes.end()) c.options.fixed_lengths[b.name] = size->second;
      }
    }
    RunResult result = options.wgpu_native ? run(c) : run_reference(c);
    ++report.ran;
    ++report.outcomes[result.outcome];
    report.refused_by_loop_guard += result.refused_by_loop_guard;
    report.retuned += result.retuned;
    if (options.on_seed) options.on_seed(seed, result);
    if (result.outcome != Outcome::agree) {
      failure(c, choices.decisions(), result);
      continue;
    }
    if (options.dawn) {
      pending.push_back({std::move(c), choices.decisions(), std::move(*result.reference)});
      if (pending.size() >= options.dawn_batch) run_pending_on_dawn();
    }
  }
  run_pending_on_dawn();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace vyre::differential
