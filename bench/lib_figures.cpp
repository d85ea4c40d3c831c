// The standard kernels' figures (docs/benchmarks.md, "Standard kernels"):
// every vyre::lib primitive on buffers already on the GPU, each call
// planning, recording, running and waiting for its passes (a call's
// overhead is in every figure), in the device class's default shape and in
// the shape tuning chooses, timed afresh (retune; the tuning's own time and
// the choice reported), the default again after tuning in the same process,
// the GPU buffers a warm call creates before and after tuning, and a next
// call that finds the choice and times nothing. Each result is checked against the host before it is timed.
// Where the device has timestamp-query, each is timed twice: the whole call
// on the host's clock (`*_ms`: planning, recording, submission and the wait
// included) and the GPU's time of the same call by timestamps (`*_gpu_ms`:
// from the start of its first compute pass to the end of its last, summed
// over its submissions), the analogue of CUDA events around the call.
// Prints JSON lines {"name", "value", "unit"}; bench/peers/lib_peers.py
// prints CuPy's (or NumPy's) for the same sizes, and scripts/h200/standard_kernels runs
// both.
//
//   lib_figures [--quick] [--only NAME]   --quick: lavapipe's sizes (docs/benchmarks.md)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "kernels/passes.hpp"
#include "support/json_lines.hpp"
#include "vyre/gpu.hpp"
#include "vyre/lib/compact.hpp"
#include "vyre/lib/find.hpp"
#include "vyre/lib/histogram.hpp"
#include "vyre/lib/matmul.hpp"
#include "vyre/lib/reduce.hpp"
#include "vyre/lib/scan.hpp"
#include "vyre/lib/softmax.hpp"
#include "vyre/lib/sort.hpp"
#include "vyre/lib/transpose.hpp"

namespace {

using vyre::bench::emit;
using vyre::bench::emit_text;
using vyre::bench::median;
using vyre::lib::Options;
using vyre::lib::ReduceOp;
using Clock = std::chrono::steady_clock;
using Buffer = std::shared_ptr<vyre::gpu::DeviceBuffer>;

[[noreturn]] void fail(const std::string& why) {
  (void)std::fprintf(stderr, "lib_figures: %s\n", why.c_str());
  std::exit(1);
}

// Median milliseconds of `reps` calls of f, after one to warm up.
double median_ms(int reps, const std::function<void()>& f) {
  f();
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto t = Clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
  }
  return median(ms);
}

// GPU time of one call by timestamps: the milliseconds the backend's timed
// submissions added, and how many there were.
struct GpuCall {
  double ms = 0;
  uint64_t submits = 0;
};

GpuCall gpu_call(vyre::gpu::Backend& backend, const std::function<void()>& f) {
  const vyre::gpu::BackendCounters before = backend.counters();
  f();
  const vyre::gpu::BackendCounters after = backend.counters();
  return {static_cast<double>(after.gpu_ns - before.gpu_ns) / 1e6, after.timed_submits - before.timed_submits};
}

// Median GPU milliseconds of `reps` calls of f (timestamps on while they
// run), after one to warm up; nullopt where the device has no timestamps.
std::optional<GpuCall> median_gpu_ms(vyre::gpu::Backend& backend, int reps, const std::function<void()>& f) {
  if (!backend.gpu_timing_available()) return std::nullopt;
  backend.set_gpu_timing(true);
  f();
  std::vector<double> ms;
  uint64_t submits = 0;
  for (int i = 0; i < reps; ++i) {
    const GpuCall call = gpu_call(backend, f);
    ms.push_back(call.ms);
    submits = call.submits;
  }
  backend.set_gpu_timing(false);
  return GpuCall{median(ms), submits};
}

// GPU buffers that one call of f created (pooled outputs, staging, each
// pipeline's own small buffers).
double buffers_created(vyre::gpu::Backend& backend, const std::function<void()>& f) {
  const uint64_t before = backend.counters().buffers_created;
  f();
  return static_cast<double>(backend.counters().buffers_created - before);
}

struct Sizes {
  uint32_t log2_reduce, log2_sort, log2_find, matmul, transpose, softmax_rows, softmax_cols;
};
constexpr Sizes kH200{28, 26, 28, 4096, 8192, 65536, 1024};
constexpr Sizes kQuick{22, 20, 22, 512, 2048, 4096, 1024};

// One primitive's figures: `call(options)` runs one whole call; `moved` is
// the bytes it must move at least (0: report time only), `unit_per_ms` a
// rate's numerator (keys, flops) with its unit.
struct Figure {
  std::string name;
  std::function<void(const Options&)> call;
  double moved = 0;
  double work = 0;
  std::string work_unit;
};

// Calls f until `ms` have passed: a GPU's clocks come up under load, and a
// figure timed on a cold device measures its ramp (as tuning would).
void warm_up(const Figure& f, double ms) {
  const auto start = Clock::now();
  do f.call(Options{});
  while (std::chrono::duration<double, std::milli>(Clock::now() - start).count() < ms);
}

// Calls f until `ms` have passed (warm_up's, for a lone call).
void warm_up(const std::function<void()>& f, double ms) {
  const auto start = Clock::now();
  do f();
  while (std::chrono::duration<double, std::milli>(Clock::now() - start).count() < ms);
}

