#include "gpu/dispatcher.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <string>

#include "gpu/device_buffer.hpp"
#include "gpu/word_aligned.hpp"
#include "util/stopwatch.hpp"
#include "vyre/error.hpp"

namespace vyre::gpu {
namespace {

// "<what>; the device's <limit> on '<adapter>' is <value><unit>. <advice>"
[[noreturn]] void beyond_limit(const std::string& what, const char* limit_name, uint64_t limit, const char* unit,
                               const DeviceContext& device, const char* advice) {
  throw Error(ErrorKind::limit_exceeded, what + "; the device's " + limit_name + " on '" + device.adapter().name +
                                             "' is " + std::to_string(limit) + unit + ". " + advice);
}

// Zeroing a small range rides along with the uploads (one queue write, from
// here) instead of a clear command of its own, which costs more per dispatch
// than the write; larger ranges are cleared on the GPU.
constexpr size_t kZeroByWriteBytes = 64 << 10;
const std::array<uint8_t, kZeroByWriteBytes> kZeros{};

WGPUBufferUsage usage_of(const ShaderBinding& shader) {
  return shader.kind == BindingKind::Uniform ? WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst : kStorageUsage;
}

}  // namespace

void DispatchJob::reset_destinations() {
  readback.assign(plan.buffers.size(), {});
  resident.assign(plan.buffers.size(), nullptr);
}

Dispatcher::Dispatcher(std::shared_ptr<const ComputePipeline> pipeline)
    : pipeline_(std::move(pipeline)), tracker_(std::make_unique<MapTracker>()) {}

Dispatcher::~Dispatcher() {
  // A map callback may still be due after a failed dispatch: leave it its state.
  if (tracker_ && !tracker_->done()) keep_forever(std::move(tracker_));
}

void Dispatcher::replace_pipeline(std::shared_ptr<const ComputePipeline> pipeline) {
  frames_.clear();
  pipeline_ = std::move(pipeline);
}

Dispatcher::Frame& Dispatcher::frame(size_t index) {
  while (frames_.size() <= index) frames_.push_back(std::make_unique<Frame>());
  Frame& f = *frames_[index];
  const size_t n = pipeline_->interface().bindings.size();
  if (f.slots.size() != n) {
    f.slots.resize(n);
    f.staging.resize(n);
    f.written.resize(n);
  }
  return f;
}

void Dispatcher::match(const DispatchPlan& plan, Frame& f) {
  const auto& bindings = pipeline_->interface().bindings;
  f.bound.resize(bindings.size());
  // The interface and the plan both list the program's bound buffers in
  // canonical order (CheckedProgram::bound_buffers): binding i is plan buffer i.
  for (size_t i = 0; i < bindings.size(); ++i) {
    const ShaderBinding& shader = bindings[i];
    Bound& b = f.bound[i];
    b = Bound{};
    b.shader = &shader;
    b.plan_index = i;
    b.bytes = std::max<uint64_t>(shader.binding_bytes(plan.buffers[i].elements), kElementBytes);
  }
}

void Dispatcher::check_limits(const DispatchPlan& plan) const {
  const DeviceContext& device = pipeline_->device();
  const WGPULimits& limits = device.limits();
  const Dim3& grid = plan.grid;
  for (int axis = 0; axis < 3; ++axis)
    if (grid[axis] > limits.maxComputeWorkgroupsPerDimension)
      beyond_limit("grid " + dim3_text(grid) +
                       " has " + std::to_string(grid[axis]) + " workgroups on axis " + "xyz"[axis],
                   "maxComputeWorkgroupsPerDimension", limits.maxComputeWorkgroupsPerDimension, "", device,
                   "Give a smaller grid (--grid X,Y,Z) and have the program cover the elements in a grid-stride "
                   "loop, spread the grid over y and z, or use a larger workgroup size.");
  const auto& bindings = pipeline_->interface().bindings;
  for (size_t i = 0; i < bindings.size(); ++i) {
    // Binding i is plan buffer i (see match()); sized as match() binds it.
    const ShaderBinding& shader = bindings[i];
    const BufferPlan& p = plan.buffers[i];
    const uint64_t bytes = std::max<uint64_t>(shader.binding_bytes(p.elements), kElementBytes);
    const bool uniform = shader.kind == BindingKind::Uniform;
    const uint64_t binding_limit = uniform ? limits.maxUniformBufferBindingSize : limits.maxStorageBufferBindingSize;
    if (bytes <= binding_limit && bytes <= limits.maxBufferSize) continue;
    const std::string what = "buffer '" + p.buffer->name + "' (" + std::to_string(p.elements) + " " +
                             std::string(to_string(p.buffer->type)) + " elements) needs " + std::to_string(bytes) +
                             " bytes";
    const char* split = "Split the data over several dispatches.";
    if (bytes > binding_limit)
      beyond_limit(what, uniform ? "maxUniformBufferBindingSize" : "maxStorageBufferBindingSize", binding_limit,
                   " bytes", device, uniform ? "Declare it a read buffer instead of a uniform one." : split);
    beyond_limit(what, "maxBufferSize", limits.maxBufferSize, " bytes", device, split);
  }
}

void Dispatcher::check(const DispatchJob& job, bool allow_pending) {
  Frame& f = frame(job.frame);
  check_limits(job.plan);
  match(job.plan, f);
  const DeviceContext& device = pipeline_->device();
  for (const auto& p : job.plan.buffers)
    if (p.device != nullptr) bindable_device_buffer(*p.device, device, p.buffer->name, allow_pending);
}

void Dispatcher::ensure(GpuBuffer& slot, uint64_t bytes, WGPUBufferUsage usage) {
  if (slot && slot.capacity >= bytes) return;
  slot = GpuBuffer{};
  slot.buffer = pipeline_->device().create_buffer(bytes, usage);
  slot.capacity = bytes;
  slot.id = pipeline_->device().next_buffer_id();
  ++buffers_created_;
}

void Dispatcher::bind(DispatchJob& job) {
  Frame& f = frame(job.frame);
  const DispatchPlan& plan = job.plan;
  auto* const queue = pipeline_->device().queue();
  for (size_t i = 0; i < f.bound.size(); ++i) {
    Bound& b = f.bound[i];
    const BufferPlan& p = plan.buffers[b.plan_index];
    std::span<const uint8_t> upload = p.initial;
    if (p.device != nullptr) {  // bound in place: never written from the host, never cleared
      const GpuBuffer& buffer = static_cast<DeviceBuffer*>(p.device)->state(kStateKey).buffer;
      b.buffer = buffer.buffer.get();
      b.id = buffer.id;
      upload = {};
      b.clear_from = b.bytes;
    } else if (DeviceBuffer* out = job.resident[b.plan_index]; out != nullptr) {
      const GpuBuffer& buffer = out->state(kStateKey).buffer;
      b.buffer = buffer.buffer.get();
      b.id = buffer.id;
      b.clear_from = upload.size();
    } else {
      ensure(f.slots[i], b.bytes, usage_of(*b.shader));
      b.buffer = f.slots[i].buffer.get();
      b.id = f.slots[i].id;
      b.clear_from = upload.size();
      if (b.shader->kind == BindingKind::Uniform && !needs_write(f.written[i], b.id, upload)) {
        b.clear_from = b.bytes;  // written, and its zero tail, by an earlier dispatch
        upload = {};
      }
    }
    if (!upload.empty()) {
      write_word_padded(queue, b.buffer, 0, upload);
      b.clear_from = std::max<uint64_t>(b.clear_from, word_rounded(upload.size()));
    }
    if (b.clear_from < b.bytes && b.bytes - b.clear_from <= kZeroByWriteBytes) {
      wgpuQueueWriteBuffer(queue, b.buffer, b.clear_from, kZeros.data(), b.bytes - b.clear_from);
      b.clear_from = b.bytes;
    }
    const std::span<uint8_t> destination = job.readback[b.plan_index];
    b.staging = nullptr;
    if (!destination.empty()) {
      ensure(f.staging[i], word_rounded(destination.size()), kStagingUsage);
      b.staging = f.staging[i].buffer.get();
    }
  }
  bind_group(f);
  bind_own_group(plan, f);
}

bool Dispatcher::needs_write(Written& written, uint64_t id, std::span<const uint8_t> bytes) {
  if (written.id == id && written.bytes.size() == bytes.size() &&
      (bytes.empty() || std::memcmp(written.bytes.data(), bytes.data(), bytes.size()) == 0))
    return false;
  written.id = id;
  written.bytes.assign(bytes.begin(), bytes.end());
  return true;
}

void Dispatcher::bind_group(Frame& f) {
  f.key.clear();
  for (const Bound& b : f.bound) {
    f.key.push_back(b.id);
    f.key.push_back(b.bytes);
  }
  ++f.uses;
  CachedGroup* oldest = f.groups.data();
  for (CachedGroup& cached : f.groups) {
    if (cached.group && cached.key == f.key) {
      cached.last_used = f.uses;
      f.current_group = cached.group.get();
      return;
    }
    if (cached.last_used < oldest->last_used) oldest = &cached;
  }
  f.entries.clear();
  for (const Bound& b : f.bound) {
    WGPUBindGroupEntry entry{};
    entry.binding = b.shader->binding;
    entry.buffer = b.buffer;
    entry.size = b.bytes;  // the exact size: a reused buffer may be larger
    f.entries.push_back(entry);
  }
  WGPUBindGroupDescriptor descriptor{};
  descriptor.layout = pipeline_->buffers_layout();
  descriptor.entryCount = f.entries.size();
  descriptor.entries = f.entries.data();
  oldest->group = pipeline_->device().create_bind_group(descriptor);
  oldest->key = f.key;
  oldest->last_used = f.uses;
  f.current_group = oldest->group.get();
}

void Dispatcher::bind_own_group(const DispatchPlan& plan, Frame& f) {
  const ShaderInterface& iface = pipeline_->interface();
  if (iface.uniform_slots() == 0 && !iface.loop_guard) return;
  if (!f.lengths_group) {
    std::vector<WGPUBindGroupEntry> entries;
    if (iface.uniform_slots() != 0) {
      ensure(f.lengths, iface.lengths_bytes(), WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst);
      WGPUBindGroupEntry entry{};
      entry.binding = ShaderInterface::kLengthsBinding;
      entry.buffer = f.lengths.buffer.get();
      entry.size = iface.lengths_bytes();
      entries.push_back(entry);
    }
    if (iface.loop_guard) {
      ensure(f.guard, kElementBytes, WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst);
      ensure(f.guard_staging, kElementBytes, kStagingUsage);
      WGPUBindGroupEntry entry{};
      entry.binding = ShaderInterface::kLoopGuardBinding;
      entry.buffer = f.guard.buffer.get();
      entry.size = kElementBytes;
      entries.push_back(entry);
    }
    WGPUBindGroupDescriptor descriptor{};
    descriptor.layout = pipeline_->lengths_layout();
    descriptor.entryCount = entries.size();
    descriptor.entries = entries.data();
    f.lengths_group = pipeline_->device().create_bind_group(descriptor);
  }
  if (iface.uniform_slots() == 0) return;
  // One u32 per slot, four to a 16-byte row: the layout of array<vec4<u32>, N>.
  f.lengths_words.assign(iface.lengths_bytes() / sizeof(uint32_t), 0);
  for (size_t slot = 0; slot < iface.length_bindings.size(); ++slot)
    f.lengths_words[slot] = plan.buffers[f.bound[iface.length_bindings[slot]].plan_index].elements;
  if (iface.domain_guard) {
    if (!plan.domain) throw Error(ErrorKind::invalid_input, "internal: a domain-guarded shader dispatched without a domain");
    for (size_t a = 0; a < 3; ++a) f.lengths_words[iface.domain_slot() + a] = (*plan.domain)[a];
  }
  const std::span<const uint8_t> words(reinterpret_cast<const uint8_t*>(f.lengths_words.data()),
                                       f.lengths_words.size() * sizeof(uint32_t));
  if (needs_write(f.lengths_written, f.lengths.id, words))
    wgpuQueueWriteBuffer(pipeline_->device().queue(), f.lengths.buffer.get(), 0, words.data(), words.size());
}

void Dispatcher::encode_clears(const DispatchJob& job, WGPUCommandEncoder encoder) {
  // Reused buffers hold an earlier dispatch's data: zero what no upload
  // covers (small ranges were zeroed by a write in bind()). The buffers
  // cleared are this job's alone, so clearing them before the submission's
  // other dispatches changes nothing.
  const Frame& f = *frames_[job.frame];
  for (const Bound& b : f.bound)
    if (b.clear_from < b.bytes) wgpuCommandEncoderClearBuffer(encoder, b.buffer, b.clear_from, b.bytes - b.clear_from);
  if (f.guard) wgpuCommandEncoderClearBuffer(encoder, f.guard.buffer.get(), 0, kElementBytes);
}

void Dispatcher::encode_dispatch(const DispatchJob& job, WGPUComputePassEncoder pass) {
  const Frame& f = *frames_[job.frame];
  wgpuComputePassEncoderSetPipeline(pass, pipeline_->get());
  wgpuComputePassEncoderSetBindGroup(pass, 0, f.current_group, 0, nullptr);
  if (f.lengths_group)
    wgpuComputePassEncoderSetBindGroup(pass, ShaderInterface::kLengthsGroup, f.lengths_group.get(), 0, nullptr);
  const Dim3& grid = job.plan.grid;
  if (grid[0] > 0 && grid[1] > 0 && grid[2] > 0) wgpuComputePassEncoderDispatchWorkgroups(pass, grid[0], grid[1], grid[2]);
}

void Dispatcher::encode_copies(const DispatchJob& job, WGPUCommandEncoder encoder) {
  const Frame& f = *frames_[job.frame];
  for (const Bound& b : f.bound)
    if (b.staging != nullptr)
      wgpuCommandEncoderCopyBufferToBuffer(encoder, b.buffer, 0, b.staging, 0, word_rounded(job.readback[b.plan_index].size()));
  if (f.guard)
    wgpuCommandEncoderCopyBufferToBuffer(encoder, f.guard.buffer.get(), 0, f.guard_staging.buffer.get(), 0, kElementBytes);
}

// A guarded pipeline reads its guard back after every dispatch, kept
// outputs included: a loop cut short must never pass unnoticed.
size_t Dispatcher::maps_needed(const DispatchJob& job) const {
  const Frame& f = *frames_[job.frame];
  return static_cast<size_t>(std::count_if(f.bound.begin(), f.bound.end(), [](const Bound& b) { return b.staging; })) +
         (f.guard ? 1 : 0);
}

void Dispatcher::request_maps(DispatchJob& job, MapTracker& tracker) {
  Frame& f = *frames_[job.frame];
  for (Bound& b : f.bound)
    if (b.staging != nullptr) b.map_index = tracker.request(b.staging, word_rounded(job.readback[b.plan_index].size()));
  job.loop_cut_short = false;
  if (f.guard) f.guard_map_index = tracker.request(f.guard_staging.buffer.get(), kElementBytes);
}

void Dispatcher::copy_out(DispatchJob& job, const MapTracker& tracker) {
  const Frame& f = *frames_[job.frame];
  for (const Bound& b : f.bound) {
    if (b.staging == nullptr || !tracker.ok(b.map_index)) continue;
    const std::span<uint8_t> destination = job.readback[b.plan_index];
    const auto* data = static_cast<const uint8_t*>(wgpuBufferGetConstMappedRange(b.staging, 0, word_rounded(destination.size())));
    if (data == nullptr)
      throw Error(ErrorKind::gpu, "reading output '" + job.plan.buffers[b.plan_index].buffer->name +
                                      "' back failed: no mapped range");
    std::memcpy(destination.data(), data, destination.size());
    wgpuBufferUnmap(b.staging);
  }
  if (f.guard && tracker.ok(f.guard_map_index)) {
    const auto* flag = static_cast<const uint32_t*>(wgpuBufferGetConstMappedRange(f.guard_staging.buffer.get(), 0, kElementBytes));
    if (flag == nullptr) throw Error(ErrorKind::gpu, "reading the loop guard back failed: no mapped range");
    job.loop_cut_short = *flag != 0;
    wgpuBufferUnmap(f.guard_staging.buffer.get());
  }
  // Outputs the shader does not bind keep what they were given.
  for (size_t i = 0; i < job.plan.buffers.size(); ++i) {
    const std::span<uint8_t> destination = job.readback[i];
    if (destination.empty() ||
        std::any_of(f.bound.begin(), f.bound.end(), [&](const Bound& b) { return b.plan_index == i; }))
      continue;
    const auto initial = job.plan.buffers[i].initial;
    const size_t n = std::min(initial.size(), destination.size());
    if (n > 0) std::memcpy(destination.data(), initial.data(), n);
    std::memset(destination.data() + n, 0, destination.size() - n);
  }
}

void Dispatcher::forget_frame(size_t index) {
  if (index < frames_.size()) frames_[index] = std::make_unique<Frame>();
}

void Dispatcher::run(DispatchJob& job, DispatchReport* report, bool wait) {
  const Work work{this, &job};
  execute(pipeline_->device(), std::span<const Work>(&work, 1), tracker_, report, false, wait);
}

std::vector<std::vector<uint8_t>> read_back_every_output(DispatchJob& job) {
  std::vector<std::vector<uint8_t>> data(job.plan.buffers.size());
  for (size_t i = 0; i < job.plan.buffers.size(); ++i) {
    if (!job.plan.buffers[i].buffer->output) continue;
    data[i].resize(uint64_t{job.plan.buffers[i].elements} * element_bytes(job.plan.buffers[i].buffer->type));
    job.readback[i] = data[i];
  }
  return data;
}

Outputs outputs_by_name(const DispatchPlan& plan, std::vector<std::vector<uint8_t>>& data) {
  std::map<std::string, std::vector<uint8_t>> outputs;
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].buffer->output) outputs[plan.buffers[i].buffer->name] = std::move(data[i]);
  return Outputs(std::move(outputs));
}

