// The pipeline-mode figures of docs/benchmarks.md, each measured side by
// side in one process, printed one JSON object per line:
// {"name": ..., "value": ..., "unit": ...}. scripts/bench runs it.
//
//   build/bench/pipeline_figures [--quick] [--saxpy-mib N]
//                                [--only overhead,batch,bandwidth,saxpy_variants]
//
// overhead   wall time per dispatch of a tiny kernel (xor of 1024 u32)
//            through Pipeline::dispatch and dispatch_into over a plain loop
//            of the same wgpu-native calls (bench/support/raw_wgpu.cpp),
//            alternated in runs of 32; the median over three pairs of fresh
//            devices of each pair's ratio of medians.
// batch      chained dispatches kept on the GPU and a Batch of 16, against
//            one round trip per dispatch.
// bandwidth  saxpy (y = a x + y, in place, on DeviceBuffers) against a
//            buffer-to-buffer copy of the same vector, alternated; the
//            achieved bandwidth's share of the copy's.
// saxpy_variants  where saxpy's time goes: the same saxpy as plain
//            wgpu-native dispatches of vyre's WGSL (checked and unchecked,
//            one pass or a pass each) and of handwritten vec4 WGSL, and a
//            copy kernel through vyre.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "samples/programs.hpp"
#include "support/json_lines.hpp"
#include "support/saxpy_vec4.hpp"
#include "support/raw_wgpu.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using vyre::bench::emit;
using vyre::bench::emit_text;
using vyre::bench::median;
using vyre::bench::RawWgpu;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "pipeline_figures: %s\n", why.c_str());
  std::exit(1);
}

struct Options {
  bool quick = false;
  std::set<std::string> only;
  double saxpy_mib = 0;   // 0: a size that fits the device (256 MiB where it can)
  bool wants(const std::string& figure) const { return only.empty() || only.count(figure) != 0; }
};

// The one-element shader, as the raw loops dispatch it: a figure about
// widening asks for it (saxpy_variants).
vyre::gpu::BackendOptions memory_only() {
  vyre::gpu::BackendOptions options;
  options.cache = std::make_shared<vyre::aot::Cache>(vyre::aot::CacheOptions{});  // no disk: measure the GPU
  options.widen = false;
  return options;
}

// ---- overhead ------------------------------------------------------------------

// Per-dispatch samples of one pair of devices (vyre's and raw's).
struct OverheadSamples {
  std::vector<double> raw, dispatch, into;
};

OverheadSamples overhead_pair(const Options& o) {
  constexpr uint32_t n = 1024;
  vyre::gpu::Backend backend(memory_only());
  RawWgpu raw(backend.adapter().name);
  vyre::gpu::Pipeline pipeline = backend.compile(vyre::samples::xor_program());
  raw.prepare_xor(pipeline.wgsl(), n, 64);

  std::vector<uint32_t> a(n), b(n), expected(n), out_raw(n), out_into(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = i * 2654435761u;
    b[i] = ~i;
    expected[i] = a[i] ^ b[i];
  }
  vyre::Inputs inputs;
  inputs.view<uint32_t>("a", a).view<uint32_t>("b", b).size("out", n);
  vyre::OutputViews views;
  views.view<uint32_t>("out", out_into);

  auto run_raw = [&] { raw.dispatch_xor(a.data(), b.data(), out_raw.data()); };
  auto run_dispatch = [&] {
    const vyre::Outputs out = pipeline.dispatch(inputs);
    if (out.bytes("out").size() != n * 4) fail("short output");
  };
  auto run_into = [&] { pipeline.dispatch_into(inputs, views); };
  for (int i = 0; i < 200; ++i) {
    run_raw();
    run_dispatch();
    run_into();
  }
  if (out_raw != expected || out_into != expected || pipeline.dispatch(inputs).get<uint32_t>("out") != expected)
    fail("the xor results are wrong");

  // Alternated in short runs (each run warms its own device's driver
  // threads), the order rotated, so that drift and order effects fall on all
  // three alike.
  const int runs = o.quick ? 36 : 180, run = 32;
  OverheadSamples samples;
  for (int k = 0; k < runs; ++k) {
    for (int slot = 0; slot < 3; ++slot) {
      const int which = (slot + k) % 3;
      auto& into = which == 0 ? samples.raw : which == 1 ? samples.dispatch : samples.into;
      for (int i = 0; i < run; ++i) {
        const auto start = Clock::now();
        if (which == 0) run_raw();
        else if (which == 1) run_dispatch();
        else run_into();
        into.push_back(seconds_since(start));
      }
    }
  }
  return samples;
}