void run(vyre::gpu::Backend& backend, const Figure& f, int reps, double warm_ms) {
  warm_up(f, warm_ms);
  Options defaults;
  std::vector<vyre::lib::ShapeChoice> report;
  defaults.report = &report;
  f.call(defaults);
  const std::string default_shape = report.empty() ? "?" : report.front().shape;
  const double default_ms = median_ms(reps, [&] { f.call(Options{}); });
  emit_text(f.name + "_default_shape", default_shape);
  emit(f.name + "_default_ms", default_ms, "ms (whole call, host clock)");
  const std::optional<GpuCall> default_gpu = median_gpu_ms(backend, reps, [&] { f.call(Options{}); });
  if (default_gpu) {
    emit(f.name + "_default_gpu_ms", default_gpu->ms, "ms (GPU timestamps, first pass's start to last pass's end)");
    emit(f.name + "_submits", static_cast<double>(default_gpu->submits), "submissions a call");
  }
  emit(f.name + "_default_buffers_created", buffers_created(backend, [&] { f.call(Options{}); }),
       "GPU buffers a warm call created");
  // Tuning afresh (retune: a record from an earlier run is replaced).
  report.clear();
  Options tune;
  tune.tune = true;
  tune.retune = true;
  tune.report = &report;
  const auto t = Clock::now();
  f.call(tune);
  tune.retune = false;
  const double tuning_ms = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  const std::string tuned_shape = report.empty() ? "?" : report.front().shape;
  emit_text(f.name + "_tuned_shape", tuned_shape);
  emit(f.name + "_tuning_ms", tuning_ms, "ms (the first tuned call, its candidates timed)");
  tune.report = nullptr;
  const double tuned_ms = median_ms(reps, [&] { f.call(tune); });
  emit(f.name + "_tuned_ms", tuned_ms, "ms (whole call, host clock)");
  const std::optional<GpuCall> tuned_gpu = median_gpu_ms(backend, reps, [&] { f.call(tune); });
  if (tuned_gpu) emit(f.name + "_tuned_gpu_ms", tuned_gpu->ms, "ms (GPU timestamps)");
  emit(f.name + "_tuned_over_default", default_ms / tuned_ms, "x (default time / tuned time)");
  emit(f.name + "_tuned_buffers_created", buffers_created(backend, [&] { f.call(tune); }),
       "GPU buffers a warm call created, after tuning");
  // The default shape again, after tuning, in the same process.
  emit(f.name + "_default_after_tuning_ms", median_ms(reps, [&] { f.call(Options{}); }), "ms (whole call, host clock)");
  if (const auto gpu = median_gpu_ms(backend, reps, [&] { f.call(Options{}); }))
    emit(f.name + "_default_after_tuning_gpu_ms", gpu->ms, "ms (GPU timestamps)");
  // The next call finds the choice: nothing timed.
  report.clear();
  tune.report = &report;
  f.call(tune);
  emit_text(f.name + "_next_call_source", report.empty() ? "?" : std::string(vyre::lib::to_string(report.front().source)));
  const double best = std::min(default_ms, tuned_ms);
  if (f.moved > 0) emit(f.name + "_gbs", f.moved / best / 1e6, "GB/s (bytes it must move / the faster whole call)");
  if (f.work > 0) emit(f.name + "_rate", f.work / best / 1e6, f.work_unit + ", the faster whole call");
  if (default_gpu && tuned_gpu) {
    const double best_gpu = std::min(default_gpu->ms, tuned_gpu->ms);
    if (f.moved > 0) emit(f.name + "_gpu_gbs", f.moved / best_gpu / 1e6, "GB/s (bytes it must move / the faster GPU time)");
    if (f.work > 0) emit(f.name + "_gpu_rate", f.work / best_gpu / 1e6, f.work_unit + ", the faster GPU time");
  }
}

// The first pass of a reduce alone, 20 dispatches in one Batch: the
// kernel's time without a call's planning, submission and wait (the host's
// clock over 20; and, with timestamps, the GPU's time of one dispatch alone).
struct PassTimes {
  double ms = 0;
  std::optional<double> gpu_ms;
};

PassTimes first_pass_ms(vyre::gpu::Backend& backend, const vyre::Program& pass, const Buffer& in, uint64_t n,
                        const vyre::lib::ReduceShape& shape, int reps) {
  vyre::gpu::Pipeline pipeline = backend.compile(pass);
  const uint64_t per_group = uint64_t{shape.workgroup} * shape.items;
  const auto groups = static_cast<uint32_t>((n + per_group - 1) / per_group);
  const vyre::Dim3 grid = groups <= 65535 ? vyre::Dim3{groups, 1, 1} : vyre::Dim3{65535, (groups + 65534) / 65535, 1};
  vyre::Inputs inputs;
  inputs.device("in", in).size("out", groups);
  PassTimes times;
  times.ms = median_ms(reps, [&] {
               vyre::gpu::Batch batch(backend);
               std::vector<vyre::gpu::DeviceOutputs> outs;
               for (int k = 0; k < 20; ++k) outs.push_back(batch.dispatch_resident(pipeline, inputs, grid));
               batch.run();
             }) /
             20;
  if (const auto gpu = median_gpu_ms(backend, reps, [&] {
        vyre::gpu::Batch batch(backend);
        const vyre::gpu::DeviceOutputs out = batch.dispatch_resident(pipeline, inputs, grid);
        batch.run();
      }))
    times.gpu_ms = gpu->ms;
  return times;
}

// GPU time of scan's last pass `pass` alone over the `n` elements of `in`
// in `groups` workgroups, every span's offset 0, after half a second of its
// own calls (none where `quick`).
std::optional<double> last_pass_gpu_ms(vyre::gpu::Backend& backend, const vyre::Program& pass, const Buffer& in, size_t n,
                                       uint32_t groups, int reps, bool quick) {
  const Buffer zeros = backend.upload(std::vector<uint32_t>(groups));
  const Buffer out = backend.upload(std::vector<uint32_t>(n));
  vyre::gpu::Pipeline last = backend.compile(pass);
  vyre::Inputs inputs;
  inputs.device("in", in).device("offsets", zeros).device("out", out);
  const auto run = [&] {
    vyre::gpu::Batch batch(backend);
    (void)batch.dispatch_resident(last, inputs, vyre::lib::detail::grid_for(groups));
    batch.run();
  };
  warm_up(run, quick ? 0 : 500);
  if (const auto gpu = median_gpu_ms(backend, reps, run)) return gpu->ms;
  return std::nullopt;
}

