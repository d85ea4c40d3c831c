// The AOT cache's hit path against lowering, and lookup time as the cache
// grows. Numbers: docs/benchmarks.md.
//
//   build/bench/aot_cache_bench                       (all)
//   build/bench/aot_cache_bench --benchmark_filter=Lookup
//
// Each benchmark also reports the 50th and 99th percentile of single
// operations (p50_us, p99_us). The cache lives under $TMPDIR; the 100,000-
// entry cache takes a while to fill the first time it is needed.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "samples/programs.hpp"
#include "vyre/aot.hpp"
#include "vyre/lower.hpp"

namespace {

// Chains of arithmetic over a loaded value, so that the lowering has real
// work (names, types, operators).
const std::vector<int> kProgramSizes = {10, 300, 5000};

const vyre::CheckedProgram& program(int statements) {
  static std::map<int, vyre::CheckedProgram> programs;
  auto it = programs.find(statements);
  if (it == programs.end()) it = programs.emplace(statements, vyre::samples::chain_program(statements)).first;
  return it->second;
}

std::filesystem::path bench_root() {
  static std::filesystem::path root = [] {
    auto dir = std::filesystem::temp_directory_path() / ("vyre-aot-bench-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(std::filesystem::temp_directory_path() /
                                      ("vyre-aot-bench-" + std::to_string(::getpid())),
                                  ec);
    });
    return dir;
  }();
  return root;
}

vyre::aot::CacheOptions unbounded(const std::filesystem::path& dir) {
  vyre::aot::CacheOptions options;
  options.directory = dir;
  options.max_bytes = 0;
  options.max_entries = 0;
  return options;
}

// Times each iteration on its own to report percentiles.
class Samples {
 public:
  void add(std::chrono::steady_clock::duration d) { us_.push_back(std::chrono::duration<double, std::micro>(d).count()); }
  void report(benchmark::State& state) {
    if (us_.empty()) return;
    std::sort(us_.begin(), us_.end());
    auto at = [&](double q) { return us_[std::min(us_.size() - 1, static_cast<size_t>(q * static_cast<double>(us_.size())))]; };
    state.counters["p50_us"] = at(0.50);
    state.counters["p99_us"] = at(0.99);
  }

 private:
  std::vector<double> us_;
};

template <class Fn>
void timed_loop(benchmark::State& state, Fn&& fn) {
  Samples samples;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    fn();
    samples.add(std::chrono::steady_clock::now() - start);
  }
  samples.report(state);
}

// Lowering alone: what a miss costs on top of the key and the publication.
void BM_Lower(benchmark::State& state) {
  const vyre::CheckedProgram& p = program(static_cast<int>(state.range(0)));
  timed_loop(state, [&] { benchmark::DoNotOptimize(vyre::lower_to_wgsl(p)); });
  state.counters["wgsl_bytes"] = static_cast<double>(vyre::lower_to_wgsl(p).size());
}

// A hit as a dispatch sees it: key parts (wire bytes, digest, shaping),
// key, bounded reads of both files, TOML parse, SHA-256 of the WGSL.
void BM_Hit(benchmark::State& state) {
  const vyre::CheckedProgram& p = program(static_cast<int>(state.range(0)));
  auto dir = bench_root() / ("hit-" + std::to_string(state.range(0)));
  vyre::aot::Cache cache(unbounded(dir));
  cache.load_or_compile(p, "bench");
  timed_loop(state, [&] {
    auto a = cache.load_or_compile(p, "bench");
    if (!a.cache_hit) state.SkipWithError("expected a hit");
    benchmark::DoNotOptimize(a);
  });
}

