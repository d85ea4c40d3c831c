// The GPU backend's warm paths, by element count: a plain loop of
// wgpu-native calls (the floor), Pipeline::dispatch (outputs returned),
// dispatch_into (caller memory), sixteen chained dispatches kept on the GPU,
// a Batch of sixteen, and a compile that finds the pipeline in memory. The
// side-by-side ratios of docs/benchmarks.md come from pipeline_figures;
// this suite is for exploring.
//
//   build/bench/gpu_dispatch_bench
//   VYRE_WGPU_ADAPTER=1 build/bench/gpu_dispatch_bench --benchmark_filter=Dispatch
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "samples/programs.hpp"
#include "support/raw_wgpu.hpp"
#include "vyre/gpu.hpp"

namespace {

vyre::gpu::Backend& backend() {
  static vyre::gpu::Backend instance([] {
    vyre::gpu::BackendOptions options;
    options.cache = std::make_shared<vyre::aot::Cache>(vyre::aot::CacheOptions{});  // no disk: measure the GPU
    options.widen = false;  // the raw loop dispatches the one-element shader
    return options;
  }());
  return instance;
}

vyre::gpu::Pipeline& xor_pipeline() {
  static vyre::gpu::Pipeline pipeline = backend().compile(vyre::samples::xor_program());
  return pipeline;
}

struct XorData {
  explicit XorData(uint32_t n) : a(n, 0x1234), b(n, 0xff00), out(n) {
    inputs.view<uint32_t>("a", a).view<uint32_t>("b", b).size("out", n);
    views.view<uint32_t>("out", out);
  }
  std::vector<uint32_t> a, b, out;
  vyre::Inputs inputs;
  vyre::OutputViews views;
};

void BM_RawDispatch(benchmark::State& state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  vyre::bench::RawWgpu raw(backend().adapter().name);
  raw.prepare_xor(xor_pipeline().wgsl(), n, 64);
  XorData data(n);
  raw.dispatch_xor(data.a.data(), data.b.data(), data.out.data());
  for (auto _ : state) raw.dispatch_xor(data.a.data(), data.b.data(), data.out.data());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * n * 12);
}
BENCHMARK(BM_RawDispatch)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20)->Unit(benchmark::kMicrosecond);

void BM_Dispatch(benchmark::State& state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  XorData data(n);
  xor_pipeline().dispatch(data.inputs);  // allocate the buffers once
  vyre::gpu::DispatchReport report;
  double upload = 0, run = 0, readback = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(xor_pipeline().dispatch(data.inputs, std::nullopt, &report));
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
BENCHMARK(BM_Dispatch)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20)->Unit(benchmark::kMicrosecond);

void BM_DispatchInto(benchmark::State& state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  XorData data(n);
  xor_pipeline().dispatch_into(data.inputs, data.views);
  for (auto _ : state) xor_pipeline().dispatch_into(data.inputs, data.views);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * n * 12);
}
BENCHMARK(BM_DispatchInto)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20)->Unit(benchmark::kMicrosecond);

// Sixteen dispatches, each binding the last one's output, one read at the end.
void BM_ChainResident16(benchmark::State& state) {
  constexpr uint32_t n = 1 << 10;
  XorData data(n);
  const auto key = backend().upload(data.b);
  for (auto _ : state) {
    auto value = backend().upload(data.a);
    for (int k = 0; k < 16; ++k) {
      vyre::Inputs in;
      in.device("a", value).device("b", key).size("out", n);
      value = xor_pipeline().dispatch_resident(in).get("out");
    }
    value->read_into(std::span<uint8_t>(reinterpret_cast<uint8_t*>(data.out.data()), data.out.size() * 4));
  }
}
BENCHMARK(BM_ChainResident16)->Unit(benchmark::kMicrosecond);

// Sixteen dispatches into caller memory, one submission and one wait.
void BM_Batch16(benchmark::State& state) {
  constexpr uint32_t n = 1 << 10;
  XorData data(n);
  std::vector<std::vector<uint32_t>> outs(16, std::vector<uint32_t>(n));
  std::vector<vyre::OutputViews> views(16);
  for (int k = 0; k < 16; ++k) views[k].view<uint32_t>("out", outs[k]);
  vyre::gpu::Batch batch(backend());
  for (auto _ : state) {
    for (int k = 0; k < 16; ++k) batch.dispatch_into(xor_pipeline(), data.inputs, views[k]);
    batch.run();
  }
}
BENCHMARK(BM_Batch16)->Unit(benchmark::kMicrosecond);

void BM_CompileMemoryHit(benchmark::State& state) {
  const vyre::CheckedProgram program = vyre::samples::xor_program();
  backend().compile(program);
  for (auto _ : state) benchmark::DoNotOptimize(backend().compile(program));
}
BENCHMARK(BM_CompileMemoryHit)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
