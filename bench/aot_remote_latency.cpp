// Remote hit latency against a local hit and against lowering, for the
// remote tier on one Redis server or a Redis Cluster. scripts/bench_remote
// starts the servers on loopback and runs this; numbers: docs/benchmarks.md.
//
//   aot_remote_latency --remote URL [--label NAME] [--reps N]
//
// Prints one JSON line per program size: the median of each path in
// microseconds and the ratios.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "samples/programs.hpp"
#include "vyre/aot.hpp"
#include "vyre/lower.hpp"

namespace {

template <class F>
double median_us(int reps, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string url, label = "remote";
  int reps = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--remote") == 0) url = argv[i + 1];
    if (std::strcmp(argv[i], "--label") == 0) label = argv[i + 1];
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::atoi(argv[i + 1]);
  }
  if (url.empty()) {
    std::fprintf(stderr, "usage: aot_remote_latency --remote URL [--label NAME] [--reps N]\n");
    return 2;
  }
  const auto root = std::filesystem::temp_directory_path() / ("vyre-remote-bench-" + std::to_string(::getpid()));
  for (int statements : {10, 300, 5000}) {
    const vyre::CheckedProgram program = vyre::samples::chain_program(statements);
    const std::string fingerprint = "bench-" + std::to_string(::getpid());
    vyre::aot::CacheOptions local_only;
    local_only.directory = root / ("local-" + std::to_string(statements));
    vyre::aot::CacheOptions remote_only;  // no local directory: every lookup asks the remote
    remote_only.remote.emplace();
    remote_only.remote->url = url;
    vyre::aot::Cache local(local_only), remote(remote_only);
    local.load_or_compile(program, fingerprint);
    remote.load_or_compile(program, fingerprint);  // publishes
    const double lower = median_us(std::max(5, reps / 10), [&] { (void)vyre::lower_to_wgsl(program); });
    const double local_hit = median_us(reps, [&] { (void)local.load_or_compile(program, fingerprint); });
    const double remote_hit = median_us(reps, [&] {
      if (!remote.load_or_compile(program, fingerprint).cache_hit) std::fprintf(stderr, "remote miss!\n");
    });
    std::printf(
        "{\"tier\":\"%s\",\"statements\":%d,\"lower_us\":%.1f,\"local_hit_us\":%.1f,\"remote_hit_us\":%.1f,"
        "\"remote_over_local\":%.2f,\"lower_over_remote\":%.2f}\n",
        label.c_str(), statements, lower, local_hit, remote_hit, remote_hit / local_hit, lower / remote_hit);
  }
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
  return 0;
}
