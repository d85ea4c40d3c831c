// The standard kernels' figures (docs/benchmarks.md, "Standard kernels"):
// vyre::lib::reduce (sum of f32) and vyre::lib::scan (inclusive sum of u32)
// on a buffer already on the GPU, each call planning, recording, running and
// waiting for its passes, at every shape of a small grid, the default first.
// Each result is checked against the host before it is timed. Prints JSON
// lines {"name", "value", "unit"}; bench/lib_peers.py prints CuPy's and
// CUDA's copy for the same sizes, and scripts/h200/lib runs both.
//
//   lib_figures [--quick] [--log2 N]   --quick: 2^22 elements (lavapipe); default 2^28
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "support/json_lines.hpp"
#include "vyre/gpu.hpp"
#include "vyre/lib/reduce.hpp"
#include "vyre/lib/scan.hpp"
#include "vyre/lib/sort.hpp"

namespace {

using vyre::bench::emit;
using vyre::bench::median;
using vyre::lib::ReduceOp;
using vyre::lib::ReduceShape;
using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string& why) {
  (void)std::fprintf(stderr, "lib_figures: %s\n", why.c_str());
  std::exit(1);
}

std::string shape_name(const ReduceShape& s) { return std::to_string(s.workgroup) + "x" + std::to_string(s.items); }

// Median milliseconds of `reps` calls of f, after two to warm up.
template <class F>
double median_ms(int reps, F&& f) {
  f();
  f();
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto t = Clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
  }
  return median(ms);
}

