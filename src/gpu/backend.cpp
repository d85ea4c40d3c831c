// vyre::gpu::Backend and Pipeline: compile = in-memory map, then the AOT
// cache (or lowering), then a compute pipeline; dispatch = plan, then run,
// with outputs returned, written into caller memory or kept on the GPU.
#include <chrono>
#include <map>
#include <mutex>

#include "dispatch/plan.hpp"
#include "dispatch/widened_grid.hpp"
#include "gpu/adapter_selection.hpp"
#include "gpu/backend_state.hpp"
#include "gpu/compute_pipeline.hpp"
#include "gpu/device.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/dispatcher.hpp"
#include "gpu/driver_cache.hpp"
#include "gpu/driver_defects.hpp"
#include "gpu/fingerprint.hpp"
#include "gpu/instance.hpp"
#include "gpu/word_aligned.hpp"
#include "util/log.hpp"
#include "util/stopwatch.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"

namespace vyre::gpu {
namespace {

PipelineState& checked(const std::shared_ptr<PipelineState>& impl) {
  if (!impl) throw Error(ErrorKind::invalid_input, "this Pipeline is empty: get one from vyre::gpu::Backend::compile");
  return *impl;
}

BackendState& checked(const std::shared_ptr<BackendState>& impl) {
  if (!impl) throw Error(ErrorKind::invalid_input, "this Backend was moved from; create a new one");
  return *impl;
}

}  // namespace

const std::shared_ptr<BackendState>& state_of(const Backend& backend) {
  checked(backend.state(kStateKey));
  return backend.state(kStateKey);
}
const std::shared_ptr<PipelineState>& state_of(const Pipeline& pipeline) {
  checked(pipeline.state(kStateKey));
  return pipeline.state(kStateKey);
}

// ---- BackendState ----------------------------------------------------------

std::shared_ptr<BackendState::Entry> BackendState::entry(const std::string& key) {
  std::lock_guard lock(entries_mutex_);
  auto& slot = entries_[key];
  if (!slot) slot = std::make_shared<Entry>();
  return slot;
}

void BackendState::open(std::shared_ptr<DeviceContext> device) {
  std::lock_guard lock(device_mutex_);
  live_.pool = std::make_shared<BufferPool>(device);
  live_.device = std::move(device);
}

BackendState::Live BackendState::live() {
  std::lock_guard lock(device_mutex_);
  if (live_.device->lost()) {
    log::warn("GPU device on '{}' was lost; opening a new one", live_.device->adapter().name);
    auto device = live_.device->reopen();
    live_.pool = std::make_shared<BufferPool>(device);
    live_.device = std::move(device);
  }
  return live_;
}

std::shared_ptr<const Compiled> BackendState::compiled(const aot::KeyParts& parts, const CheckedProgram& program,
                                                       const ShaderOptions& options, CompileReport& report) {
  const auto start = Clock::now();
  report.cache_key = parts.key();
  const Live now = live();
  auto slot = entry(report.cache_key);
  std::lock_guard lock(slot->mutex);
  if (slot->compiled && &slot->compiled->pipeline->device() == now.device.get()) {
    report.memory_hit = true;
    report.cache_ms = ms_since(start);
    return slot->compiled;
  }
  auto compiled = std::make_shared<Compiled>();
  if (slot->compiled) {  // compiled before the device was lost: its shader stands
    report.memory_hit = true;
    compiled->spec = slot->compiled->spec;
  } else {
    // A miss lowers the whole spec; a hit reads the text and rebuilds the
    // interface it was lowered with (the key holds everything that shapes both).
    std::optional<ShaderSpec> lowered;
    const aot::Artifact artifact = cache->load_or_compile(
        parts, [&] { return lowered.emplace(lower(program, options)).wgsl; }, program.name());
    report.cache_hit = artifact.cache_hit;
    report.lower_ms = artifact.lower_ms;
    compiled->spec.interface = lowered ? std::move(lowered->interface) : shader_interface(program, options);
    compiled->spec.wgsl = artifact.text;
  }
  report.cache_ms = ms_since(start);
  PipelineTimings timings;
  try {
    compiled->pipeline =
        std::make_shared<ComputePipeline>(now.device, compiled->spec.wgsl, compiled->spec.interface, &timings);
  } catch (const Error& e) {
    // A cached text the device refuses (an entry that verifies but holds
    // invalid WGSL) would fail every run: lower afresh, replace the entry,
    // and compile what was lowered. Freshly lowered text that fails is the
    // lowering's bug, or more than this device takes, and propagates; the
    // refusal itself is never cached (docs/cache.md, "A failure is never an
    // entry").
    if (e.kind() != ErrorKind::gpu || !report.cache_hit) throw;
    log::warn("the device refused the cached WGSL of '{}' ({}); lowering it again", program.name(), e.what());
    const auto lowering = Clock::now();
    ShaderSpec lowered = lower(program, options);
    report.cache_hit = false;
    report.lower_ms = ms_since(lowering);
    // The entry is what this build lowers: it was right, and the refusal is
    // the device's. It stays (another device takes it), unwritten.
    if (lowered.wgsl == compiled->spec.wgsl) throw;
    (void)cache->replace(parts, [&] { return lowered.wgsl; }, program.name());
    compiled->spec = std::move(lowered);
    compiled->pipeline =
        std::make_shared<ComputePipeline>(now.device, compiled->spec.wgsl, compiled->spec.interface, &timings);
  }
  report.shader_ms = timings.shader_ms;
  report.pipeline_ms = timings.pipeline_ms;
  slot->compiled = compiled;
  return compiled;
}

// ---- PipelineState ---------------------------------------------------------

PipelineState::PipelineState(CheckedProgram p, ShaderOptions o, std::shared_ptr<const Compiled> shared, CompileReport r,
                             std::weak_ptr<BackendState> owner, std::shared_ptr<BufferPool> buffers)
    : program(std::move(p)), options(std::move(o)), compiled(std::move(shared)), report(std::move(r)),
      backend(std::move(owner)), pool(std::move(buffers)), planner(program, options), dispatcher(compiled->pipeline) {
  if (options.vector_width != 1) widening = find_widening(program, options);
}

void PipelineState::ensure_live_device() {
  const DeviceContext& device = dispatcher.pipeline().device();
  if (!device.lost()) return;
  if (reported_loss != &device) {
    reported_loss = &device;
    device.check_alive();  // throws Error(device_lost)
  }
  auto owner = backend.lock();
  if (!owner)
    throw Error(ErrorKind::device_lost, "the GPU device of this Pipeline was lost and the Backend it was compiled on "
                                        "is gone: compile the program on a new vyre::gpu::Backend");
  CompileReport again;
  compiled = owner->compiled(aot::key_parts(program, owner->shaping_fingerprint, options), program, options, again);
  pool = owner->live().pool;
  dispatcher.replace_pipeline(compiled->pipeline);
  log::debug("pipeline '{}' moved to the new device", program.name());
}

bool PipelineState::plan(const Inputs& inputs, const std::optional<Dim3>& grid, DispatchPlan& out) const {
  planner.plan(inputs, grid, out);
  if (out.domain.has_value() != options.domain_guard) return false;
  if (!widening) return true;
  const std::optional<Dim3> wide = widened_grid(program.program(), *widening, out);
  if (!wide) return false;
  out.grid = *wide;
  return true;
}

DispatchJob* PipelineState::prepare(const Inputs& inputs, const std::optional<Dim3>& grid) {
  ensure_live_device();
  if (!plan(inputs, grid, job.plan)) return nullptr;
  dispatcher.check_limits(job.plan);  // before any buffer is made for it
  job.frame = 0;
  job.reset_destinations();
  return &job;
}

std::shared_ptr<PipelineState> PipelineState::variant_for(const DispatchPlan& plan) {
  const bool guard = plan.domain.has_value();
  std::lock_guard lock(variants_mutex);
  std::shared_ptr<PipelineState>& variant = variants[guard ? 1 : 0];
  if (variant) return variant;
  auto owner = backend.lock();
  if (!owner)
    throw Error(ErrorKind::invalid_input, "pipeline '" + program.name() + "' needs another shader for this "
                                          "dispatch, and the Backend it was compiled on is gone: keep the Backend "
                                          "while its Pipelines dispatch");
  ShaderOptions one = options;
  one.vector_width = 1;
  one.domain_guard = guard;
  CompileReport compile_report;
  auto shared = owner->compiled(aot::key_parts(program, owner->shaping_fingerprint, one), program, one, compile_report);
  log::debug("pipeline '{}': compiled the one-element shader{} for a dispatch this one cannot take", program.name(),
             guard ? " with the launch-domain guard" : "");
  variant = std::make_shared<PipelineState>(program, one, std::move(shared), std::move(compile_report), backend,
                                            owner->live().pool);
  return variant;
}

void PipelineState::run(DispatchReport* report, bool wait) {
  try {
    dispatcher.run(job, report, wait);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::device_lost) note_loss();
    throw;
  }
}

