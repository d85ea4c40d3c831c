// The figures of the lowering's passes and of length specialization
// (docs/benchmarks.md, "Passes and length specialization"), each measured
// side by side in one process, alternating. Prints JSON lines
// {"name", "value", "unit"}.
//
// compile  for each example (with its run file), a 64-tap builder-unrolled
//          stencil and a 5,000-statement chain: the WGSL's size, and a cold
//          compile and first dispatch (lowering, naga's shader module, the
//          driver's pipeline, and the first dispatch, in which lavapipe
//          compiles the shader with LLVM) with the passes on and off, each
//          in a fresh Backend with an empty in-memory cache. The driver's own shader caches are
//          off (set before the first device), so every compile is the
//          driver's full work.
// kernels  kernel time of the sample kernels (bench/support/kernels.hpp)
//          with the passes on against off, and with the dispatch's lengths
//          fixed in the shader against not; one-element shaders (no
//          widening) throughout.
//
//   specialization_figures [--quick] [--examples DIR] [--only compile,kernels]
//                          --quick: fewer repetitions and sizes for a CPU device
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "samples/programs.hpp"
#include "support/json_lines.hpp"
#include "support/kernels.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"
#include "vyre/json.hpp"
#include "vyre/lower.hpp"
#include "vyre/run_file.hpp"

