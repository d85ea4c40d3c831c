// The GPU backend's warm paths: a dispatch on a compiled Pipeline (buffers
// reused) by element count, a Pipeline's dispatch stages, and a compile that
// finds the pipeline in the Backend's memory.
//
//   build/bench/gpu_dispatch_bench
//   VYRE_WGPU_ADAPTER=1 build/bench/gpu_dispatch_bench --benchmark_filter=Dispatch
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "vyre/builder.hpp"
#include "vyre/gpu.hpp"

namespace {

using namespace vyre::build;

vyre::Program xor_program() {
  return ProgramBuilder("xor")
      .workgroup_size(64)
      .input("a", 0, ScalarType::U32)
      .input("b", 1, ScalarType::U32)
      .output("out", 2, ScalarType::U32)
      .body({let("i", gid()),
             if_(lt(var("i"), len("out")), {store("out", var("i"), bit_xor(load("a", var("i")), load("b", var("i"))))})})
      .build();
}

vyre::gpu::Backend& backend() {
  static vyre::gpu::Backend instance([] {
    vyre::gpu::BackendOptions options;
    options.cache = std::make_shared<vyre::aot::Cache>(vyre::aot::CacheOptions{});  // no disk: measure the GPU
    return options;
  }());
  return instance;
}

void BM_WarmDispatch(benchmark::State& state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  vyre::gpu::Pipeline pipeline = backend().compile(xor_program());
  const std::vector<uint32_t> a(n, 0x1234), b(n, 0xff00);
  auto bytes = [](const std::vector<uint32_t>& v) {
    return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(uint32_t));
  };
  vyre::Inputs inputs;
  inputs.view("a", bytes(a)).view("b", bytes(b)).size("out", n);
  pipeline.dispatch(inputs);  // allocate the buffers once
  vyre::gpu::DispatchReport report;
  double upload = 0, run = 0, readback = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(pipeline.dispatch(inputs, std::nullopt, &report));
    upload += report.upload_ms;
    run += report.dispatch_ms;
    readback += report.readback_ms;
  }
  const double iterations = static_cast<double>(state.iterations());
  state.counters["upload_ms"] = upload / iterations;
  state.counters["dispatch_ms"] = run / iterations;
  state.counters["readback_ms"] = readback / iterations;
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * n * 12);
}
BENCHMARK(BM_WarmDispatch)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20)->Unit(benchmark::kMicrosecond);

void BM_CompileMemoryHit(benchmark::State& state) {
  const vyre::Program program = xor_program();
  backend().compile(program);
  for (auto _ : state) benchmark::DoNotOptimize(backend().compile(program));
}
BENCHMARK(BM_CompileMemoryHit)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