// A miss: lowering plus publication (two temporary files renamed into place).
void BM_Miss(benchmark::State& state) {
  const vyre::CheckedProgram& p = program(static_cast<int>(state.range(0)));
  auto dir = bench_root() / ("miss-" + std::to_string(state.range(0)));
  vyre::aot::Cache cache(unbounded(dir));
  // A fresh fingerprint each time, across every run of this function: the
  // same lowering under a new key.
  static uint64_t n = 0;
  double lower_ms = 0;
  timed_loop(state, [&] {
    auto a = cache.load_or_compile(p, "bench-" + std::to_string(n++));
    if (a.cache_hit) state.SkipWithError("expected a miss");
    lower_ms += a.lower_ms;
    benchmark::DoNotOptimize(a);
  });
  state.counters["lower_us"] = 1000.0 * lower_ms / static_cast<double>(state.iterations());
}

// The key alone (wire bytes, digest, shaping signature, two SHA-256s).
void BM_Key(benchmark::State& state) {
  const vyre::CheckedProgram& p = program(static_cast<int>(state.range(0)));
  timed_loop(state, [&] { benchmark::DoNotOptimize(vyre::aot::key_parts(p, "bench").key()); });
}

vyre::aot::KeyParts synthetic_parts(int i) {
  vyre::aot::KeyParts parts;
  parts.program_digest = vyre::aot::cache_key("bench-program", std::to_string(i));  // any 64 hex
  parts.lowering_version = vyre::kLoweringVersion;
  parts.vyre_version = "bench";
  parts.fingerprint = "backend=bench";
  return parts;
}

std::string synthetic_wgsl(int i) {
  std::string text = "// program " + std::to_string(i) + "\n";
  while (text.size() < 2048) text += "fn f() -> u32 { return 1u; }\n";
  return text;
}

// A directory holding `entries` entries, filled once through the cache.
std::filesystem::path directory_with(int entries) {
  auto dir = bench_root() / ("lookup-" + std::to_string(entries));
  if (!std::filesystem::exists(dir)) {
    vyre::aot::Cache cache(unbounded(dir));
    for (int i = 0; i < entries; ++i) cache.load_or_compile(synthetic_parts(i), [&] { return synthetic_wgsl(i); });
  }
  return dir;
}

// A hit by key in a directory of 10, 1,000 or 100,000 entries, at random
// keys (the key is given, so this is the store's lookup alone).
void BM_Lookup(benchmark::State& state) {
  const int entries = static_cast<int>(state.range(0));
  vyre::aot::Cache cache(unbounded(directory_with(entries)));
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> pick(0, entries - 1);
  std::vector<vyre::aot::KeyParts> keys;
  for (int i = 0; i < 4096; ++i) keys.push_back(synthetic_parts(pick(rng)));
  size_t next = 0;
  auto never = []() -> std::string { std::abort(); };
  timed_loop(state, [&] {
    auto a = cache.load_or_compile(keys[next++ % keys.size()], never);
    benchmark::DoNotOptimize(a);
  });
}

// A miss in a directory of that size: the lookup that finds nothing.
void BM_LookupAbsent(benchmark::State& state) {
  const int entries = static_cast<int>(state.range(0));
  vyre::aot::CacheOptions options = unbounded(directory_with(entries));
  options.directory.reset();  // no publication: measure the failed lookups alone
  options.readonly_directories = {directory_with(entries)};
  vyre::aot::Cache cache(options);
  static int n = 0;
  timed_loop(state, [&] {
    auto a = cache.load_or_compile(synthetic_parts(-1 - n++), [] { return std::string(); });
    if (a.cache_hit) state.SkipWithError("expected a miss");
    benchmark::DoNotOptimize(a);
  });
}

}  // namespace

BENCHMARK(BM_Lower)->Arg(10)->Arg(300)->Arg(5000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Key)->Arg(10)->Arg(300)->Arg(5000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Hit)->Arg(10)->Arg(300)->Arg(5000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Miss)->Arg(10)->Arg(300)->Arg(5000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Lookup)->Arg(10)->Arg(1000)->Arg(100000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LookupAbsent)->Arg(10)->Arg(1000)->Arg(100000)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