// Three pairs of fresh devices, one after another: on a CPU driver the
// speed of a device's worker threads depends on where the scheduler puts
// them, and one pair can draw a bad placement; the median over pairs does not.
void overhead(const Options& o) {
  constexpr int kPairs = 3;
  std::vector<double> ratio_dispatch, ratio_into, raw_us, dispatch_us, into_us;
  size_t samples = 0;
  for (int pair = 0; pair < kPairs; ++pair) {
    const OverheadSamples s = overhead_pair(o);
    const double raw = median(s.raw), dispatch = median(s.dispatch), into = median(s.into);
    ratio_dispatch.push_back(dispatch / raw);
    ratio_into.push_back(into / raw);
    raw_us.push_back(raw * 1e6);
    dispatch_us.push_back(dispatch * 1e6);
    into_us.push_back(into * 1e6);
    samples += s.raw.size();
  }
  auto [dmin, dmax] = std::minmax_element(ratio_dispatch.begin(), ratio_dispatch.end());
  auto [imin, imax] = std::minmax_element(ratio_into.begin(), ratio_into.end());
  emit("dispatch_overhead_ratio_vs_raw", median(ratio_dispatch), "ratio");
  emit("dispatch_overhead_ratio_vs_raw_pair_min", *dmin, "ratio");
  emit("dispatch_overhead_ratio_vs_raw_pair_max", *dmax, "ratio");
  emit("dispatch_into_overhead_ratio_vs_raw", median(ratio_into), "ratio");
  emit("dispatch_into_overhead_ratio_vs_raw_pair_min", *imin, "ratio");
  emit("dispatch_into_overhead_ratio_vs_raw_pair_max", *imax, "ratio");
  emit("raw_dispatch_us", median(raw_us), "us");
  emit("vyre_dispatch_us", median(dispatch_us), "us");
  emit("vyre_dispatch_into_us", median(into_us), "us");
  emit("overhead_samples_each", static_cast<double>(samples), "count");
}

// ---- chained and batched -----------------------------------------------------

void batch(vyre::gpu::Backend& backend, const Options& o) {
  constexpr uint32_t n = 1024;
  constexpr int chain = 16;
  vyre::gpu::Pipeline pipeline = backend.compile(vyre::samples::xor_program());
  std::vector<uint32_t> a(n), b(n), out(n), expected(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = i * 7 + 1;
    b[i] = i * 13 + 5;
  }
  // Sixteen times out = a ^ b, each step's output the next step's a.
  expected = a;
  for (int k = 0; k < chain; ++k)
    for (uint32_t i = 0; i < n; ++i) expected[i] ^= b[i];
  const auto b_on_gpu = backend.upload(b);

  // Round trips: each step reads back and uploads again.
  auto round_trips = [&] {
    std::vector<uint32_t> value = a;
    vyre::Inputs in;
    vyre::OutputViews views;
    for (int k = 0; k < chain; ++k) {
      in.view<uint32_t>("a", value).view<uint32_t>("b", b).size("out", n);
      views.view<uint32_t>("out", out);
      pipeline.dispatch_into(in, views);
      value = out;
    }
    return value;
  };
  // Kept on the GPU: one read at the end.
  auto resident = [&] {
    auto value = backend.upload(a);
    for (int k = 0; k < chain; ++k) {
      vyre::Inputs in;
      in.device("a", value).device("b", b_on_gpu).size("out", n);
      value = pipeline.dispatch_resident(in).get("out");
    }
    return value->read_as<uint32_t>();
  };
  // One Batch: sixteen dispatches, one submission, one wait.
  vyre::gpu::Batch batch(backend);
  auto batched = [&] {
    auto value = backend.upload(a);
    std::vector<vyre::Inputs> in(chain);
    for (int k = 0; k < chain; ++k) {
      in[k].device("a", value).device("b", b_on_gpu).size("out", n);
      value = batch.dispatch_resident(pipeline, in[k]).get("out");
    }
    batch.run();
    return value->read_as<uint32_t>();
  };
  if (round_trips() != expected || resident() != expected || batched() != expected) fail("chained xor results are wrong");

  std::vector<double> t_round, t_resident, t_batch;
  const int reps = o.quick ? 150 : 600;
  for (int r = 0; r < reps; ++r) {
    auto start = Clock::now();
    round_trips();
    t_round.push_back(seconds_since(start));
    start = Clock::now();
    resident();
    t_resident.push_back(seconds_since(start));
    start = Clock::now();
    batched();
    t_batch.push_back(seconds_since(start));
  }
  emit("chain16_resident_speedup_vs_round_trips", median(t_round) / median(t_resident), "ratio");
  emit("chain16_batch_speedup_vs_round_trips", median(t_round) / median(t_batch), "ratio");
  emit("chain16_round_trips_us", median(t_round) * 1e6, "us");
  emit("chain16_resident_us", median(t_resident) * 1e6, "us");
  emit("chain16_batch_us", median(t_batch) * 1e6, "us");
}

