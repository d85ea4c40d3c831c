// One fresh process's time to first result: builds a program, opens a
// Backend (through the AOT cache the environment names), compiles,
// dispatches once and reads the result back, then prints one JSON object
// with the monotonic time of each stage. bench/ttfr.py starts it cold and
// warm and passes the moment it started it.
//
//   build/bench/first_result --program chain|saxpy|floor [--statements N]
//                            [--elements N] [--spawn-ns T]
//
// `floor` is the bare start no library can go under: a plain wgpu-native
// instance, adapter and device (bench/support/raw_wgpu.hpp), and no program.
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "samples/programs.hpp"
#include "support/raw_wgpu.hpp"
#include "vyre/driver_cache.hpp"
#include "vyre/gpu.hpp"

namespace {

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // the clock Python's time.monotonic_ns() reads
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

double ms_between(int64_t from, int64_t to) { return static_cast<double>(to - from) / 1e6; }

}  // namespace

int main(int argc, char** argv) {
  const int64_t main_ns = now_ns();
  std::string which = "chain";
  int statements = 5000;
  uint32_t elements = 1u << 20;
  int64_t spawn_ns = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    if (arg == "--program") which = argv[i + 1];
    else if (arg == "--statements") statements = std::atoi(argv[i + 1]);
    else if (arg == "--elements") elements = static_cast<uint32_t>(std::atoll(argv[i + 1]));
    else if (arg == "--spawn-ns") spawn_ns = std::atoll(argv[i + 1]);
  }
  try {
    if (which == "floor") {
      const vyre::bench::RawWgpu raw("");
      const int64_t device_ns = now_ns();
      std::printf("{\"tool\": \"floor\", \"adapter\": \"%s\", \"ok\": true, \"first_result_ms\": %.3f, "
                  "\"stages_ms\": {\"process_start\": %.3f, \"instance_adapter_device\": %.3f}}\n",
                  raw.adapter().c_str(), spawn_ns ? ms_between(spawn_ns, device_ns) : ms_between(main_ns, device_ns),
                  spawn_ns ? ms_between(spawn_ns, main_ns) : 0.0, ms_between(main_ns, device_ns));
      std::fflush(stdout);
      return 0;
    }
    int64_t t = now_ns();
    const vyre::CheckedProgram program = which == "saxpy" ? vyre::samples::saxpy_program() : vyre::samples::chain_program(statements);
    const double program_ms = ms_between(t, now_ns());

    t = now_ns();
    vyre::Inputs inputs;
    std::vector<float> x, y;
    std::vector<uint32_t> a;
    std::optional<vyre::Dim3> grid;
    if (which == "saxpy") {
      x.resize(elements);
      y.assign(elements, 1.0f);
      for (uint32_t i = 0; i < elements; ++i) x[i] = static_cast<float>(i % 4096);
      inputs.set<float>("alpha", {2.0f}).view<float>("x", x).view<float>("y", y);
      grid = vyre::samples::saxpy_grid(elements);
    } else {
      a.resize(elements);
      for (uint32_t i = 0; i < elements; ++i) a[i] = i * 2654435761u;
      inputs.view<uint32_t>("a", a).size("out", elements);
    }
    const double inputs_ms = ms_between(t, now_ns());

    vyre::gpu::Backend backend;
    const int64_t backend_ns = now_ns();
    vyre::gpu::Pipeline pipeline = backend.compile(program);
    const int64_t compile_ns = now_ns();
    vyre::gpu::DispatchReport dispatch;
    const vyre::Outputs outputs = pipeline.dispatch(inputs, grid, &dispatch);
    const int64_t result_ns = now_ns();

    bool ok = true;
    if (which == "saxpy") {
      const auto out = outputs.get<float>("y");
      for (uint32_t i = 0; i < elements; i += 997) ok = ok && out[i] == 2.0f * static_cast<float>(i % 4096) + 1.0f;
    } else {
      ok = outputs.bytes("out").size() == uint64_t{elements} * 4;
    }
    const auto& b = backend.report();
    const auto& c = pipeline.compile_report();
    const auto placed = vyre::gpu::driver_cache_placement();
    std::printf(
        "{\"tool\": \"vyre\", \"program\": \"%s\", \"elements\": %u, \"ok\": %s, \"cache_hit\": %s, "
        "\"driver_cache_placed\": %s, "
        "\"first_result_ms\": %.3f, \"stages_ms\": {\"process_start\": %.3f, \"program\": %.3f, \"inputs\": %.3f, "
        "\"instance\": %.3f, \"adapter\": %.3f, \"device\": %.3f, \"cache_open\": %.3f, \"cache_or_lowering\": %.3f, "
        "\"lowering\": %.3f, \"shader\": %.3f, \"pipeline\": %.3f, \"upload\": %.3f, \"dispatch\": %.3f, "
        "\"readback\": %.3f}, \"backend_ms\": %.3f, \"compile_ms\": %.3f}\n",
        program.name().c_str(), elements, ok ? "true" : "false", c.cache_hit ? "true" : "false",
        placed && placed->active ? "true" : "false", spawn_ns ? ms_between(spawn_ns, result_ns) : ms_between(main_ns, result_ns),
        spawn_ns ? ms_between(spawn_ns, main_ns) : 0.0, program_ms, inputs_ms, b.instance_ms, b.adapter_ms,
        b.device_ms, b.cache_ms, c.cache_ms, c.lower_ms, c.shader_ms, c.pipeline_ms, dispatch.upload_ms,
        dispatch.dispatch_ms, dispatch.readback_ms, ms_between(main_ns, backend_ns), ms_between(backend_ns, compile_ns));
    std::fflush(stdout);
    return ok ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "first_result: %s\n", e.what());
    return 1;
  }
}
