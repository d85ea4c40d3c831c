#include "gpu/dispatcher.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>

#include "vyre/error.hpp"

namespace vyre::gpu {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

constexpr uint64_t kElementBytes = 4;

uint64_t readback_bytes(const BufferPlan& plan) { return plan.buffer->output ? plan.elements * kElementBytes : 0; }

// "<what>; the device's <limit> on '<adapter>' is <value><unit>. <advice>"
[[noreturn]] void beyond_limit(const std::string& what, const char* limit_name, uint64_t limit, const char* unit,
                               const DeviceContext& device, const char* advice) {
  throw Error(ErrorKind::limit_exceeded, what + "; the device's " + limit_name + " on '" + device.adapter().name +
                                             "' is " + std::to_string(limit) + unit + ". " + advice);
}

}  // namespace

Dispatcher::Dispatcher(std::shared_ptr<const ComputePipeline> pipeline)
    : pipeline_(std::move(pipeline)) {
  slots_.resize(pipeline_->interface().bindings.size());
}

std::vector<Dispatcher::Binding> Dispatcher::match(const DispatchPlan& plan) const {
  std::vector<Binding> bindings;
  for (const auto& shader : pipeline_->interface().bindings) {
    auto it = std::find_if(plan.buffers.begin(), plan.buffers.end(),
                           [&](const BufferPlan& p) { return p.buffer->binding == shader.binding; });
    if (it == plan.buffers.end())
      throw Error(ErrorKind::lowering, "the shader binds '" + shader.buffer + "' at binding " +
                                           std::to_string(shader.binding) + " but the program has no buffer there");
    bindings.push_back({&shader, &*it, std::max<uint64_t>(shader.binding_bytes(it->elements), kElementBytes)});
  }
  return bindings;
}

void Dispatcher::check_limits(const DispatchPlan& plan, const std::vector<Binding>& bindings) const {
  const DeviceContext& device = pipeline_->device();
  const WGPULimits& limits = device.limits();
  const Dim3& grid = plan.grid;
  for (int axis = 0; axis < 3; ++axis)
    if (grid[axis] > limits.maxComputeWorkgroupsPerDimension)
      beyond_limit("grid " + std::to_string(grid[0]) + "x" + std::to_string(grid[1]) + "x" + std::to_string(grid[2]) +
                       " has " + std::to_string(grid[axis]) + " workgroups on axis " + "xyz"[axis],
                   "maxComputeWorkgroupsPerDimension", limits.maxComputeWorkgroupsPerDimension, "", device,
                   "Give a smaller grid (--grid X,Y,Z) and have the program cover the elements in a grid-stride "
                   "loop, spread the grid over y and z, or use a larger workgroup size.");
  for (const auto& b : bindings) {
    const bool uniform = b.shader->kind == BindingKind::Uniform;
    const uint64_t binding_limit = uniform ? limits.maxUniformBufferBindingSize : limits.maxStorageBufferBindingSize;
    if (b.bytes <= binding_limit && b.bytes <= limits.maxBufferSize) continue;
    const std::string what = "buffer '" + b.plan->buffer->name + "' (" + std::to_string(b.plan->elements) + " " +
                             std::string(to_string(b.plan->buffer->type)) + " elements) needs " +
                             std::to_string(b.bytes) + " bytes";
    const char* split = "Split the data over several dispatches.";
    if (b.bytes > binding_limit)
      beyond_limit(what, uniform ? "maxUniformBufferBindingSize" : "maxStorageBufferBindingSize", binding_limit,
                   " bytes", device, uniform ? "Declare it a read buffer instead of a uniform one." : split);
    beyond_limit(what, "maxBufferSize", limits.maxBufferSize, " bytes", device, split);
  }
}

bool Dispatcher::ensure(wgpu::Buffer& buffer, uint64_t& capacity, uint64_t bytes, WGPUBufferUsage usage) {
  if (buffer && capacity >= bytes) return false;
  buffer.reset();
  capacity = 0;
  WGPUBufferDescriptor descriptor{};
  descriptor.usage = usage;
  descriptor.size = bytes;
  buffer = wgpu::Buffer(wgpuDeviceCreateBuffer(pipeline_->device().device(), &descriptor));
  capacity = bytes;
  ++buffers_created_;
  return true;
}