// ---- bandwidth ---------------------------------------------------------------

// The saxpy vectors' size in MiB: --saxpy-mib, else 256 where the device
// binds that much (32 with --quick; 16 on a CPU adapter such as lavapipe,
// whose saxpy runs at memcpy-on-2-cores speed), else the largest power of
// two it does.
uint64_t saxpy_mib(vyre::gpu::Backend& backend, const Options& o) {
  if (o.saxpy_mib > 0) return static_cast<uint64_t>(o.saxpy_mib);
  const uint64_t wanted = backend.adapter().type == "cpu" ? 16 : o.quick ? 32 : 256;
  for (uint64_t mib = wanted;; mib /= 2) {
    try {
      backend.upload(std::vector<float>((mib << 20) / 4));
      return mib;
    } catch (const vyre::Error& e) {
      if (e.kind() != vyre::ErrorKind::limit_exceeded || mib <= 1) throw;
    }
  }
}

void bandwidth(vyre::gpu::Backend& backend, RawWgpu& raw, const Options& o) {
  vyre::gpu::Pipeline pipeline = backend.compile(vyre::samples::saxpy_program());
  const uint64_t mib = saxpy_mib(backend, o);
  std::vector<float> host_x((mib << 20) / 4, 1.0f), host_y((mib << 20) / 4);
  for (uint64_t i = 0; i < host_y.size(); ++i) host_y[i] = static_cast<float>(i % 1000);
  const auto x = backend.upload(host_x);
  const auto y = backend.upload(host_y);
  const uint64_t n = (mib << 20) / 4;
  const vyre::Dim3 grid = vyre::samples::saxpy_grid(n);
  const int per_batch = o.quick ? 8 : 20;
  constexpr float alpha = 0.5f;

  std::vector<vyre::Inputs> inputs(per_batch);
  for (auto& in : inputs) in.set<float>("alpha", {alpha}).device("x", x).device("y", y);
  vyre::gpu::Batch batch(backend);
  auto saxpy_batch = [&] {
    for (auto& in : inputs) batch.dispatch_resident(pipeline, in, grid);
    const auto start = Clock::now();
    batch.run();
    return seconds_since(start);
  };
  uint64_t runs = 0;
  saxpy_batch();
  raw.copy_seconds(n * 4, per_batch);
  runs += per_batch;

  std::vector<double> t_saxpy, t_copy;
  const int reps = o.quick ? 5 : 15;
  for (int r = 0; r < reps; ++r) {
    t_saxpy.push_back(saxpy_batch() / per_batch);
    runs += per_batch;
    t_copy.push_back(raw.copy_seconds(n * 4, per_batch) / per_batch);
  }
  // Each saxpy added alpha * 1 to every element: check a spread of them.
  const std::vector<float> result = y->read_as<float>();
  for (uint64_t i = 0; i < n; i += n / 97 + 1)
    if (result[i] != static_cast<float>(i % 1000) + alpha * static_cast<float>(runs))
      fail("saxpy result wrong at " + std::to_string(i));

  const double saxpy_bytes = 3.0 * n * 4, copy_bytes = 2.0 * n * 4;
  const double saxpy_bw = saxpy_bytes / median(t_saxpy), copy_bw = copy_bytes / median(t_copy);
  emit("saxpy_vector_mib", static_cast<double>(mib), "MiB");
  emit("saxpy_bandwidth_share_of_copy", saxpy_bw / copy_bw, "ratio");
  emit("saxpy_gbps", saxpy_bw / 1e9, "GB/s");
  emit("copy_gbps", copy_bw / 1e9, "GB/s");
  emit("saxpy_kernel_ms", median(t_saxpy) * 1e3, "ms");
  emit("copy_ms", median(t_copy) * 1e3, "ms");
}