DeviceOutputs PipelineState::resident_outputs(DispatchJob& target, bool pending) {
  std::map<std::string, std::shared_ptr<DeviceBuffer>> outputs;
  for (size_t i = 0; i < target.plan.buffers.size(); ++i) {
    const BufferPlan& p = target.plan.buffers[i];
    if (!p.buffer->output) continue;
    if (p.device != nullptr) {  // written in place: the output is the buffer given
      auto given = std::dynamic_pointer_cast<DeviceBuffer>(p.entry->device);
      if (!given)
        throw Error(ErrorKind::invalid_input, "the device contents given for '" + p.buffer->name +
                                                  "' are no vyre::gpu::DeviceBuffer; give host contents instead");
      outputs[p.buffer->name] = std::move(given);
      continue;
    }
    auto made = make_device_buffer(pool, uint64_t{p.elements} * element_bytes(p.buffer->type), p.buffer->type,
                                   "output '" + p.buffer->name + "' of '" + program.name() + "'");
    made->state(kStateKey).pending = pending;
    target.resident[i] = made.get();
    outputs[p.buffer->name] = std::move(made);
  }
  return DeviceOutputs(std::move(outputs));
}

// ---- Pipeline -------------------------------------------------------------

Pipeline::Pipeline() = default;
Pipeline::~Pipeline() = default;
Pipeline::Pipeline(Pipeline&&) noexcept = default;
Pipeline& Pipeline::operator=(Pipeline&&) noexcept = default;
Pipeline::Pipeline(std::shared_ptr<PipelineState> impl) : impl_(std::move(impl)) {}

