// The figures of the lowering's passes and of length specialization
// (docs/benchmarks.md, "Passes and length specialization"), each measured
// side by side in one process, alternating. Prints JSON lines
// {"name", "value", "unit"}.
//
// compile  for each example, a 64-tap builder-unrolled stencil and a
//          5,000-statement chain: the WGSL's size,
//          and a cold compile (lowering, naga's shader module, the driver's
//          pipeline) with the passes on and off, each in a fresh Backend
//          with an empty in-memory cache. The driver's own shader caches are
//          off (set before the first device), so every compile is the
//          driver's full work.
// kernels  kernel time of the sample kernels (bench/support/kernels.hpp)
//          with the passes on against off, and with the dispatch's lengths
//          fixed in the shader against not; one-element shaders (no
//          widening) throughout.
//
//   specialization_figures [--quick] [--examples DIR] [--only compile,kernels]
//                          --quick: fewer repetitions and sizes for a CPU device
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "samples/programs.hpp"
#include "support/json_lines.hpp"
#include "support/kernels.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"
#include "vyre/json.hpp"
#include "vyre/lower.hpp"

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
  std::vector<double> lower, shader, pipeline, total;
};

void compile_once(const vyre::CheckedProgram& program, bool passes, CompileTimes& t) {
  vyre::gpu::Backend backend(fresh_backend_options());
  const vyre::gpu::Pipeline pipeline = backend.compile(program, with_passes(passes));
  const vyre::gpu::CompileReport& r = pipeline.compile_report();
  if (r.cache_hit || r.memory_hit) fail(program.name() + ": a compile that should be cold hit a cache");
  t.lower.push_back(r.lower_ms);
  t.shader.push_back(r.shader_ms);
  t.pipeline.push_back(r.pipeline_ms);
  t.total.push_back(r.lower_ms + r.shader_ms + r.pipeline_ms);
}

void compile_figures(const std::string& name, const vyre::CheckedProgram& program, int reps) {
  const std::string on_text = vyre::lower_to_wgsl(program, with_passes(true));
  const std::string off_text = vyre::lower_to_wgsl(program, with_passes(false));
  emit("compile." + name + ".wgsl_bytes_on", static_cast<double>(on_text.size()), "B");
  emit("compile." + name + ".wgsl_bytes_off", static_cast<double>(off_text.size()), "B");
  CompileTimes on, off;
  for (int rep = 0; rep < reps; ++rep) {
    const bool on_first = rep % 2 == 0;
    compile_once(program, on_first, on_first ? on : off);
    compile_once(program, !on_first, on_first ? off : on);
  }
  for (const auto& [part, a, b] : {std::tuple{"lower", &on.lower, &off.lower}, std::tuple{"shader", &on.shader, &off.shader},
                                   std::tuple{"pipeline", &on.pipeline, &off.pipeline}}) {
    emit("compile." + name + "." + part + "_ms_on", median(*a), "ms");
    emit("compile." + name + "." + part + "_ms_off", median(*b), "ms");
  }
  emit("compile." + name + ".total_ms_on", median(on.total), "ms");
  emit("compile." + name + ".total_ms_off", median(off.total), "ms");
  emit("compile." + name + ".off_over_on", median(off.total) / median(on.total), "x");
}

vyre::CheckedProgram read_example(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) fail("cannot read " + file.string() + " (give --examples DIR)");
  std::stringstream text;
  text << in.rdbuf();
  return vyre::program_from_json(text.str());
}

void compile_section(const Options& options) {
  const int reps = options.quick ? 3 : 7;
  for (const char* name : {"xor", "saxpy", "collatz", "histogram", "reduction", "prefix_sum", "matmul_tiled", "softmax",
                           "bitonic_sort"})
    compile_figures(name, read_example(options.examples / (std::string(name) + ".json")), reps);
  compile_figures("stencil_64", vyre::samples::stencil_program(64), reps);
  compile_figures("chain_5000", vyre::samples::chain_program(5000), options.quick ? 2 : 3);
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
  const int rounds = quick ? 7 : 15, per = quick ? 3 : 10;
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