// reduce as it was before its first pass took rounds (2026-12-04): passes
// of reduce_pass at one shape, each over spans of W*I, until one value is left.
Buffer reduce_by_spans(vyre::gpu::Backend& backend, const Buffer& values, const vyre::lib::ReduceShape& shape) {
  vyre::gpu::Pipeline first = backend.compile(vyre::lib::reduce_pass(values->type(), ReduceOp::Sum, shape));
  vyre::gpu::Batch batch(backend);
  std::deque<vyre::lib::detail::Pass> passes;
  Buffer left = values;
  uint32_t remaining = values->elements();
  do {
    const uint32_t groups = vyre::lib::detail::groups_for(remaining, shape);
    auto& pass = passes.emplace_back();
    pass.inputs.device("in", left).size("out", groups);
    pass.outputs = batch.dispatch_resident(first, pass.inputs, vyre::lib::detail::grid_for(groups));
    left = pass.outputs.get("out");
    remaining = groups;
  } while (remaining > 1);
  batch.run();
  return left;
}

// One form's figures (reduce_structures): spans, and rounds capped at
// 2^min_log2 to 2^20 invocations.
void reduce_structures_of(vyre::gpu::Backend& backend, const Buffer& values, double exact, int reps,
                          const std::string& form, uint32_t min_log2) {
  const double bytes = 4.0 * values->elements();
  auto figure = [&](const std::string& name, const std::function<Buffer()>& call) {
    const float got = call()->read_as<float>()[0];
    if (std::fabs(got - exact) > 1e-6 * exact) fail(name + " gave a wrong sum");
    const double ms = median_ms(reps, [&] { (void)call(); });
    emit(name + "_ms", ms, "ms (whole call, host clock)");
    if (const auto gpu = median_gpu_ms(backend, reps, [&] { (void)call(); })) {
      emit(name + "_gpu_ms", gpu->ms, "ms (GPU timestamps)");
      emit(name + "_gpu_gbs", bytes / gpu->ms / 1e6, "GB/s (N*4 read / GPU time)");
    }
  };
  for (const vyre::lib::ReduceShape shape : {vyre::lib::ReduceShape{64, 32}, vyre::lib::ReduceShape{256, 32},
                                             vyre::lib::ReduceShape{256, 16}, vyre::lib::ReduceShape{512, 16}}) {
    const std::string name = std::to_string(shape.workgroup) + "x" + std::to_string(shape.items);
    figure("reduce_" + form + "spans_" + name, [&] { return reduce_by_spans(backend, values, shape); });
    for (uint32_t log2 = min_log2; log2 <= 20; ++log2)
      figure("reduce_" + form + "rounds_" + name + "_inv2^" + std::to_string(log2),
             [&] { return vyre::lib::detail::reduce_with(backend, values, ReduceOp::Sum, shape, uint32_t{1} << log2); });
  }
}