namespace {

// Runs `f(state, job)` under the dispatcher's mutex of the state that takes
// these inputs: the Pipeline's own, or for a dispatch its shader cannot
// take, the variant's that can (PipelineState::variant_for).
template <class F>
auto with_prepared(PipelineState& impl, const Inputs& inputs, const std::optional<Dim3>& grid, F&& f) {
  std::shared_ptr<PipelineState> variant;
  {
    std::lock_guard lock(impl.dispatcher.mutex());
    if (DispatchJob* job = impl.prepare(inputs, grid)) return f(impl, *job);
    variant = impl.variant_for(impl.job.plan);
  }
  std::lock_guard lock(variant->dispatcher.mutex());
  return f(*variant, *variant->prepare(inputs, grid));
}

void note_width(const PipelineState& state, DispatchReport* report) {
  if (report) report->vector_width = state.options.vector_width;
}

}  // namespace

Outputs Pipeline::dispatch(const Inputs& inputs, const std::optional<Dim3>& grid, DispatchReport* report) {
  return with_prepared(checked(impl_), inputs, grid, [&](PipelineState& state, DispatchJob& job) {
    std::vector<std::vector<uint8_t>> data = read_back_every_output(job);
    state.run(report, true);
    note_width(state, report);
    return outputs_by_name(job.plan, data);
  });
}

void Pipeline::dispatch_into(const Inputs& inputs, const OutputViews& outputs, const std::optional<Dim3>& grid,
                             DispatchReport* report) {
  with_prepared(checked(impl_), inputs, grid, [&](PipelineState& state, DispatchJob& job) {
    resolve_output_views(state.program, job.plan, outputs, job.readback);
    state.run(report, true);
    note_width(state, report);
  });
}

DeviceOutputs Pipeline::dispatch_resident(const Inputs& inputs, const std::optional<Dim3>& grid,
                                          DispatchReport* report) {
  return with_prepared(checked(impl_), inputs, grid, [&](PipelineState& state, DispatchJob& job) {
    DeviceOutputs outputs = state.resident_outputs(job, false);
    state.run(report, false);
    note_width(state, report);
    return outputs;
  });
}

const CompileReport& Pipeline::compile_report() const { return checked(impl_).report; }

std::vector<CompileReport> Pipeline::compile_reports() const {
  PipelineState& state = checked(impl_);
  std::vector<CompileReport> out{state.report};
  std::lock_guard lock(state.variants_mutex);
  for (const auto& variant : state.variants)
    if (variant) out.push_back(variant->report);
  return out;
}
const ShaderInterface& Pipeline::interface() const { return checked(impl_).compiled->pipeline->interface(); }
const std::string& Pipeline::wgsl() const { return checked(impl_).compiled->spec.wgsl; }

