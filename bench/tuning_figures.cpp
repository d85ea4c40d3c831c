// Autotuning's figures (docs/benchmarks.md, "Autotuning"): for three kernels
// that read nothing of their workgroup (samples/programs.hpp: the first
// stage of a sum, a matrix product, a row softmax; and a 16-tap stencil) and
// a saxpy (whose shape stays but which may widen), the kernel time of the
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
#include <string>
#include <vector>

#include <unistd.h>

#include "samples/programs.hpp"
#include "support/json_lines.hpp"
#include "support/kernels.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"
#include "vyre/reference.hpp"

namespace {

using vyre::bench::emit;
using vyre::bench::emit_text;
using vyre::bench::batch_seconds;
using vyre::bench::Kernel;
using vyre::bench::median;

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string& why) {
  (void)std::fprintf(stderr, "tuning_figures: %s\n", why.c_str());
  std::exit(1);
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
  if (auto i = vyre::bench::first_difference(a, b))
    fail(k.name + ": the tuned configuration gives other results at " + std::to_string(*i));
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
  emit_text("tuning." + k.name + ".own", "workgroup " + vyre::dim3_text(r.own_workgroup) + ", 1 per invocation");
  emit_text("tuning." + k.name + ".chosen", "workgroup " + vyre::dim3_text(r.workgroup) + ", " +
                                                std::to_string(r.vector_width) + " per invocation" +
                                                (r.chose_own() ? " (own: " + r.reason + ")" : ""));
  emit("tuning." + k.name + ".candidates", static_cast<double>(r.candidates.size()), "");
  emit("tuning." + k.name + ".tuning_ms", r.tuning_ms, "ms");
}

void run(const vyre::gpu::BackendOptions& options, bool quick) {
  vyre::gpu::Backend backend(options);
  emit_text("tuning.adapter", backend.adapter().name);

  for (const Kernel& k : vyre::bench::sample_kernels(backend, quick)) measure(backend, k, quick);
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