void Dispatcher::prepare(const std::vector<Binding>& bindings) {
  const WGPUDevice device = pipeline_->device().device();
  std::vector<uint64_t> sizes;
  std::vector<WGPUBindGroupEntry> entries;
  // A new buffer may reuse a released one's address: rebind on creation, not by address.
  bool created = false;
  for (size_t i = 0; i < bindings.size(); ++i) {
    const Binding& b = bindings[i];
    Slot& slot = slots_[i];
    const WGPUBufferUsage usage = b.shader->kind == BindingKind::Uniform
                                      ? WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst
                                      : WGPUBufferUsage_Storage | WGPUBufferUsage_CopyDst | WGPUBufferUsage_CopySrc;
    created |= ensure(slot.buffer, slot.capacity, b.bytes, usage);
    if (const uint64_t readback = readback_bytes(*b.plan); readback > 0)
      ensure(slot.staging, slot.staging_capacity, readback, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst);
    sizes.push_back(b.bytes);
    WGPUBindGroupEntry entry{};
    entry.binding = b.shader->binding;
    entry.buffer = slot.buffer.get();
    entry.size = b.bytes;  // the exact size: a reused buffer may be larger
    entries.push_back(entry);
  }
  if (created || !buffers_group_ || sizes != bound_sizes_) {
    WGPUBindGroupDescriptor descriptor{};
    descriptor.layout = pipeline_->buffers_layout();
    descriptor.entryCount = entries.size();
    descriptor.entries = entries.data();
    buffers_group_ = wgpu::BindGroup(wgpuDeviceCreateBindGroup(device, &descriptor));
    bound_sizes_ = std::move(sizes);
  }

  const ShaderInterface& iface = pipeline_->interface();
  if (!iface.length_slots.empty() && !lengths_group_) {
    ensure(lengths_, lengths_capacity_, iface.lengths_bytes(), WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst);
    WGPUBindGroupEntry entry{};
    entry.binding = ShaderInterface::kLengthsBinding;
    entry.buffer = lengths_.get();
    entry.size = iface.lengths_bytes();
    WGPUBindGroupDescriptor descriptor{};
    descriptor.layout = pipeline_->lengths_layout();
    descriptor.entryCount = 1;
    descriptor.entries = &entry;
    lengths_group_ = wgpu::BindGroup(wgpuDeviceCreateBindGroup(device, &descriptor));
  }
}

void Dispatcher::upload(const std::vector<Binding>& bindings) {
  const WGPUQueue queue = pipeline_->device().queue();
  for (size_t i = 0; i < bindings.size(); ++i) {
    const auto initial = bindings[i].plan->initial;
    if (!initial.empty()) wgpuQueueWriteBuffer(queue, slots_[i].buffer.get(), 0, initial.data(), initial.size());
  }
  const ShaderInterface& iface = pipeline_->interface();
  if (iface.length_slots.empty()) return;
  // One u32 per slot, four to a 16-byte row: the layout of array<vec4<u32>, N>.
  std::vector<uint32_t> lengths(iface.lengths_bytes() / sizeof(uint32_t), 0);
  for (size_t slot = 0; slot < iface.length_slots.size(); ++slot) {
    auto it = std::find_if(bindings.begin(), bindings.end(),
                           [&](const Binding& b) { return b.shader->buffer == iface.length_slots[slot]; });
    if (it == bindings.end())
      throw Error(ErrorKind::lowering, "the shader reads the length of '" + iface.length_slots[slot] +
                                           "', which it does not bind");
    lengths.at(slot) = it->plan->elements;
  }
  wgpuQueueWriteBuffer(queue, lengths_.get(), 0, lengths.data(), lengths.size() * sizeof(uint32_t));
}

wgpu::CommandBuffer Dispatcher::encode(const DispatchPlan& plan, const std::vector<Binding>& bindings) {
  wgpu::CommandEncoder encoder(wgpuDeviceCreateCommandEncoder(pipeline_->device().device(), nullptr));
  // Reused buffers hold the last dispatch's data: zero what no upload covers.
  for (size_t i = 0; i < bindings.size(); ++i) {
    const uint64_t written = bindings[i].plan->initial.size();
    if (written < bindings[i].bytes)
      wgpuCommandEncoderClearBuffer(encoder.get(), slots_[i].buffer.get(), written, bindings[i].bytes - written);
  }
  {
    wgpu::ComputePassEncoder pass(wgpuCommandEncoderBeginComputePass(encoder.get(), nullptr));
    wgpuComputePassEncoderSetPipeline(pass.get(), pipeline_->get());
    wgpuComputePassEncoderSetBindGroup(pass.get(), 0, buffers_group_.get(), 0, nullptr);
    if (lengths_group_)
      wgpuComputePassEncoderSetBindGroup(pass.get(), ShaderInterface::kLengthsGroup, lengths_group_.get(), 0, nullptr);
    if (plan.grid[0] > 0 && plan.grid[1] > 0 && plan.grid[2] > 0)
      wgpuComputePassEncoderDispatchWorkgroups(pass.get(), plan.grid[0], plan.grid[1], plan.grid[2]);
    wgpuComputePassEncoderEnd(pass.get());
  }
  for (size_t i = 0; i < bindings.size(); ++i)
    if (const uint64_t readback = readback_bytes(*bindings[i].plan); readback > 0)
      wgpuCommandEncoderCopyBufferToBuffer(encoder.get(), slots_[i].buffer.get(), 0, slots_[i].staging.get(), 0,
                                           readback);
  return wgpu::CommandBuffer(wgpuCommandEncoderFinish(encoder.get(), nullptr));
}