// ---- where saxpy's time goes ------------------------------------------------------

// The same saxpy through vyre and as plain wgpu-native dispatches of vyre's
// own WGSL (with and without the shader's runtime checks, one pass or a pass
// each) and of handwritten vec4 WGSL, beside a compute copy through vyre and
// a buffer-to-buffer copy; alternated, medians per dispatch.
void saxpy_variants(vyre::gpu::Backend& backend, RawWgpu& raw, const Options& o) {
  const uint64_t n = (saxpy_mib(backend, o) << 20) / 4;
  const vyre::Dim3 grid = vyre::samples::saxpy_grid(n), grid4 = vyre::samples::saxpy_grid(n / 4);
  // vyre's saxpy on a Backend with vector widening on, beside the
  // one-element shader on `backend` (widening off: memory_only()).
  vyre::gpu::BackendOptions wide_options = memory_only();
  wide_options.widen = true;
  vyre::gpu::Backend wide_backend(wide_options);
  vyre::gpu::Backend& scalar_backend = backend;
  vyre::gpu::Pipeline saxpy = wide_backend.compile(vyre::samples::saxpy_program());
  vyre::gpu::Pipeline copy = wide_backend.compile(vyre::samples::copy_program());
  vyre::gpu::Pipeline saxpy_scalar = scalar_backend.compile(vyre::samples::saxpy_program());
  const auto x_s = scalar_backend.upload(std::vector<float>(n, 1.0f));
  const auto y_s = scalar_backend.upload(std::vector<float>(n, 0.0f));
  const auto x = wide_backend.upload(std::vector<float>(n, 1.0f));
  const auto y = wide_backend.upload(std::vector<float>(n, 0.0f));
  const auto y2 = wide_backend.upload(std::vector<float>(n, 0.0f));
  const int k = o.quick ? 8 : 20;

  raw.prepare_saxpy(n);
  // vyre's own WGSL (widened when n allows it: a quarter of the invocations).
  const bool widened = saxpy.interface().vector_width == 4;
  const int checked = raw.add_saxpy_kernel(saxpy.wgsl(), (widened ? grid4 : grid).data(), true, true);
  const int unchecked = raw.add_saxpy_kernel(saxpy.wgsl(), (widened ? grid4 : grid).data(), false, true);
  const int vec4 = raw.add_saxpy_kernel(vyre::bench::kSaxpyVec4Wgsl, grid4.data(), false, false);

  std::vector<vyre::Inputs> saxpy_in(k), copy_in(k);
  for (auto& in : saxpy_in) in.set<float>("alpha", {0.5f}).device("x", x).device("y", y);
  for (auto& in : copy_in) in.device("x", x).device("y", y2);
  std::vector<vyre::Inputs> scalar_in(k);
  for (auto& in : scalar_in) in.set<float>("alpha", {0.5f}).device("x", x_s).device("y", y_s);
  vyre::gpu::Batch batch(wide_backend), scalar_batch(scalar_backend);
  auto run_batch = [&](vyre::gpu::Batch& b, vyre::gpu::Pipeline& p, std::vector<vyre::Inputs>& in) {
    for (auto& i : in) b.dispatch_resident(p, i, grid);
    const auto start = Clock::now();
    vyre::gpu::DispatchReport report;
    b.run(&report);
    if (&p == &saxpy && report.vector_width != (widened ? 4 : 1)) fail("saxpy ran another shader than compiled");
    return seconds_since(start) / k;
  };
  auto vyre_batch = [&](vyre::gpu::Pipeline& p, std::vector<vyre::Inputs>& in) { return run_batch(batch, p, in); };
  struct Variant {
    std::string name;
    std::function<double()> run;
    std::vector<double> times;
  };
  int raw_dispatches = 0;
  std::vector<Variant> variants{
      {"vyre_batch", [&] { return vyre_batch(saxpy, saxpy_in); }, {}},
      {"raw_vyre_wgsl_pass_each", [&] { raw_dispatches += k; return raw.saxpy_seconds(checked, k, false) / k; }, {}},
      {"raw_vyre_wgsl_one_pass", [&] { raw_dispatches += k; return raw.saxpy_seconds(checked, k, true) / k; }, {}},
      {"raw_vyre_wgsl_unchecked", [&] { raw_dispatches += k; return raw.saxpy_seconds(unchecked, k, false) / k; }, {}},
      {"raw_vec4_wgsl_unchecked", [&] { raw_dispatches += k; return raw.saxpy_seconds(vec4, k, false) / k; }, {}},
      {"vyre_copy_kernel", [&] { return vyre_batch(copy, copy_in); }, {}},
      {"raw_copy_buffer", [&] { return raw.copy_seconds(n * 4, k) / k; }, {}},
      {"vyre_batch_one_element", [&] { return run_batch(scalar_batch, saxpy_scalar, scalar_in); }, {}},
  };
  for (auto& v : variants) v.run();  // warm
  const int reps = o.quick ? 3 : 9;
  for (int r = 0; r < reps; ++r)
    for (auto& v : variants) v.times.push_back(v.run());

  const std::vector<float> ry = raw.saxpy_y();
  for (uint64_t i = 0; i < n; i += n / 89 + 1)
    if (ry[i] != static_cast<float>(i % 1000) + 0.5f * static_cast<float>(raw_dispatches))
      fail("raw saxpy result wrong at " + std::to_string(i));
  const double saxpy_bytes = 3.0 * n * 4, copy_bytes = 2.0 * n * 4;
  for (const auto& v : variants) {
    const double t = median(v.times);
    const bool is_copy = v.name.find("copy") != std::string::npos;
    emit("saxpy_variants." + v.name + "_ms", t * 1e3, "ms");
    emit("saxpy_variants." + v.name + "_gbps", (is_copy ? copy_bytes : saxpy_bytes) / t / 1e9, "GB/s");
  }
  const double vyre_saxpy = median(variants[0].times), vyre_copy = median(variants[5].times);
  emit("saxpy_bandwidth_share_of_compute_copy", (saxpy_bytes / vyre_saxpy) / (copy_bytes / vyre_copy), "ratio");
  // Side by side in this run: vyre's saxpy (widened unless n forbids it)
  // over the handwritten vec4 WGSL, and over vyre's one-element shader.
  emit_text("saxpy_variants.vyre_vector_width", widened ? "4" : "1");
  emit("saxpy_share_of_handwritten_vec4", median(variants[4].times) / vyre_saxpy, "ratio");
  emit("saxpy_widened_speedup_over_one_element", median(variants[7].times) / vyre_saxpy, "ratio");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      o.quick = true;
    } else if (arg == "--only" && i + 1 < argc) {
      std::stringstream list(argv[++i]);
      for (std::string item; std::getline(list, item, ',');) o.only.insert(item);
    } else if (arg == "--saxpy-mib" && i + 1 < argc) {
      o.saxpy_mib = std::atof(argv[++i]);
    } else {
      fail("usage: pipeline_figures [--quick] [--only overhead,batch,bandwidth,saxpy_variants] [--saxpy-mib N]");
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  try {
    vyre::gpu::Backend backend(memory_only());
    emit_text("adapter", backend.adapter().name);
    emit_text("driver", backend.adapter().driver);
    RawWgpu raw(backend.adapter().name);
    if (o.wants("overhead")) overhead(o);
    if (o.wants("batch")) batch(backend, o);
    if (o.wants("bandwidth")) bandwidth(backend, raw, o);
    if (o.wants("saxpy_variants")) saxpy_variants(backend, raw, o);
  } catch (const std::exception& e) {
    fail(e.what());
  }
  return 0;
}
