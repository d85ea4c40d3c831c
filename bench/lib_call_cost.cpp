// What a warm call of a standard kernel costs beside its kernels: its whole
// time (host clock) and, where the device has timestamps, its GPU time, and
// the GPU buffers it creates. Public API only, linked to the shared libvyre,
// so that one binary times two builds of the library in one session
// (LD_LIBRARY_PATH=... bench/lib_call_cost), side by side.
//
//   lib_call_cost [--large] [--reps N]
//
// Sizes: reduce, scan and compact of 4,096 and 2^20 u32, sort of 4,096 and
// 2^16 keys; --large: 2^28 u32 for reduce, scan and compact, 2^26 sort keys
// (the sizes of docs/benchmarks.md, "Standard kernels").
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "support/json_lines.hpp"
#include "vyre/gpu.hpp"
#include "vyre/lib/compact.hpp"
#include "vyre/lib/reduce.hpp"
#include "vyre/lib/scan.hpp"
#include "vyre/lib/sort.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using vyre::bench::emit;
using vyre::bench::median;

struct Call {
  std::string name;
  std::function<void()> run;
};

void measure(vyre::gpu::Backend& backend, const Call& call, int reps) {
  for (int i = 0; i < 3; ++i) call.run();
  const uint64_t before = backend.counters().buffers_created;
  call.run();
  emit(call.name + "_buffers_created", static_cast<double>(backend.counters().buffers_created - before),
       "GPU buffers a warm call created");
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto t = Clock::now();
    call.run();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
  }
  emit(call.name + "_ms", median(ms), "ms (whole warm call, host clock, median)");
  if (!backend.gpu_timing_available()) return;
  backend.set_gpu_timing(true);
  std::vector<double> gpu;
  for (int i = 0; i < reps; ++i) {
    const uint64_t ns = backend.counters().gpu_ns;
    call.run();
    gpu.push_back(static_cast<double>(backend.counters().gpu_ns - ns) / 1e6);
  }
  backend.set_gpu_timing(false);
  emit(call.name + "_gpu_ms", median(gpu), "ms (GPU timestamps, median)");
}

}  // namespace

int main(int argc, char** argv) {
  bool large = false;
  int reps = 25;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--large") == 0) {
      large = true;
    } else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else {
      (void)std::fprintf(stderr, "usage: lib_call_cost [--large] [--reps N]\n");
      return 2;
    }
  }
  vyre::gpu::BackendOptions options;
  options.gpu_timestamps = true;  // on only while a figure's GPU time is taken
  vyre::gpu::Backend backend(options);
  (void)std::fprintf(stderr, "lib_call_cost: %s\n", backend.adapter().name.c_str());
  std::mt19937 rng(1);
  const auto words = [&](size_t n) {
    std::vector<uint32_t> v(n);
    for (auto& x : v) x = static_cast<uint32_t>(rng());
    return backend.upload(v);
  };
  const auto every_other = [&](size_t n) {
    std::vector<uint8_t> m(n);
    for (size_t i = 0; i < n; ++i) m[i] = static_cast<uint8_t>(i & 1);
    return backend.upload(m);
  };
  const vyre::lib::Options untuned{};
  const std::vector<size_t> sizes = large ? std::vector<size_t>{size_t{1} << 28} : std::vector<size_t>{4096, 1 << 20};
  const std::vector<size_t> sort_sizes = large ? std::vector<size_t>{size_t{1} << 26} : std::vector<size_t>{4096, 1 << 16};
  for (const size_t n : sizes) {
    const auto x = words(n);
    const auto mask = every_other(n);
    const std::string at = std::string("_").append(std::to_string(n));
    measure(backend, {"reduce" + at, [&] { (void)vyre::lib::reduce(backend, x, vyre::lib::ReduceOp::Sum, std::nullopt, untuned); }},
            reps);
    measure(backend,
            {"scan" + at,
             [&] {
               (void)vyre::lib::scan(backend, x, vyre::lib::ReduceOp::Sum, vyre::lib::ScanKind::Inclusive, std::nullopt,
                                     untuned);
             }},
            reps);
    measure(backend, {"compact" + at, [&] { (void)vyre::lib::compact(backend, x, mask, std::nullopt, untuned); }}, reps);
  }
  for (const size_t n : sort_sizes) {
    const auto keys = words(n);
    measure(backend,
            {std::string("sort_").append(std::to_string(n)),
             [&] {
               (void)vyre::lib::sort(backend, keys, nullptr, vyre::lib::SortOrder::Ascending, std::nullopt, untuned);
             }},
            reps);
  }
  return 0;
}
