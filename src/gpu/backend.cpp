// vyre::gpu::Backend and Pipeline: compile = in-memory map, then the AOT
// cache (or lowering), then a compute pipeline; dispatch = plan, then run.
#include <chrono>
#include <map>
#include <mutex>

#include "dispatch/plan.hpp"
#include "gpu/adapter_selection.hpp"
#include "gpu/compute_pipeline.hpp"
#include "gpu/device.hpp"
#include "gpu/dispatcher.hpp"
#include "gpu/fingerprint.hpp"
#include "gpu/instance.hpp"
#include "util/log.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"
#include "vyre/validate.hpp"

namespace vyre::gpu {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// What every Pipeline compiled from one cache key shares.
struct Compiled {
  std::string wgsl;
  std::shared_ptr<const ComputePipeline> pipeline;
};

}  // namespace

struct Pipeline::Impl {
  Program program;
  DispatchConfig config;
  std::shared_ptr<const Compiled> compiled;
  CompileReport report;
  Dispatcher dispatcher;  // buffers of this Pipeline alone

  Impl(Program p, DispatchConfig c, std::shared_ptr<const Compiled> shared, CompileReport r)
      : program(std::move(p)), config(std::move(c)), compiled(std::move(shared)), report(std::move(r)),
        dispatcher(compiled->pipeline) {}
};

struct Backend::Impl {
  std::shared_ptr<DeviceContext> device;
  std::string fingerprint;
  std::shared_ptr<aot::Cache> cache;

  // One entry per cache key; its mutex makes threads that compile the same
  // program wait for the first instead of compiling it again.
  struct Entry {
    std::mutex mutex;
    std::shared_ptr<const Compiled> compiled;
  };
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<Entry>, std::less<>> entries;

  std::shared_ptr<Entry> entry(const std::string& key) {
    std::lock_guard lock(mutex);
    auto& slot = entries[key];
    if (!slot) slot = std::make_shared<Entry>();
    return slot;
  }
};

namespace {

Pipeline::Impl& checked(const std::shared_ptr<Pipeline::Impl>& impl) {
  if (!impl) throw Error(ErrorKind::invalid_input, "this Pipeline is empty: get one from vyre::gpu::Backend::compile");
  return *impl;
}

Backend::Impl& checked(const std::shared_ptr<Backend::Impl>& impl) {
  if (!impl) throw Error(ErrorKind::invalid_input, "this Backend was moved from; create a new one");
  return *impl;
}

}  // namespace

// ---- Pipeline -------------------------------------------------------------

Pipeline::Pipeline() = default;
Pipeline::~Pipeline() = default;
Pipeline::Pipeline(Pipeline&&) noexcept = default;
Pipeline& Pipeline::operator=(Pipeline&&) noexcept = default;
Pipeline::Pipeline(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

Outputs Pipeline::dispatch(const Inputs& inputs, const std::optional<Dim3>& grid, DispatchReport* report) {
  Impl& impl = checked(impl_);
  const DispatchPlan plan = plan_dispatch(impl.program, impl.config, inputs, grid);
  return impl.dispatcher.run(plan, report);
}

const CompileReport& Pipeline::compile_report() const { return checked(impl_).report; }
const ShaderInterface& Pipeline::interface() const { return checked(impl_).compiled->pipeline->interface(); }
const std::string& Pipeline::wgsl() const { return checked(impl_).compiled->wgsl; }

// ---- Backend ----------------------------------------------------------------

Backend::Backend(const BackendOptions& options) : impl_(std::make_shared<Impl>()) {
  const BackendChoice backends = choose_backends(options.backend);
  std::vector<FoundAdapter> adapters = find_adapters(backends);
  const size_t chosen = select_adapter(adapters, backends, options.adapter);
  impl_->device = DeviceContext::open(std::move(adapters[chosen]));
  impl_->fingerprint = effective_fingerprint(impl_->device->adapter().fingerprint);
  impl_->cache = options.cache ? options.cache : std::make_shared<aot::Cache>(aot::Cache::from_environment());
  log::debug("GPU backend on adapter [{}] '{}', fingerprint {}", impl_->device->adapter().index,
             impl_->device->adapter().name, impl_->fingerprint);
}

Backend::~Backend() = default;
Backend::Backend(Backend&&) noexcept = default;
Backend& Backend::operator=(Backend&&) noexcept = default;

const AdapterInfo& Backend::adapter() const { return checked(impl_).device->adapter(); }
const std::string& Backend::fingerprint() const { return checked(impl_).fingerprint; }

Pipeline Backend::compile(const Program& program, const DispatchConfig& config) {
  Impl& impl = checked(impl_);
  impl.device->check_alive();
  require_valid(program);

  const auto start = Clock::now();
  CompileReport report;
  const aot::KeyParts parts = aot::key_parts(program, impl.fingerprint, config);
  report.cache_key = parts.key();
  auto entry = impl.entry(report.cache_key);
  std::lock_guard lock(entry->mutex);
  if (entry->compiled) {
    report.memory_hit = true;
    report.cache_ms = ms_since(start);
  } else {
    const aot::Artifact artifact =
        impl.cache->load_or_compile(parts, [&] { return lower_to_wgsl(program, config); }, program.name);
    report.cache_hit = artifact.cache_hit;
    report.lower_ms = artifact.lower_ms;
    report.cache_ms = ms_since(start);
    PipelineTimings timings;
    auto compiled = std::make_shared<Compiled>();
    compiled->wgsl = artifact.wgsl;
    compiled->pipeline =
        std::make_shared<ComputePipeline>(impl.device, artifact.wgsl, shader_interface(program, config), &timings);
    report.shader_ms = timings.shader_ms;
    report.pipeline_ms = timings.pipeline_ms;
    entry->compiled = std::move(compiled);
  }
  log::debug("compiled '{}': key {} ({})", program.name, report.cache_key,
             report.memory_hit ? "in memory" : report.cache_hit ? "AOT cache hit" : "lowered");
  return Pipeline(std::make_shared<Pipeline::Impl>(program, config, entry->compiled, report));
}

}  // namespace vyre::gpu