const std::vector<ReduceShape> kShapes = {{256, 4}, {256, 8}, {256, 16}, {512, 8}, {1024, 4}, {128, 16}, {64, 32}};

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int log2n = 28;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true, log2n = 22;
    else if (std::strcmp(argv[i], "--log2") == 0 && i + 1 < argc) log2n = std::atoi(argv[++i]);
    else fail(std::string("unknown argument ") + argv[i]);
  }
  const size_t n = size_t{1} << log2n;
  const int reps = quick ? 5 : 20;
  vyre::gpu::Backend backend;
  (void)std::fprintf(stderr, "lib_figures: %s, 2^%d elements\n", backend.adapter().name.c_str(), log2n);

  // Small integers in floats, so that the sum is exact in any order.
  std::vector<float> xf(n);
  std::vector<uint32_t> xu(n);
  std::mt19937 rng(1);
  double exact = 0;
  for (size_t i = 0; i < n; ++i) {
    xu[i] = rng() & 0xff;
    xf[i] = static_cast<float>(xu[i] & 0xf);
    exact += xf[i];
  }
  const auto f_buffer = backend.upload(xf);
  const auto u_buffer = backend.upload(xu);
  std::vector<uint32_t> want(n);
  uint32_t acc = 0;
  for (size_t i = 0; i < n; ++i) want[i] = acc += xu[i];
  const double bytes = static_cast<double>(n) * 4;

  // The GPU's clocks come up before anything is timed.
  for (int k = 0; k < (quick ? 2 : 200); ++k) vyre::lib::reduce(backend, f_buffer, ReduceOp::Sum);
  // What a call costs beside its kernels: finding the pass's pipeline (its
  // program is built once per process; reduce_pass copies it, and compile
  // checks the copy), and a whole call on 4,096 elements (one pass).
  {
    const double compile =
        median_ms(reps, [&] { (void)backend.compile(vyre::lib::reduce_pass(vyre::ScalarType::F32, ReduceOp::Sum)); });
    emit("reduce_pass_copy_check_and_compile_hit_ms", compile, "ms");
    const auto small = backend.upload(std::vector<float>(4096, 1.0f));
    emit("reduce_call_4096_ms", median_ms(reps, [&] { vyre::lib::reduce(backend, small, ReduceOp::Sum); }), "ms");
  }
  for (const ReduceShape& shape : kShapes) {
    const float got = vyre::lib::reduce(backend, f_buffer, ReduceOp::Sum, shape)->read_as<float>()[0];
    // Every partial sum is an integer below 2^24 only when n is small; the
    // total of 2^28 values up to 15 is not, so check within its rounding.
    if (std::fabs(got - exact) > 1e-6 * exact) fail("reduce " + shape_name(shape) + " gave a wrong sum");
    const double ms = median_ms(reps, [&] { vyre::lib::reduce(backend, f_buffer, ReduceOp::Sum, shape); });
    emit("reduce_sum_f32_ms_" + shape_name(shape), ms, "ms");
    // The first pass alone, 20 in one Batch: the kernel's own time, without
    // a call's planning, submission and wait.
    vyre::gpu::Pipeline first = backend.compile(vyre::lib::reduce_pass(vyre::ScalarType::F32, ReduceOp::Sum, shape));
    const uint64_t per_group = uint64_t{shape.workgroup} * shape.items;
    const uint32_t groups = static_cast<uint32_t>((n + per_group - 1) / per_group);
    const vyre::Dim3 grid = groups <= 65535 ? vyre::Dim3{groups, 1, 1} : vyre::Dim3{65535, (groups + 65534) / 65535, 1};
    vyre::Inputs in;
    in.device("in", f_buffer).size("out", groups);
    const double pass_ms = median_ms(reps, [&] {
      vyre::gpu::Batch batch(backend);
      std::vector<vyre::gpu::DeviceOutputs> outs;
      for (int k = 0; k < 20; ++k) outs.push_back(batch.dispatch_resident(first, in, grid));
      batch.run();
    }) / 20;
    emit("reduce_first_pass_f32_ms_" + shape_name(shape), pass_ms, "ms");
    emit("reduce_first_pass_f32_gbs_" + shape_name(shape), bytes / pass_ms / 1e6, "GB/s (N*4 bytes read / time)");
    emit("reduce_sum_f32_gbs_" + shape_name(shape), bytes / ms / 1e6, "GB/s (N*4 bytes read / time)");
  }
  for (const ReduceShape& shape : kShapes) {
    if (shape.workgroup * (shape.items + 1) * 4 > 16384) continue;  // the span does not fit workgroup memory
    if (vyre::lib::scan(backend, u_buffer, ReduceOp::Sum, vyre::lib::ScanKind::Inclusive, shape)->read_as<uint32_t>() !=
        want)
      fail("scan " + shape_name(shape) + " gave a wrong prefix");
    const double ms = median_ms(reps, [&] { vyre::lib::scan(backend, u_buffer, ReduceOp::Sum, vyre::lib::ScanKind::Inclusive, shape); });
    emit("scan_sum_u32_ms_" + shape_name(shape), ms, "ms");
    emit("scan_sum_u32_gbs_" + shape_name(shape), 2 * bytes / ms / 1e6, "GB/s (N*4 read + N*4 written / time)");
  }
  // sort: a quarter as many keys (2^26 on the H200), as CuPy's figure.
  const size_t m = n / 4;
  std::vector<uint32_t> keys(m);
  for (auto& k : keys) k = static_cast<uint32_t>(rng());
  const auto k_buffer = backend.upload(keys);
  uint64_t key_sum = 0;
  for (uint32_t k : keys) key_sum += k;
  for (const vyre::lib::SortShape shape : {vyre::lib::SortShape{128, 8}, vyre::lib::SortShape{128, 16},
                                           vyre::lib::SortShape{64, 16}, vyre::lib::SortShape{128, 4}}) {
    const std::vector<uint32_t> got = vyre::lib::sort(backend, k_buffer, nullptr, vyre::lib::SortOrder::Ascending, shape)
                                          .keys->read_as<uint32_t>();
    uint64_t got_sum = 0;
    for (uint32_t k : got) got_sum += k;
    if (!std::is_sorted(got.begin(), got.end()) || got_sum != key_sum) fail("sort gave keys out of order or lost some");
    const std::string name = std::to_string(shape.workgroup) + "x" + std::to_string(shape.items);
    const double ms =
        median_ms(quick ? 3 : 10, [&] { vyre::lib::sort(backend, k_buffer, nullptr, vyre::lib::SortOrder::Ascending, shape); });
    emit("sort_u32_ms_" + name, ms, "ms");
    emit("sort_u32_gkeys_" + name, static_cast<double>(m) / ms / 1e6, "Gkeys/s");
  }
  return 0;
}
