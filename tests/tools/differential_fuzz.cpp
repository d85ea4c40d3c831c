// The differential tester from the command line:
//
//   differential_fuzz --seeds 10000 --start 0 [--out DIR]   run seeds, shrink and save each failure
//   differential_fuzz --show SEED [--wgsl]                   print one seed's case and verdict
//   differential_fuzz --replay DIR_OR_NAME.json... [--dawn]  run saved reproducers again
//
// Progress goes to stderr; the summary and findings to stdout. Exit 1 when
// anything failed.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "differential/choice_stream.hpp"
#include "differential/fuzz_campaign.hpp"
#include "differential/reproducer_files.hpp"
#include "vyre/json.hpp"

using namespace vyre;
using namespace vyre::differential;

namespace {

int show(uint64_t seed, bool wgsl) {
  GeneratedCase c = generate_case(seed);
  std::cout << program_to_json(c.program) << "\n";
  for (const auto& [name, values] : c.contents) std::cout << "input " << name << ": " << values.size() << " values\n";
  for (const auto& [name, n] : c.sizes) std::cout << "size " << name << ": " << n << "\n";
  if (c.grid) std::cout << "grid " << (*c.grid)[0] << "," << (*c.grid)[1] << "," << (*c.grid)[2] << "\n";
  gpu::Backend backend = make_backend();
  RunResult r = run_differential(backend, c);
  if (wgsl) std::cout << r.wgsl << "\n";
  std::cout << "seed " << seed << ": " << to_string(r.outcome) << (r.detail.empty() ? "" : "\n" + r.detail) << "\n";
  return r.outcome == Outcome::agree ? 0 : 1;
}

int replay(const std::vector<std::string>& arguments, bool dawn) {
  // A folder stands for every reproducer in it; the .run.json and
  // .found.json files beside a NAME.json are read with it.
  std::vector<std::filesystem::path> files;
  for (const auto& a : arguments) {
    if (std::filesystem::is_directory(a)) {
      for (auto& f : list_reproducers(a)) files.push_back(f);
    } else if (is_reproducer_program(a)) {
      files.push_back(a);
    }
  }
  std::vector<Reproducer> cases;
  for (const auto& file : files) cases.push_back(load_reproducer(file));
  gpu::Backend backend = make_backend();
  int failed = 0;
  std::vector<const GeneratedCase*> on_dawn;
  for (size_t i = 0; i < cases.size(); ++i) {
    RunResult r = run_differential(backend, cases[i].c);
    std::cout << files[i].string() << ": " << to_string(r.outcome) << (r.detail.empty() ? "" : "\n" + r.detail) << "\n";
    failed += r.outcome != Outcome::agree;
    if (dawn && r.reference) on_dawn.push_back(&cases[i].c);
  }
  if (dawn && !on_dawn.empty()) {
    const DawnBatch batch = run_on_dawn(on_dawn);
    if (!batch.skipped.empty()) {
      std::cout << "Dawn: " << batch.skipped << "\n";
      return 1;
    }
    for (size_t i = 0; i < on_dawn.size(); ++i) {
      const RunResult r = judge_dawn(*on_dawn[i], *run_reference(*on_dawn[i]).reference, batch.results[i]);
      std::cout << "on Dawn, seed " << on_dawn[i]->seed << ": " << to_string(r.outcome)
                << (r.detail.empty() ? "" : "\n" + r.detail) << "\n";
      failed += r.outcome != Outcome::agree;
    }
  }
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Random programs on the reference interpreter and the GPU, compared"};
  uint64_t seeds = 1000, start = 0;
  std::string out = "differential_findings";
  bool no_shrink = false, wgsl = false, dawn = false;
  size_t shrink_attempts = 1000;
  std::optional<uint64_t> show_seed;
  std::vector<std::string> replay_files;
  app.add_option("--seeds", seeds, "Number of seeds to run");
  app.add_option("--start", start, "First seed");
  app.add_option("--out", out, "Folder for reproducers (NAME.json, NAME.run.json, NAME.found.json)");
  app.add_flag("--no-shrink", no_shrink, "Save failures as generated, without shrinking");
  app.add_flag("--dawn", dawn, "Also run every case on Dawn (Chromium's WebGPU), one Chromium run per 500 cases");
  app.add_option("--shrink-attempts", shrink_attempts, "Most runs spent shrinking one failure");
  app.add_option("--show", show_seed, "Print one seed's program, inputs and verdict");
  app.add_flag("--wgsl", wgsl, "With --show: print the shader too");
  app.add_option("--replay", replay_files, "Run saved reproducers again (NAME.json files, or folders of them)");
  CLI11_PARSE(app, argc, argv);

  try {
    if (show_seed) return show(*show_seed, wgsl);
    if (!replay_files.empty()) return replay(replay_files, dawn);

    CampaignOptions options;
    options.first_seed = start;
    options.seeds = seeds;
    options.shrink = !no_shrink;
    options.shrink_attempts = shrink_attempts;
    options.save_to = out;
    options.dawn = dawn;
    auto last_print = std::chrono::steady_clock::now();
    uint64_t done = 0;
    std::map<Outcome, uint64_t> counts;
    options.on_seed = [&](uint64_t, const RunResult& r) {
      ++done;
      ++counts[r.outcome];
      const auto now = std::chrono::steady_clock::now();
      if (now - last_print > std::chrono::seconds(2) || done == seeds) {
        last_print = now;
        std::fprintf(stderr, "[%llu/%llu] agree %llu, failed %llu\n", static_cast<unsigned long long>(done),
                     static_cast<unsigned long long>(seeds), static_cast<unsigned long long>(counts[Outcome::agree]),
                     static_cast<unsigned long long>(done - counts[Outcome::agree]));
      }
    };
    options.on_finding = [&](const Finding& f) {
      std::cout << "seed " << f.seed << ": " << to_string(f.outcome) << " (" << f.original_nodes << " nodes, shrunk to "
                << f.shrunk_nodes << " in " << f.shrink_attempts << " runs) -> " << f.saved_as.string() << "\n"
                << f.detail << "\n";
    };
    CampaignReport report = run_campaign(options);
    std::cout << report.ran << " seeds from " << start << " in " << report.seconds << " s:";
    for (const auto& [outcome, n] : report.outcomes) std::cout << " " << to_string(outcome) << " " << n << ";";
    if (dawn) {
      std::cout << " on Dawn:";
      if (!report.dawn_skipped.empty()) std::cout << " skipped (" << report.dawn_skipped << ")";
      for (const auto& [outcome, n] : report.dawn_outcomes) std::cout << " " << to_string(outcome) << " " << n << ";";
    }
    std::cout << "\n";
    return report.findings.empty() ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "differential_fuzz: " << e.what() << "\n";
    return 2;
  }
}