void Dispatcher::read_back(const std::vector<Binding>& bindings, Outputs& outputs) {
  std::vector<size_t> mapped;
  for (size_t i = 0; i < bindings.size(); ++i)
    if (readback_bytes(*bindings[i].plan) > 0) mapped.push_back(i);
  // What the map callbacks write. wgpu-native cannot tell a buffer's map
  // state, so each callback records its own.
  struct Mapping {
    explicit Mapping(size_t n) : pending(static_cast<int>(n)), ok(n) {}
    std::atomic<int> pending;
    std::vector<std::atomic<bool>> ok;
    std::mutex mutex;
    std::string error;
  };
  auto mapping = std::make_unique<Mapping>(mapped.size());
  WGPUBufferMapCallbackInfo callback{};
  callback.mode = WGPUCallbackMode_AllowSpontaneous;
  callback.callback = [](WGPUMapAsyncStatus status, WGPUStringView message, void* m, void* ok) {
    auto* state = static_cast<Mapping*>(m);
    if (status == WGPUMapAsyncStatus_Success) {
      static_cast<std::atomic<bool>*>(ok)->store(true);
    } else {
      std::lock_guard lock(state->mutex);
      if (state->error.empty()) state->error = from_view(message);
    }
    --state->pending;
  };
  callback.userdata1 = mapping.get();
  for (size_t k = 0; k < mapped.size(); ++k) {
    callback.userdata2 = &mapping->ok[k];
    wgpuBufferMapAsync(slots_[mapped[k]].staging.get(), WGPUMapMode_Read, 0, readback_bytes(*bindings[mapped[k]].plan),
                       callback);
  }
  try {
    pipeline_->device().poll_until([&] { return mapping->pending.load() == 0; });
  } catch (...) {
    if (mapping->pending.load() != 0) mapping.release();  // callbacks still to come write there: leave it to them
    throw;
  }

  for (size_t k = 0; k < mapped.size(); ++k) {
    if (!mapping->ok[k]) continue;
    const BufferPlan& plan = *bindings[mapped[k]].plan;
    const WGPUBuffer staging = slots_[mapped[k]].staging.get();
    const uint64_t bytes = readback_bytes(plan);
    const auto* data = static_cast<const uint8_t*>(wgpuBufferGetConstMappedRange(staging, 0, bytes));
    if (data != nullptr) outputs.put(plan.buffer->name, std::vector<uint8_t>(data, data + bytes));
    else if (mapping->error.empty()) mapping->error = "no mapped range for '" + plan.buffer->name + "'";
    wgpuBufferUnmap(staging);
  }
  if (!mapping->error.empty()) throw Error(ErrorKind::gpu, "reading the outputs back failed: " + mapping->error);
}

void Dispatcher::forget_buffers() {
  buffers_group_.reset();
  lengths_group_.reset();
  bound_sizes_.clear();
  for (Slot& slot : slots_) slot = Slot{};
  lengths_.reset();
  lengths_capacity_ = 0;
}

Outputs Dispatcher::run(const DispatchPlan& plan, DispatchReport* report) {
  std::lock_guard lock(mutex_);
  DeviceContext& device = pipeline_->device();
  device.check_alive();
  const std::vector<Binding> bindings = match(plan);
  check_limits(plan, bindings);

  DispatchReport timing;
  timing.grid = plan.grid;
  Outputs outputs;
  try {
    WGPUSubmissionIndex submission;
    auto start = Clock::now();
    {
      std::lock_guard scope_lock(device.scope_mutex());
      ErrorScope scope(device);
      prepare(bindings);
      upload(bindings);
      timing.upload_ms = ms_since(start);
      start = Clock::now();
      const wgpu::CommandBuffer commands = encode(plan, bindings);
      // wgpu-native aborts the process on a failed submit, so everything is
      // checked before it.
      scope.check("the GPU rejected the dispatch");
      device.check_alive();
      const WGPUCommandBuffer raw = commands.get();
      submission = wgpuQueueSubmitForIndex(device.queue(), 1, &raw);
    }
    device.wait_for(submission);
    timing.dispatch_ms = ms_since(start);
    start = Clock::now();
    read_back(bindings, outputs);
    timing.readback_ms = ms_since(start);
  } catch (...) {
    forget_buffers();  // whatever failed, the next dispatch starts from fresh buffers
    throw;
  }
  // Outputs the shader does not bind keep what they were given.
  for (const auto& p : plan.buffers) {
    if (!p.buffer->output || outputs.has(p.buffer->name)) continue;
    std::vector<uint8_t> data(p.initial.begin(), p.initial.end());
    data.resize(p.elements * kElementBytes, 0);
    outputs.put(p.buffer->name, std::move(data));
  }
  if (report) *report = timing;
  return outputs;
}

}  // namespace vyre::gpu