// reduce's structures side by side on the same input, each call's result
// checked: by spans (as before), and with its first pass capped at 2^16 to
// 2^20 invocations (then one pass of reduce_rest_shape); each with its loads
// in a loop (as before) and unrolled (the default); and scan at its default
// shape with either form of loads in its first pass.
void reduce_structures(vyre::gpu::Backend& backend, const Buffer& values, double exact, const Buffer& words,
                       const std::vector<uint32_t>& host_words, int reps) {
  const double bytes = 4.0 * values->elements();
  std::vector<uint32_t> prefix(host_words.size());
  uint32_t running = 0;
  for (size_t i = 0; i < host_words.size(); ++i) prefix[i] = running += host_words[i];
  // reduce first: a scan's gigabyte buffers, freed, slowed the figures
  // right after it (2026-12-06, H100, while the pool released the buffers
  // given back last: docs/benchmarks.md, "Standard kernels").
  for (const bool unrolled : {false, true}) {
    vyre::lib::detail::set_reduce_loads_unrolled(unrolled);
    reduce_structures_of(backend, values, exact, reps, unrolled ? "unrolled_" : "looped_", unrolled ? 16 : 18);
  }
  for (const bool unrolled : {false, true}) {
    vyre::lib::detail::set_reduce_loads_unrolled(unrolled);
    const std::string form = unrolled ? "unrolled_" : "looped_";
    if (vyre::lib::scan(backend, words)->read_as<uint32_t>() != prefix) fail("scan gave a wrong prefix");
    const auto scan_call = [&] { (void)vyre::lib::scan(backend, words); };
    emit("scan_" + form + "ms", median_ms(reps, scan_call), "ms (whole call, host clock)");
    if (const auto gpu = median_gpu_ms(backend, reps, scan_call)) {
      emit("scan_" + form + "gpu_ms", gpu->ms, "ms (GPU timestamps)");
      emit("scan_" + form + "gpu_gbs", 2 * bytes / gpu->ms / 1e6, "GB/s (N*4 read + N*4 written / GPU time)");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
    else fail(std::string("unknown argument ") + argv[i]);
  }
  const Sizes s = quick ? kQuick : kH200;
  const int reps = quick ? 3 : 20;
  setenv("VYRE_TUNE_WARMUP", "1", 0);
  setenv("VYRE_TUNE_REPETITIONS", quick ? "3" : "5", 0);
  vyre::gpu::BackendOptions backend_options;
  backend_options.gpu_timestamps = true;  // used only while a figure asks (set_gpu_timing)
  vyre::gpu::Backend backend(backend_options);
  (void)std::fprintf(stderr, "lib_figures: %s, GPU timestamps %s\n", backend.adapter().name.c_str(),
                     backend.gpu_timing_available() ? "on" : "not available");
  std::mt19937 rng(1);
  std::vector<Figure> figures;

  // reduce: sum of f32 (small integers, so the sum is exact in any order below 2^24 per partial).
  const size_t n = size_t{1} << s.log2_reduce;
  std::vector<float> xf(n);
  std::vector<uint32_t> xu(n);
  double exact = 0;
  for (size_t i = 0; i < n; ++i) {
    xu[i] = rng() & 0xff;
    xf[i] = static_cast<float>(xu[i] & 0xf);
    exact += xf[i];
  }
  const Buffer f_buffer = backend.upload(xf);
  const Buffer u_buffer = backend.upload(xu);
  {
    const float got = vyre::lib::reduce(backend, f_buffer, ReduceOp::Sum)->read_as<float>()[0];
    if (std::fabs(got - exact) > 1e-6 * exact) fail("reduce gave a wrong sum");
  }
  figures.push_back({"reduce_sum_f32", [&](const Options& o) { vyre::lib::reduce(backend, f_buffer, ReduceOp::Sum, std::nullopt, o); },
                     4.0 * n, 0, ""});
  // scan: inclusive sum of u32.
  {
    std::vector<uint32_t> want(n);
    uint32_t acc = 0;
    for (size_t i = 0; i < n; ++i) want[i] = acc += xu[i];
    if (vyre::lib::scan(backend, u_buffer)->read_as<uint32_t>() != want) fail("scan gave a wrong prefix");
  }
  figures.push_back({"scan_sum_u32",
                     [&](const Options& o) {
                       vyre::lib::scan(backend, u_buffer, ReduceOp::Sum, vyre::lib::ScanKind::Inclusive, std::nullopt, o);
                     },
                     8.0 * n, 0, ""});
  // sort: u32 keys.
  const size_t m = size_t{1} << s.log2_sort;
  std::vector<uint32_t> keys(m);
  for (auto& k : keys) k = static_cast<uint32_t>(rng());
  const Buffer k_buffer = backend.upload(keys);
  {
    std::vector<uint32_t> want = keys;
    std::sort(want.begin(), want.end());
    if (vyre::lib::sort(backend, k_buffer, nullptr).keys->read_as<uint32_t>() != want) fail("sort gave a wrong order");
  }
  figures.push_back({"sort_u32",
                     [&](const Options& o) { vyre::lib::sort(backend, k_buffer, nullptr, vyre::lib::SortOrder::Ascending, std::nullopt, o); },
                     0, static_cast<double>(m), "Gkeys/s"});
  // histogram: 256 bins of the f32 values in [0, 16).
  {
    std::vector<uint32_t> want(256, 0);
    for (float x : xf) ++want[static_cast<size_t>(x * 16)];
    if (vyre::lib::histogram(backend, f_buffer, 256, 0.0, 16.0).counts->read_as<uint32_t>() != want)
      fail("histogram gave wrong counts");
  }
  figures.push_back({"histogram_f32_256",
                     [&](const Options& o) { vyre::lib::histogram(backend, f_buffer, 256, 0.0, 16.0, std::nullopt, o); },
                     4.0 * n, 0, ""});
  // compact: the u32 values whose u8 mask is set, about half.
  std::vector<uint8_t> mask(n);
  std::vector<uint32_t> kept;
  for (size_t i = 0; i < n; ++i) {
    mask[i] = static_cast<uint8_t>(xu[i] & 1);
    if (mask[i]) kept.push_back(xu[i]);
  }
  const Buffer mask_buffer = backend.upload(mask);
  if (vyre::lib::compact(backend, u_buffer, mask_buffer).buffer->read_as<uint32_t>() != kept) fail("compact lost values");
  figures.push_back({"compact_u32_by_u8",
                     [&](const Options& o) { vyre::lib::compact(backend, u_buffer, mask_buffer, std::nullopt, o); },
                     5.0 * n + 4.0 * static_cast<double>(kept.size()), 0, ""});
  // find: 1,000 secret-like patterns in random uppercase bytes, some planted.
  const size_t bytes = size_t{1} << s.log2_find;
  std::vector<uint8_t> haystack(bytes);
  for (auto& c : haystack) c = static_cast<uint8_t>('A' + rng() % 26);
  std::vector<std::string> patterns;
  for (int p = 0; p < 1000; ++p) {
    std::string t = "AKIA";
    for (int k = 0; k < 12; ++k) t += static_cast<char>('A' + rng() % 26);
    patterns.push_back(t);
  }
  for (size_t at = 12345; at + 16 < bytes; at += bytes / 64) std::memcpy(&haystack[at], patterns[at % 1000].data(), 16);
  const Buffer hay_buffer = backend.upload(haystack);
  if (vyre::lib::find(backend, hay_buffer, patterns).position->elements() < 32) fail("find missed the planted patterns");
  figures.push_back({"find_1000_patterns", [&](const Options& o) { vyre::lib::find(backend, hay_buffer, patterns, std::nullopt, o); },
                     static_cast<double>(bytes), 0, ""});
  // matmul: square f32.
  const uint32_t d = s.matmul;
  std::vector<float> a(size_t{d} * d), bm(size_t{d} * d);
  for (auto& x : a) x = static_cast<float>(rng() % 17) - 8;
  for (auto& x : bm) x = static_cast<float>(rng() % 17) - 8;
  const Buffer a_buffer = backend.upload(a);
  const Buffer b_buffer = backend.upload(bm);
  {
    const std::vector<float> c = vyre::lib::matmul(backend, a_buffer, b_buffer, d, d, d)->read_as<float>();
    for (uint32_t i : {0u, d / 3, d - 1}) {  // a few elements, exact: small integers
      double want = 0;
      for (uint32_t k = 0; k < d; ++k) want += double(a[size_t{i} * d + k]) * bm[size_t{k} * d + (d - 1 - i)];
      if (c[size_t{i} * d + (d - 1 - i)] != static_cast<float>(want)) fail("matmul gave a wrong element");
    }
  }
  figures.push_back({"matmul_f32", [&](const Options& o) { vyre::lib::matmul(backend, a_buffer, b_buffer, d, d, d, std::nullopt, o); },
                     0, 2.0 * d * d * d / 1e3, "TFLOP/s (2 M N K / time)"});
  // transpose: square f32.
  const uint32_t t = s.transpose;
  std::vector<float> xt(size_t{t} * t);
  for (size_t i = 0; i < xt.size(); ++i) xt[i] = static_cast<float>(i);
  const Buffer t_buffer = backend.upload(xt);
  {
    const std::vector<float> out = vyre::lib::transpose(backend, t_buffer, t, t)->read_as<float>();
    if (out[1] != xt[t] || out[size_t{t} * t - 2] != xt[size_t{t} * (t - 1) - 1]) fail("transpose misplaced values");
  }
  figures.push_back({"transpose_f32", [&](const Options& o) { vyre::lib::transpose(backend, t_buffer, t, t, std::nullopt, o); },
                     8.0 * t * t, 0, ""});
  // softmax: rows of f32.
  const uint32_t rows = s.softmax_rows, cols = s.softmax_cols;
  std::vector<float> xs(size_t{rows} * cols);
  for (auto& x : xs) x = static_cast<float>(rng() % 2001) / 100 - 10;
  const Buffer s_buffer = backend.upload(xs);
  {
    const std::vector<float> out = vyre::lib::softmax(backend, s_buffer, rows, cols)->read_as<float>();
    const double row = std::accumulate(out.begin(), out.begin() + cols, 0.0);
    if (std::fabs(row - 1) > 1e-4) fail("softmax's first row does not sum to 1");
  }
  figures.push_back({"softmax_f32", [&](const Options& o) { vyre::lib::softmax(backend, s_buffer, rows, cols, std::nullopt, o); },
                     8.0 * rows * cols, 0, ""});

  // What a call costs beside its kernels: a whole reduce of 4,096 elements
  // (one pass), planning, recording, submitting and waiting.
  {
    const Buffer small = backend.upload(std::vector<float>(4096, 1.0f));
    const auto call = [&] { vyre::lib::reduce(backend, small, ReduceOp::Sum); };
    emit("reduce_call_4096_ms", median_ms(reps, call), "ms (whole call, host clock)");
    if (const auto gpu = median_gpu_ms(backend, reps, call)) emit("reduce_call_4096_gpu_ms", gpu->ms, "ms (GPU timestamps)");
  }
  for (const Figure& f : figures)
    if (only.empty() || f.name.rfind(only, 0) == 0) run(backend, f, reps, quick ? 0 : 500);
  // sort's shapes side by side (sort_u32_<W>x<I>[_r<R>]): keys straight to
  // their places ({128, 16} and {64, 32, 5}, whose spans do not fit
  // workgroup memory beside the digit table), the span ordered in workgroup
  // memory first (the other 4- to 6-bit shapes), and 8-bit digits (two
  // rankings in workgroup memory); then keys with u32 values
  // (sort_pairs_u32_...). Each result checked, each shape after half a
  // second of its own calls.
  if (only.empty() || only == "sort_shapes") {
    std::vector<uint32_t> sorted = keys;
    std::sort(sorted.begin(), sorted.end());
    std::vector<uint32_t> index(m);
    for (uint32_t i = 0; i < m; ++i) index[i] = i;
    const Buffer i_buffer = backend.upload(index);
    const auto shape_name = [](const char* what, const vyre::lib::SortShape& shape) {
      std::string name = what;
      name.append(std::to_string(shape.workgroup)).append("x").append(std::to_string(shape.items));
      if (shape.radix_bits != 4) name.append("_r").append(std::to_string(shape.radix_bits));
      return name;
    };
    const auto time_shape = [&](const std::string& name, const Buffer& values, const vyre::lib::SortShape& shape) {
      const auto call = [&] { return vyre::lib::sort(backend, k_buffer, values, vyre::lib::SortOrder::Ascending, shape); };
      const vyre::lib::SortedBuffers got = call();
      if (got.keys->read_as<uint32_t>() != sorted) fail(name + " gave a wrong order");
      if (values) {
        const std::vector<uint32_t> moved = got.values->read_as<uint32_t>();
        for (size_t i = 0; i < m; ++i)
          if (keys[moved[i]] != sorted[i]) fail(name + " moved a value away from its key");
      }
      warm_up([&] { (void)call(); }, quick ? 0 : 500);
      emit(name + "_ms", median_ms(reps, [&] { (void)call(); }), "ms (whole call, host clock)");
      if (const auto gpu = median_gpu_ms(backend, reps, [&] { (void)call(); })) emit(name + "_gpu_ms", gpu->ms, "ms (GPU timestamps)");
    };
    for (const vyre::lib::SortShape shape : {vyre::lib::SortShape{128, 16}, vyre::lib::SortShape{128, 8},
                                             vyre::lib::SortShape{64, 32}, vyre::lib::SortShape{64, 16},
                                             vyre::lib::SortShape{64, 8}, vyre::lib::SortShape{32, 32},
                                             vyre::lib::SortShape{32, 16}, vyre::lib::SortShape{64, 16, 5},
                                             vyre::lib::SortShape{64, 32, 5}, vyre::lib::SortShape{32, 32, 5},
                                             vyre::lib::SortShape{32, 16, 6}, vyre::lib::SortShape{32, 32, 6},
                                             vyre::lib::SortShape{128, 16, 8}, vyre::lib::SortShape{64, 32, 8},
                                             vyre::lib::SortShape{128, 8, 8}, vyre::lib::SortShape{64, 16, 8}})
      time_shape(shape_name("sort_u32_", shape), nullptr, shape);
    for (const vyre::lib::SortShape shape : {vyre::lib::SortShape{128, 16}, vyre::lib::SortShape{64, 8},
                                             vyre::lib::SortShape{128, 8, 8}, vyre::lib::SortShape{64, 16, 8},
                                             vyre::lib::SortShape{64, 8, 8}})
      time_shape(shape_name("sort_pairs_u32_", shape), i_buffer, shape);
  }
  // scan's shapes side by side: GPU time of a whole inclusive sum of u32
  // (scan_u32_<W>x<I>), each result checked first, each shape after half a
  // second of its own calls (the GPU's clocks up).
  if (only.empty() || only == "scan_shapes") {
    std::vector<uint32_t> want(n);
    uint32_t acc = 0;
    for (size_t i = 0; i < n; ++i) want[i] = acc += xu[i];
    for (const vyre::lib::ReduceShape shape :
         {vyre::lib::ReduceShape{64, 8}, vyre::lib::ReduceShape{64, 16}, vyre::lib::ReduceShape{64, 32},
          vyre::lib::ReduceShape{128, 4}, vyre::lib::ReduceShape{128, 8}, vyre::lib::ReduceShape{128, 16},
          vyre::lib::ReduceShape{256, 4}, vyre::lib::ReduceShape{256, 8}, vyre::lib::ReduceShape{512, 4}}) {
      const auto call = [&] {
        return vyre::lib::scan(backend, u_buffer, ReduceOp::Sum, vyre::lib::ScanKind::Inclusive, shape);
      };
      const std::string name = "scan_u32_" + std::to_string(shape.workgroup) + "x" + std::to_string(shape.items);
      if (call()->read_as<uint32_t>() != want) fail(name + " gave a wrong prefix");
      warm_up([&] { (void)call(); }, quick ? 0 : 500);
      if (const auto gpu = median_gpu_ms(backend, reps, [&] { (void)call(); })) {
        emit(name + "_gpu_ms", gpu->ms, "ms (GPU timestamps)");
        emit(name + "_gpu_gbs", 8.0 * n / gpu->ms / 1e6, "GB/s (N*4 read + N*4 written / GPU time)");
      }
    }
    // The default shape's passes alone: the first (reduce_pass over the
    // spans) and the last, over the same 2^28 elements.
    const vyre::lib::ReduceShape shape{64, 8};
    const uint32_t groups = vyre::lib::detail::groups_for(n, shape);
    const PassTimes first = first_pass_ms(backend, vyre::lib::reduce_pass(vyre::ScalarType::U32, ReduceOp::Sum, shape),
                                          u_buffer, n, shape, reps);
    if (first.gpu_ms) emit("scan_u32_64x8_first_pass_gpu_ms", *first.gpu_ms, "ms (GPU timestamps, one dispatch)");
    if (const auto last = last_pass_gpu_ms(
            backend, vyre::lib::scan_pass(vyre::ScalarType::U32, ReduceOp::Sum, vyre::lib::ScanKind::Inclusive, shape),
            u_buffer, n, groups, reps, quick))
      emit("scan_u32_64x8_last_pass_gpu_ms", *last, "ms (GPU timestamps, one dispatch)");
  }
  // scan's first pass (reduce_pass over 2^28 u32) at spans of 512 elements,
  // as the default 64 x 8's last pass needs them, by other workgroups: how
  // much of the first pass is its tree over the workgroup. 64 x 8 first and
  // last, to show drift.
  if (only == "scan_first_pass") {
    for (const vyre::lib::ReduceShape shape : {vyre::lib::ReduceShape{64, 8}, vyre::lib::ReduceShape{32, 16},
                                               vyre::lib::ReduceShape{16, 32}, vyre::lib::ReduceShape{128, 4},
                                               vyre::lib::ReduceShape{64, 8}}) {
      const PassTimes t = first_pass_ms(backend, vyre::lib::reduce_pass(vyre::ScalarType::U32, ReduceOp::Sum, shape), u_buffer, n,
                                        shape, reps);
      if (t.gpu_ms)
        emit("scan_first_pass_" + std::to_string(shape.workgroup) + "x" + std::to_string(shape.items) + "_gpu_ms", *t.gpu_ms,
             "ms (GPU timestamps, one dispatch)");
    }
    // The whole scan at 64 x 8 (one tile a workgroup) with its first pass at
    // those workgroups, alternating, twice.
    vyre::lib::detail::set_scan_tiles_per_workgroup(1);
    std::vector<uint32_t> want(n);
    uint32_t acc = 0;
    for (size_t i = 0; i < n; ++i) want[i] = acc += xu[i];
    for (int round = 1; round <= 2; ++round)
      for (const uint32_t w : {64u, 32u, 16u}) {
        vyre::lib::detail::set_scan_first_pass_workgroup(w);
        const auto call = [&] { return vyre::lib::scan(backend, u_buffer, ReduceOp::Sum, vyre::lib::ScanKind::Inclusive, vyre::lib::ReduceShape{64, 8}); };
        const std::string name = "scan_u32_64x8_first_pass_w" + std::to_string(w) + "_round" + std::to_string(round);
        if (call()->read_as<uint32_t>() != want) fail(name + " gave a wrong prefix");
        warm_up([&] { (void)call(); }, quick ? 0 : 500);
        if (const auto gpu = median_gpu_ms(backend, reps, [&] { (void)call(); })) emit(name + "_gpu_ms", gpu->ms, "ms (GPU timestamps)");
      }
    vyre::lib::detail::set_scan_first_pass_workgroup(0);
    vyre::lib::detail::set_scan_tiles_per_workgroup(0);
  }
  // scan at 64 x 8 with each workgroup of its last pass scanning T tiles in
  // turn (spans of T*512, the first pass's workgroup widened to 16 items
  // each), each tile's elements loaded at its turn or during the tile
  // before (_tTp), alternating, twice: GPU time of the whole inclusive sum.
  if (only == "scan_tiles") {
    std::vector<uint32_t> want(n);
    uint32_t acc = 0;
    for (size_t i = 0; i < n; ++i) want[i] = acc += xu[i];
    for (int round = 1; round <= 2; ++round)
      for (const uint32_t variant : {1u, 2u, 4u, 8u, 16u, 102u, 104u, 108u, 116u}) {
        const uint32_t tiles = variant % 100;
        const bool prefetched = variant > 100;
        vyre::lib::detail::set_scan_tiles_per_workgroup(tiles, prefetched);
        const auto call = [&] {
          return vyre::lib::scan(backend, u_buffer, ReduceOp::Sum, vyre::lib::ScanKind::Inclusive, vyre::lib::ReduceShape{64, 8});
        };
        const std::string name =
            "scan_u32_64x8_t" + std::to_string(tiles) + (prefetched ? "p" : "") + "_round" + std::to_string(round);
        if (call()->read_as<uint32_t>() != want) fail(name + " gave a wrong prefix");
        warm_up([&] { (void)call(); }, quick ? 0 : 500);
        if (const auto gpu = median_gpu_ms(backend, reps, [&] { (void)call(); })) {
          emit(name + "_gpu_ms", gpu->ms, "ms (GPU timestamps)");
          emit(name + "_gpu_gbs", 8.0 * n / gpu->ms / 1e6, "GB/s (N*4 read + N*4 written / GPU time)");
        }
      }
    vyre::lib::detail::set_scan_tiles_per_workgroup(0);
  }
  // The tiled forms' passes alone at 64 x 8 (T = 1, 8 and 16 prefetched):
  // the first pass over spans of T tiles and the last pass; then the whole
  // scan at T = 1, 16 and 32 (prefetched or not), and at 16 prefetched with
  // the first pass at workgroups of 256 and 1,024, alternating, twice.
  if (only == "scan_tiles_passes") {
    const vyre::lib::ReduceShape shape{64, 8};
    for (const uint32_t variant : {1u, 8u, 116u}) {
      const uint32_t tiles = variant % 100;
      const bool prefetched = variant > 100;
      const std::string name = "scan_u32_64x8_t" + std::to_string(tiles) + (prefetched ? "p" : "");
      const vyre::lib::ReduceShape first_shape = vyre::lib::detail::scan_first_pass_shape(shape, tiles);
      const PassTimes first = first_pass_ms(
          backend, vyre::lib::reduce_pass(vyre::ScalarType::U32, ReduceOp::Sum, first_shape), u_buffer, n, first_shape, reps);
      if (first.gpu_ms)
        emit(name + "_first_pass_" + std::to_string(first_shape.workgroup) + "x" + std::to_string(first_shape.items) + "_gpu_ms",
             *first.gpu_ms, "ms (GPU timestamps, one dispatch)");
      const uint32_t groups = vyre::lib::detail::groups_for(n, {shape.workgroup, shape.items * tiles});
      if (const auto last = last_pass_gpu_ms(backend,
                                              vyre::lib::detail::scan_tiles_pass(vyre::ScalarType::U32, ReduceOp::Sum,
                                                                                 vyre::lib::ScanKind::Inclusive, shape,
                                                                                 tiles, prefetched),
                                              u_buffer, n, groups, reps, quick))
        emit(name + "_last_pass_gpu_ms", *last, "ms (GPU timestamps, one dispatch)");
    }
    std::vector<uint32_t> want(n);
    uint32_t acc = 0;
    for (size_t i = 0; i < n; ++i) want[i] = acc += xu[i];
    for (int round = 1; round <= 2; ++round)
      for (const uint32_t variant : {1u, 116u, 16u, 132u, 32u, 256116u, 1024116u}) {
        const uint32_t tiles = variant % 100;
        const bool prefetched = variant % 1000 > 100;
        const uint32_t first_workgroup = variant / 1000;
        vyre::lib::detail::set_scan_tiles_per_workgroup(tiles, prefetched);
        vyre::lib::detail::set_scan_first_pass_workgroup(first_workgroup);
        const auto call = [&] {
          return vyre::lib::scan(backend, u_buffer, ReduceOp::Sum, vyre::lib::ScanKind::Inclusive, shape);
        };
        std::string name = "scan_u32_64x8_t" + std::to_string(tiles) + (prefetched ? "p" : "");
        if (first_workgroup != 0) name += "_first_pass_w" + std::to_string(first_workgroup);
        name += "_round" + std::to_string(round);
        if (call()->read_as<uint32_t>() != want) fail(name + " gave a wrong prefix");
        warm_up([&] { (void)call(); }, quick ? 0 : 500);
        if (const auto gpu = median_gpu_ms(backend, reps, [&] { (void)call(); })) emit(name + "_gpu_ms", gpu->ms, "ms (GPU timestamps)");
      }
    // Shorter inputs (2^24 and 2^26 of the same elements): where 16 tiles
    // a workgroup leave too few workgroups to fill the device.
    for (const uint32_t log2 : {24u, 26u}) {
      const size_t m = size_t{1} << log2;
      if (m > n) continue;
      const Buffer part = backend.upload(std::vector<uint32_t>(xu.begin(), xu.begin() + static_cast<std::ptrdiff_t>(m)));
      for (const uint32_t variant : {1u, 116u, 1u, 116u}) {
        vyre::lib::detail::set_scan_tiles_per_workgroup(variant % 100, variant > 100);
        const auto call = [&] { return vyre::lib::scan(backend, part, ReduceOp::Sum, vyre::lib::ScanKind::Inclusive, shape); };
        const std::string name = "scan_u32_2e" + std::to_string(log2) + "_64x8_t" + std::to_string(variant % 100) + (variant > 100 ? "p" : "");
        const std::vector<uint32_t> got = call()->read_as<uint32_t>();
        if (!std::equal(got.begin(), got.end(), want.begin())) fail(name + " gave a wrong prefix");
        warm_up([&] { (void)call(); }, quick ? 0 : 300);
        if (const auto gpu = median_gpu_ms(backend, reps, [&] { (void)call(); })) emit(name + "_gpu_ms", gpu->ms, "ms (GPU timestamps)");
      }
    }
    vyre::lib::detail::set_scan_tiles_per_workgroup(0);
    vyre::lib::detail::set_scan_first_pass_workgroup(0);
  }
  // sort's passes alone, one digit's (the lowest 4 or 8 bits), in fixed shapes:
  // the count pass, the scan of its counts, and the scatter, each the GPU
  // time of one dispatch (or one scan call) in a Batch of its own, each
  // after half a second of its own calls.
  if (only.empty() || only == "sort_passes") {
    for (const vyre::lib::SortShape shape : {vyre::lib::SortShape{128, 16}, vyre::lib::SortShape{128, 8},
                                             vyre::lib::SortShape{64, 16}, vyre::lib::SortShape{128, 16, 8},
                                             vyre::lib::SortShape{64, 16, 8}}) {
      std::string name = "sort_pass_" + std::to_string(shape.workgroup) + "x" + std::to_string(shape.items);
      if (shape.radix_bits != 4) name.append("_r").append(std::to_string(shape.radix_bits));
      const uint32_t digit_mask = (1u << shape.radix_bits) - 1;
      const uint32_t groups = vyre::lib::detail::groups_for(m, {shape.workgroup, shape.items});
      const vyre::Dim3 grid = vyre::lib::detail::grid_for(groups);
      vyre::gpu::Pipeline count =
          backend.compile(vyre::lib::sort_count_pass(vyre::ScalarType::U32, vyre::lib::SortOrder::Ascending, shape));
      vyre::gpu::Pipeline scatter = backend.compile(
          vyre::lib::sort_scatter_pass(vyre::ScalarType::U32, false, vyre::lib::SortOrder::Ascending, shape));
      vyre::Inputs counted;
      counted.device("keys", k_buffer).set<uint32_t>("shift", {0}).size("counts", (digit_mask + 1) * groups);
      Buffer counts;
      const auto count_call = [&] {
        vyre::gpu::Batch batch(backend);
        counts = batch.dispatch_resident(count, counted, grid).get("counts");
        batch.run();
      };
      count_call();
      Buffer offsets;
      const auto scan_call = [&] {
        offsets = vyre::lib::scan(backend, counts, ReduceOp::Sum, vyre::lib::ScanKind::Exclusive);
      };
      scan_call();
      vyre::Inputs moved;
      // Bound in place, as sort binds its own, so no clear precedes it.
      moved.device("keys", k_buffer).set<uint32_t>("shift", {0}).device("offsets", offsets);
      moved.device("keys_out", backend.upload(std::vector<uint32_t>(m)));
      Buffer out;
      const auto scatter_call = [&] {
        vyre::gpu::Batch batch(backend);
        out = batch.dispatch_resident(scatter, moved, grid).get("keys_out");
        batch.run();
      };
      scatter_call();
      {
        const std::vector<uint32_t> got = out->read_as<uint32_t>();
        for (size_t i = 1; i < m; ++i)
          if ((got[i - 1] & digit_mask) > (got[i] & digit_mask)) fail(name + "'s scatter left keys out of digit order");
      }
      for (const auto& [pass, call] : {std::pair<std::string, std::function<void()>>{"count", count_call},
                                       {"scan", scan_call}, {"scatter", scatter_call}}) {
        warm_up(call, quick ? 0 : 500);
        if (const auto gpu = median_gpu_ms(backend, reps, call)) emit(name + "_" + pass + "_gpu_ms", gpu->ms, "ms (GPU timestamps)");
      }
    }
  }
  // reduce's first pass alone (reduce_pass, over spans), for what a call
  // adds to its kernel; its loads in a loop, then unrolled (the default).
  for (const bool unrolled : {false, true}) {
    if (!only.empty() && only != "reduce_first_pass") break;
    vyre::lib::detail::set_reduce_loads_unrolled(unrolled);
    for (const vyre::lib::ReduceShape shape : {vyre::lib::ReduceShape{64, 32}, vyre::lib::ReduceShape{256, 32},
                                               vyre::lib::ReduceShape{256, 4}}) {
      const std::string name = std::string(unrolled ? "unrolled_" : "looped_") + std::to_string(shape.workgroup) + "x" +
                               std::to_string(shape.items);
      const PassTimes t =
          first_pass_ms(backend, vyre::lib::reduce_pass(vyre::ScalarType::F32, ReduceOp::Sum, shape), f_buffer, n, shape, reps);
      emit("reduce_first_pass_ms_" + name, t.ms, "ms (host clock, 20 in one Batch, over 20)");
      emit("reduce_first_pass_gbs_" + name, 4.0 * n / t.ms / 1e6, "GB/s (N*4 read / time)");
      if (t.gpu_ms) {
        emit("reduce_first_pass_gpu_ms_" + name, *t.gpu_ms, "ms (GPU timestamps, one dispatch)");
        emit("reduce_first_pass_gpu_gbs_" + name, 4.0 * n / *t.gpu_ms / 1e6, "GB/s (N*4 read / GPU time)");
      }
    }
  }
  if (only.empty() || only == "reduce_structures") reduce_structures(backend, f_buffer, exact, u_buffer, xu, reps);
  return 0;
}