// ---- one submission -----------------------------------------------------------

void execute(DeviceContext& device, std::span<const Work> work, std::unique_ptr<MapTracker>& tracker,
             DispatchReport* report, bool allow_pending, bool wait) {
  device.check_alive();
  for (const Work& w : work) w.dispatcher->check(*w.job, allow_pending);

  DispatchReport timing;
  if (!work.empty()) timing.grid = work.back().job->plan.grid;
  // GPU timing (Backend::set_gpu_timing): one timed submission at a time on
  // the device, a timestamp pair around each compute pass.
  GpuTimer* timer = device.timing() ? device.timer() : nullptr;
  std::unique_lock<std::mutex> timer_lock;
  if (timer) timer_lock = std::unique_lock<std::mutex>(timer->mutex());
  uint32_t passes = 0;
  try {
    auto start = Clock::now();
    WGPUSubmissionIndex submission = 0;
    {
      if (timer) timer->reserve(device, static_cast<uint32_t>(work.size()));
      std::lock_guard scope_lock(device.scope_mutex());
      ErrorScope scope(device);
      for (const Work& w : work) w.dispatcher->bind(*w.job);
      timing.upload_ms = ms_since(start);
      start = Clock::now();
      wgpu::CommandEncoder encoder(wgpuDeviceCreateCommandEncoder(device.device(), nullptr));
      for (const Work& w : work) w.dispatcher->encode_clears(*w.job, encoder.get());
      // One compute pass for a run of dispatches; a job's readback copies
      // come right after its dispatch (a later one may write what it reads).
      wgpu::ComputePassEncoder pass;
      for (const Work& w : work) {
        if (!pass) {
          WGPUComputePassDescriptor descriptor{};
          WGPUPassTimestampWrites writes{};
          if (timer) {
            writes = timer->writes(passes);
            descriptor.timestampWrites = &writes;
          }
          ++passes;
          pass = wgpu::ComputePassEncoder(wgpuCommandEncoderBeginComputePass(encoder.get(), &descriptor));
        }
        w.dispatcher->encode_dispatch(*w.job, pass.get());
        if (w.dispatcher->has_copies(*w.job)) {
          wgpuComputePassEncoderEnd(pass.get());
          pass.reset();
          w.dispatcher->encode_copies(*w.job, encoder.get());
        }
      }
      if (pass) {
        wgpuComputePassEncoderEnd(pass.get());
        pass.reset();
      }
      if (timer) timer->encode_resolve(encoder.get(), passes);
      const wgpu::CommandBuffer commands(wgpuCommandEncoderFinish(encoder.get(), nullptr));
      // wgpu-native aborts the process on a failed submit, so everything is
      // checked before it.
      scope.check("the GPU rejected the dispatch");
      device.check_alive();
      submission = device.submit(commands.get());
    }
    size_t maps = 0;
    for (const Work& w : work) maps += w.dispatcher->maps_needed(*w.job);
    if (maps > 0) {
      tracker->begin(maps);
      for (const Work& w : work) w.dispatcher->request_maps(*w.job, *tracker);
      device.poll_until([&] { return tracker->done(); });
    } else if (wait) {
      device.wait_for(submission);
    } else {
      device.throttle(submission);
    }
    timing.dispatch_ms = ms_since(start);
    if (timer) {
      if (maps == 0 && !wait) device.wait_for(submission);
      const uint64_t ns = timer->read(device, passes);
      device.add_gpu_time(ns);
      timing.gpu_ms = static_cast<double>(ns) / 1e6;
    }
    start = Clock::now();
    if (maps > 0) {
      for (const Work& w : work) w.dispatcher->copy_out(*w.job, *tracker);
      if (const std::string error = tracker->error(); !error.empty())
        throw Error(ErrorKind::gpu, "reading the outputs back failed: " + error);
      for (const Work& w : work)
        if (w.job->loop_cut_short)
          throw Error(ErrorKind::limit_exceeded,
                      "the shader compiler of '" + device.adapter().name +
                          "' ended a loop before its condition or a break did (lavapipe stops an invocation's loops "
                          "after 65,535 iterations in all), so this dispatch's results are wrong and none are given. "
                          "Run on another adapter (VYRE_WGPU_ADAPTER), or split the work so that no invocation loops "
                          "that often (docs/conformance.md, \"Driver defects\").");
    }
    timing.readback_ms = ms_since(start);
  } catch (...) {
    if (timer) timer->abandon();
    if (!tracker->done()) {
      keep_forever(std::move(tracker));  // callbacks still to come write there: leave it to them
      tracker = std::make_unique<MapTracker>();
    }
    for (const Work& w : work) w.dispatcher->forget_frame(w.job->frame);  // fresh buffers next time
    throw;
  }
  if (report) *report = timing;
}

}  // namespace vyre::gpu