namespace {

using vyre::bench::emit;
using vyre::bench::emit_text;
using vyre::bench::median;

[[noreturn]] void fail(const std::string& why) {
  (void)std::fprintf(stderr, "specialization_figures: %s\n", why.c_str());
  std::exit(1);
}

struct Options {
  bool quick = false;
  std::filesystem::path examples = VYRE_EXAMPLES_DIR;
  std::set<std::string> only;
  bool wants(const std::string& part) const { return only.empty() || only.count(part); }
};

vyre::ShaderOptions with_passes(bool on) {
  vyre::ShaderOptions o;
  o.passes = on;
  return o;
}

vyre::gpu::BackendOptions fresh_backend_options() {
  vyre::gpu::BackendOptions options;
  options.cache = std::make_shared<vyre::aot::Cache>(vyre::aot::CacheOptions{});  // in memory, empty
  options.widen = false;
  return options;
}

struct CompileTimes {
  std::vector<double> lower, shader, pipeline, dispatch, total;
};

// A program to compile cold, with inputs for its first dispatch: on lavapipe
// the driver's own compile (LLVM) happens there, not in the pipeline.
struct CompileCase {
  std::string name;
  vyre::CheckedProgram program;
  vyre::RunInputs run;
};

void compile_once(const CompileCase& c, bool passes, CompileTimes& t) {
  vyre::gpu::Backend backend(fresh_backend_options());
  vyre::gpu::Pipeline pipeline = backend.compile(c.program, with_passes(passes));
  const vyre::gpu::CompileReport& r = pipeline.compile_report();
  if (r.cache_hit || r.memory_hit) fail(c.name + ": a compile that should be cold hit a cache");
  vyre::gpu::DispatchReport d;
  (void)pipeline.dispatch(c.run.inputs, c.run.grid, &d);
  t.lower.push_back(r.lower_ms);
  t.shader.push_back(r.shader_ms);
  t.pipeline.push_back(r.pipeline_ms);
  t.dispatch.push_back(d.dispatch_ms);
  t.total.push_back(r.lower_ms + r.shader_ms + r.pipeline_ms + d.dispatch_ms);
}

void compile_figures(const CompileCase& c, int reps) {
  const std::string on_text = vyre::lower_to_wgsl(c.program, with_passes(true));
  const std::string off_text = vyre::lower_to_wgsl(c.program, with_passes(false));
  const std::string name = "compile." + c.name;
  emit(name + ".wgsl_bytes_on", static_cast<double>(on_text.size()), "B");
  emit(name + ".wgsl_bytes_off", static_cast<double>(off_text.size()), "B");
  CompileTimes on, off;
  for (int rep = 0; rep < reps; ++rep) {
    const bool on_first = rep % 2 == 0;
    compile_once(c, on_first, on_first ? on : off);
    compile_once(c, !on_first, on_first ? off : on);
  }
  for (const auto& [part, a, b] :
       {std::tuple{"lower", &on.lower, &off.lower}, std::tuple{"shader", &on.shader, &off.shader},
        std::tuple{"pipeline", &on.pipeline, &off.pipeline}, std::tuple{"first_dispatch", &on.dispatch, &off.dispatch}}) {
    emit(name + "." + part + "_ms_on", median(*a), "ms");
    emit(name + "." + part + "_ms_off", median(*b), "ms");
  }
  emit(name + ".total_ms_on", median(on.total), "ms");
  emit(name + ".total_ms_off", median(off.total), "ms");
  emit(name + ".off_over_on", median(off.total) / median(on.total), "x");
}

CompileCase example_case(const std::filesystem::path& dir, const std::string& name) {
  const std::filesystem::path file = dir / (name + ".json");
  std::ifstream in(file);
  if (!in) fail("cannot read " + file.string() + " (give --examples DIR)");
  std::stringstream text;
  text << in.rdbuf();
  vyre::CheckedProgram program = vyre::program_from_json(text.str());
  vyre::RunInputs run = vyre::read_run_file(program, (dir / (name + ".run.json")).string());
  return {name, std::move(program), std::move(run)};
}

void compile_section(const Options& options) {
  const int reps = options.quick ? 3 : 7;
  for (const char* name : {"xor", "saxpy", "collatz", "histogram", "reduction", "prefix_sum", "matmul_tiled", "softmax",
                           "bitonic_sort"})
    compile_figures(example_case(options.examples, name), reps);
  constexpr uint32_t kElements = 4096;
  CompileCase stencil{"stencil_64", vyre::samples::stencil_program(64), {}};
  stencil.run.inputs.set("x", vyre::bench::random_floats(kElements + 64 * vyre::samples::kStencilStride, 8))
      .size("out", kElements);
  compile_figures(stencil, reps);
  CompileCase chain{"chain_5000", vyre::samples::chain_program(5000), {}};
  chain.run.inputs.set("a", std::vector<uint32_t>(kElements, 7)).size("out", kElements);
  compile_figures(chain, options.quick ? 2 : 3);
}

void kernel_figures(vyre::gpu::Backend& backend, const vyre::bench::Kernel& k, bool quick) {
  vyre::ShaderOptions fixed;
  fixed.fixed_lengths = vyre::dispatched_lengths(k.program, k.inputs, k.grid);
  const std::string signature = vyre::shaping_signature(k.program, fixed);
  emit_text("kernel." + k.name + ".fixed", signature.empty() ? "no len read: the same shader" : signature);
  // Where the passes leave the text as it is, on and off are one shader
  // twice, and their ratio shows the device's noise.
  const bool passes_change_text =
      vyre::lower_to_wgsl(k.program, with_passes(true)) != vyre::lower_to_wgsl(k.program, with_passes(false));
  emit("kernel." + k.name + ".passes_change_text", passes_change_text ? 1 : 0, "");
  struct Variant {
    const char* name;
    vyre::gpu::Pipeline pipeline;
    std::vector<double> seconds;
  };
  std::vector<Variant> variants;
  variants.push_back({"on", backend.compile(k.program, with_passes(true)), {}});
  variants.push_back({"off", backend.compile(k.program, with_passes(false)), {}});
  variants.push_back({"fixed", backend.compile(k.program, fixed), {}});
  const vyre::Inputs& check = k.check.entries().empty() ? k.inputs : k.check;
  const std::vector<float> want = variants[0].pipeline.dispatch(check, k.grid).get<float>(k.output);
  for (size_t v = 1; v < variants.size(); ++v)
    if (auto i = vyre::bench::first_difference(want, variants[v].pipeline.dispatch(check, k.grid).get<float>(k.output)))
      fail(k.name + ": the '" + variants[v].name + "' shader gives other results at " + std::to_string(*i));
  // About 2 ms of dispatches per sample (3 to 200 of them), so that short
  // kernels are not timed at the resolution of one submission.
  const double one = vyre::bench::batch_seconds(backend, variants[0].pipeline, k, k.grid, 3);
  const int per = std::clamp(static_cast<int>(std::ceil(2e-3 / std::max(one, 1e-7))), 3, quick ? 10 : 200);
  const int rounds = quick ? 7 : 15;
  emit("kernel." + k.name + ".dispatches_per_sample", per, "");
  for (int round = 0; round < rounds; ++round)
    for (size_t i = 0; i < variants.size(); ++i) {
      Variant& v = variants[(i + static_cast<size_t>(round)) % variants.size()];  // rotating order
      v.seconds.push_back(vyre::bench::batch_seconds(backend, v.pipeline, k, k.grid, per));
    }
  const double on = median(variants[0].seconds), off = median(variants[1].seconds), fix = median(variants[2].seconds);
  emit("kernel." + k.name + ".on_ms", on * 1e3, "ms");
  emit("kernel." + k.name + ".off_ms", off * 1e3, "ms");
  emit("kernel." + k.name + ".fixed_ms", fix * 1e3, "ms");
  emit("kernel." + k.name + ".off_over_on", off / on, "x");
  emit("kernel." + k.name + ".unfixed_over_fixed", on / fix, "x");
}

void kernel_section(const Options& options) {
  vyre::gpu::Backend backend(fresh_backend_options());
  for (const vyre::bench::Kernel& k : vyre::bench::sample_kernels(backend, options.quick))
    kernel_figures(backend, k, options.quick);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      options.quick = true;
    } else if (arg == "--examples" && i + 1 < argc) {
      options.examples = argv[++i];
    } else if (arg == "--only" && i + 1 < argc) {
      std::stringstream parts(argv[++i]);
      for (std::string part; std::getline(parts, part, ',');) options.only.insert(part);
    } else {
      fail("usage: specialization_figures [--quick] [--examples DIR] [--only compile,kernels]");
    }
  }
  // The drivers' own shader caches off, and vyre's placement of them, before
  // the first device: every compile here is the driver's full work.
  setenv("MESA_SHADER_CACHE_DISABLE", "true", 1);
  setenv("__GL_SHADER_DISK_CACHE", "0", 1);
  setenv("VYRE_DRIVER_CACHE", "0", 1);
  try {
    vyre::gpu::Backend probe(fresh_backend_options());
    emit_text("specialization.adapter", probe.adapter().name);
    if (options.wants("compile")) compile_section(options);
    if (options.wants("kernels")) kernel_section(options);
  } catch (const vyre::Error& e) {
    fail(e.what());
  }
  return 0;
}
