// Autotuning's figures (docs/benchmarks.md, "Autotuning"): for three kernels
// that read nothing of their workgroup (samples/programs.hpp: the first
// stage of a sum, a matrix product, a row softmax) and a saxpy (whose shape
// stays but which may widen), the kernel time of the
// program's own configuration against the one Backend::tune picks, measured
// side by side in one process, alternating. Prints JSON lines
// {"name", "value", "unit"}.
//
//   tuning_figures [--quick]     --quick: sizes for a CPU device (lavapipe)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "samples/programs.hpp"
#include "support/json_lines.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"
#include "vyre/reference.hpp"

namespace {

using vyre::bench::emit;
using vyre::bench::emit_text;
using vyre::bench::median;

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string& why) {
  (void)std::fprintf(stderr, "tuning_figures: %s\n", why.c_str());
  std::exit(1);
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = d(rng);
  return v;
}

std::string shape(const vyre::Dim3& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

struct Kernel {
  std::string name;
  vyre::CheckedProgram program;
  vyre::Inputs inputs;  // contents as device buffers (a read_write one is written in place); outputs by size
  std::optional<vyre::Dim3> grid;
  std::string output;
  vyre::Inputs check;   // host contents, for comparing results (empty: `inputs`)
};

// Seconds per dispatch of `pipeline`: `per` dispatches in one Batch, waited for.
double batch_seconds(vyre::gpu::Backend& backend, vyre::gpu::Pipeline& pipeline, const Kernel& k,
                     const std::optional<vyre::Dim3>& grid, int per) {
  vyre::gpu::Batch batch(backend);
  for (int i = 0; i < per; ++i) batch.dispatch_resident(pipeline, k.inputs, grid);
  const auto start = Clock::now();
  batch.run();
  return std::chrono::duration<double>(Clock::now() - start).count() / per;
}

void measure(vyre::gpu::Backend& backend, const Kernel& k, bool quick) {
  vyre::gpu::Pipeline own = backend.compile(k.program);
  vyre::gpu::Tuned tuned = backend.tune(k.program, k.inputs, k.grid);
  const vyre::aot::TuningRecord& r = tuned.record;
  // Same results, or the figure means nothing: to the bit, or (f32) within
  // 2^-20 of the output's largest magnitude, since a driver may fuse a
  // multiply and an add in one shader and not in another (docs/tuning.md).
  const vyre::Inputs& check = k.check.entries().empty() ? k.inputs : k.check;
  const std::vector<float> a = own.dispatch(check, k.grid).get<float>(k.output);
  const std::vector<float> b = tuned.pipeline.dispatch(check, tuned.grid).get<float>(k.output);
  float largest = 0;
  for (float v : a) largest = std::max(largest, std::abs(v));
  for (size_t i = 0; i < a.size(); ++i)
    if (!(std::abs(a[i] - b[i]) <= std::ldexp(largest, -20)))
      fail(k.name + ": the tuned configuration gives other results at " + std::to_string(i));
  const int reps = quick ? 7 : 15, per = quick ? 3 : 10;
  std::vector<double> own_s, tuned_s;
  for (int rep = 0; rep < reps; ++rep) {
    if (rep % 2 == 0) {
      own_s.push_back(batch_seconds(backend, own, k, k.grid, per));
      tuned_s.push_back(batch_seconds(backend, tuned.pipeline, k, tuned.grid, per));
    } else {
      tuned_s.push_back(batch_seconds(backend, tuned.pipeline, k, tuned.grid, per));
      own_s.push_back(batch_seconds(backend, own, k, k.grid, per));
    }
  }
  const double o = median(own_s), t = median(tuned_s);
  emit("tuning." + k.name + ".own_ms", o * 1e3, "ms");
  emit("tuning." + k.name + ".tuned_ms", t * 1e3, "ms");
  emit("tuning." + k.name + ".own_over_tuned", o / t, "x");
  emit_text("tuning." + k.name + ".own", "workgroup " + shape(r.own_workgroup) + ", 1 per invocation");
  emit_text("tuning." + k.name + ".chosen", "workgroup " + shape(r.workgroup) + ", " +
                                                std::to_string(r.vector_width) + " per invocation" +
                                                (r.chose_own() ? " (own: " + r.reason + ")" : ""));
  emit("tuning." + k.name + ".candidates", static_cast<double>(r.candidates.size()), "");
  emit("tuning." + k.name + ".tuning_ms", r.tuning_ms, "ms");
}

void run(const vyre::gpu::BackendOptions& options, bool quick) {
  vyre::gpu::Backend backend(options);
  emit_text("tuning.adapter", backend.adapter().name);

  std::vector<Kernel> kernels;
  {
    const uint32_t partials = quick ? 1u << 15 : 1u << 20;
    Kernel k{"partial_sum", vyre::samples::partial_sum_program(), {}, std::nullopt, "partial", {}};
    k.inputs.device("x", backend.upload(random_floats(size_t{partials} * vyre::samples::kPartialSumTerms, 1)))
        .size("partial", partials);
    kernels.push_back(std::move(k));
  }
  {
    const uint32_t n = quick ? 256 : 2048;
    Kernel k{"matmul", vyre::samples::matmul_program(), {}, vyre::Dim3{n / 8, n / 8, 1}, "c", {}};
    k.inputs.set<uint32_t>("dims", {n, n, n})
        .device("a", backend.upload(random_floats(size_t{n} * n, 2)))
        .device("b", backend.upload(random_floats(size_t{n} * n, 3)))
        .size("c", n * n);
    kernels.push_back(std::move(k));
  }
  {
    const uint32_t rows = quick ? 4096 : 1u << 17, cols = quick ? 128 : 256;
    Kernel k{"softmax_rows", vyre::samples::softmax_rows_program(), {}, std::nullopt, "y", {}};
    k.inputs.set<uint32_t>("dims", {cols})
        .device("x", backend.upload(random_floats(size_t{rows} * cols, 4)))
        .size("y", rows * cols);
    // The default grid follows y's length (one invocation per element):
    // give one invocation per row instead.
    k.grid = vyre::Dim3{rows / 64, 1, 1};
    kernels.push_back(std::move(k));
  }
  {
    // A streaming kernel: its index reads nwg, so its shape stays; widening is what tuning can pick.
    const uint32_t n = quick ? 1u << 21 : 1u << 24;
    Kernel k{"saxpy", vyre::samples::saxpy_program(), {}, vyre::samples::saxpy_grid(n), "y", {}};
    const std::vector<float> x = random_floats(n, 5), y = random_floats(n, 6);
    // Timed in place on the GPU (y grows from dispatch to dispatch; its
    // time does not depend on the values); checked on host copies.
    k.inputs.set<float>("alpha", {2.0f}).device("x", backend.upload(x)).device("y", backend.upload(y));
    k.check.set<float>("alpha", {2.0f}).set("x", x).set("y", y);
    kernels.push_back(std::move(k));
  }
  for (const Kernel& k : kernels) measure(backend, k, quick);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") quick = true;
    else fail("usage: tuning_figures [--quick]");
  }
  try {
    // Tuning records go to a fresh folder, so every run tunes.
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("vyre-tuning-figures-" + std::to_string(::getpid()));
    vyre::aot::CacheOptions cache_options;
    cache_options.directory = dir;
    vyre::gpu::BackendOptions options;
    options.cache = std::make_shared<vyre::aot::Cache>(cache_options);
    options.widen = false;  // the own configuration is the one-element shader
    run(options, quick);
    options.cache.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  } catch (const vyre::Error& e) {
    fail(e.what());
  }
  return 0;
}