const std::shared_ptr<DeviceBuffer>& DeviceOutputs::get(const std::string& name) const {
  auto it = buffers_.find(name);
  if (it == buffers_.end()) throw Error(ErrorKind::invalid_input, "no output buffer named '" + name + "'");
  return it->second;
}

// ---- Backend ----------------------------------------------------------------

Backend::Backend(const BackendOptions& options) : impl_(std::make_shared<BackendState>()) {
  // What the options leave unset, the environment gives (read once, here).
  const BackendOptions environment = BackendOptions::from_environment();
  auto start = Clock::now();
  impl_->cache = options.cache ? options.cache : std::make_shared<aot::Cache>(aot::Cache::from_environment());
  impl_->report.cache_ms = ms_since(start);
  impl_->widen = options.widen.value_or(environment.widen.value_or(kWidenByDefault));
  // The driver reads its cache's location when the instance finds adapters.
  aot::CacheOptions cache_options = impl_->cache->options();
  cache_options.directory = impl_->cache->directory();
  place_driver_cache(cache_options);  // only the process's first call acts

  start = Clock::now();
  const BackendChoice backends = choose_backends(options.backend, environment.backend);
  shared_instance(backends.mask);
  impl_->report.instance_ms = ms_since(start);

  start = Clock::now();
  std::vector<FoundAdapter> adapters = find_adapters(backends);
  const size_t chosen = select_adapter(adapters, backends, options.adapter, environment.adapter);
  impl_->report.adapter_ms = ms_since(start);

  start = Clock::now();
  auto device = DeviceContext::open(std::move(adapters[chosen]), impl_->counters, options.gpu_timestamps);
  device->set_wait_limit(options.dispatch_timeout ? options.dispatch_timeout : environment.dispatch_timeout);
  impl_->open(std::move(device));
  impl_->report.device_ms = ms_since(start);
  const BackendState::Live live = impl_->live();
  impl_->adapter = live.device->adapter();
  const std::optional<std::string>& override_value =
      options.fingerprint_override ? options.fingerprint_override : environment.fingerprint_override;
  impl_->fingerprint = effective_fingerprint(impl_->adapter.fingerprint, override_value);
  impl_->shaping_fingerprint = effective_fingerprint(gpu::shaping_fingerprint(impl_->adapter), override_value);
  note_driver_fingerprint(impl_->adapter.fingerprint);
  log::debug("GPU backend on adapter [{}] '{}', fingerprint {}", live.device->adapter().index,
             live.device->adapter().name, impl_->fingerprint);
}

Backend::~Backend() = default;
Backend::Backend(Backend&&) noexcept = default;
Backend& Backend::operator=(Backend&&) noexcept = default;

const AdapterInfo& Backend::adapter() const { return checked(impl_).adapter; }
const std::string& Backend::fingerprint() const { return checked(impl_).fingerprint; }
const std::string& Backend::shaping_fingerprint() const { return checked(impl_).shaping_fingerprint; }

WgslTarget Backend::wgsl_target(const CheckedProgram& program, const ShaderOptions& options) const {
  const BackendState& impl = checked(impl_);
  const ShaderOptions shaped = with_driver_workarounds(options, impl.adapter);
  return {shaped, aot::key_parts(program, impl.shaping_fingerprint, shaped)};
}

const BackendReport& Backend::report() const { return checked(impl_).report; }

BackendCounters Backend::counters() const {
  const DeviceCounters& c = *checked(impl_).counters;
  return {c.buffers_created.load(), c.bind_groups_created.load(), c.submits.load(), c.devices_opened.load(),
          c.timed_submits.load(), c.gpu_ns.load()};
}

bool Backend::gpu_timing_available() const { return checked(impl_).live().device->timer() != nullptr; }

void Backend::set_gpu_timing(bool on) {
  if (on && !gpu_timing_available())
    throw Error(ErrorKind::invalid_input,
                "GPU timing needs a Backend opened with BackendOptions::gpu_timestamps on an adapter with "
                "timestamp-query; '" + adapter().name + "' " +
                    (checked(impl_).live().device->masked("timestamp-query") ? "has it masked (VYRE_MASK_FEATURES)"
                                                                              : "was not opened so or lacks it"));
  checked(impl_).counters->timing = on;
}

std::shared_ptr<DeviceBuffer> Backend::upload(std::span<const uint8_t> bytes, ScalarType type) {
  if (bytes.size() % element_bytes(type) != 0)
    throw Error(ErrorKind::invalid_input, "upload of " + std::to_string(bytes.size()) + " bytes: not a whole number of " +
                                              std::to_string(element_bytes(type)) + "-byte " +
                                              std::string(to_string(type)) + " elements");
  const BackendState::Live now = checked(impl_).live();
  const WGPULimits& limits = now.device->limits();
  if (bytes.size() > limits.maxStorageBufferBindingSize || bytes.size() > limits.maxBufferSize)
    throw Error(ErrorKind::limit_exceeded,
                "upload of " + std::to_string(bytes.size()) + " bytes; the device's maxStorageBufferBindingSize on '" +
                    now.device->adapter().name + "' is " + std::to_string(limits.maxStorageBufferBindingSize) +
                    " bytes (maxBufferSize " + std::to_string(limits.maxBufferSize) +
                    "). Split the data over several buffers.");
  auto buffer = make_device_buffer(now.pool, bytes.size(), type, "an upload of " + std::to_string(bytes.size()) + " bytes");
  if (!bytes.empty())
    write_word_padded(now.device->queue(), buffer->state(kStateKey).buffer.buffer.get(), 0, bytes);
  return buffer;
}

ShaderOptions compiled_options(const CheckedProgram& program, const ShaderOptions& options, bool widen) {
  ShaderOptions asked = options;
  // A guarded shader is never widened (its invocations are the domain's
  // elements, one each): asked for the guard, the one-element form.
  if (asked.vector_width == 1 && !asked.domain_guard && widen && widenable(program, asked))
    asked.vector_width = kWideWidth;
  return asked;
}

bool Backend::widens() const { return checked(impl_).widen; }

Pipeline Backend::compile(const CheckedProgram& program, const ShaderOptions& requested) {
  const auto& impl = checked(impl_);
  return compile_exact(impl_, program, compiled_options(program, requested, impl.widen));
}

Pipeline Backend::compile_for(const CheckedProgram& program, const Inputs& first_inputs,
                              const std::optional<Dim3>& first_grid, const ShaderOptions& requested) {
  const auto& impl = checked(impl_);
  ShaderOptions asked = compiled_options(program, requested, impl.widen);
  if (first_inputs.domain()) {
    asked.vector_width = 1;
    asked.domain_guard = true;
  } else if (asked.vector_width != 1) {
    // The dispatch's plan decides, as PipelineState::plan would; inputs it
    // refuses are refused by that dispatch, with the widened shader kept.
    try {
      DispatchPlan plan;
      DispatchPlanner(program, asked).plan(first_inputs, first_grid, plan);
      const std::optional<Widening> widening = find_widening(program, asked);
      if (!widening || !widened_grid(program.program(), *widening, plan)) asked.vector_width = 1;
    } catch (const Error&) {
    }
  }
  return compile_exact(impl_, program, asked);
}

namespace {
// A program in f16 or f64 needs the device feature for it (device.cpp asks
// for both wherever the adapter has them).
void refuse_without_float_feature(const CheckedProgram& program, BackendState& impl) {
  const DeviceContext& device = *impl.live().device;
  const bool f16 = uses_f16(program.program()) && !device.shader_f16();
  const bool f64 = uses_f64(program.program()) && !device.shader_f64();
  if (!f16 && !f64) return;
  const std::string type = f16 ? "f16" : "f64";
  const std::string feature = f16 ? "shader-f16" : "shader-f64";
  throw Error(ErrorKind::limit_exceeded,
              "program '" + program.name() + "' computes in " + type + ", which needs the device feature " + feature +
                  "; adapter '" + impl.adapter.name + "' " +
                  (device.masked(feature) ? "was opened without it, since VYRE_MASK_FEATURES names it"
                                           : "does not offer it: convert the " + type + " data to f32 and compute in f32"));
}
}  // namespace

Pipeline compile_exact(const std::shared_ptr<BackendState>& state, const CheckedProgram& program,
                       const ShaderOptions& asked) {
  BackendState& impl = checked(state);
  refuse_without_float_feature(program, impl);
  const ShaderOptions options = with_driver_workarounds(asked, impl.adapter);
  CompileReport report;
  auto compiled = impl.compiled(aot::key_parts(program, impl.shaping_fingerprint, options), program, options, report);
  log::debug("compiled '{}': key {} ({})", program.name(), report.cache_key,
             report.memory_hit ? "in memory" : report.cache_hit ? "AOT cache hit" : "lowered");
  return Pipeline(std::make_shared<PipelineState>(program, options, std::move(compiled), std::move(report), state,
                                                   impl.live().pool));
}

}  // namespace vyre::gpu
