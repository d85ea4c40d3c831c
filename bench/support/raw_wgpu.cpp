#include "support/raw_wgpu.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <wgpu.h>

namespace vyre::bench {
namespace {

WGPUStringView view(std::string_view s) { return WGPUStringView{s.data(), s.size()}; }
std::string text(WGPUStringView v) {
  if (v.data == nullptr) return {};
  return v.length == WGPU_STRLEN ? std::string(v.data) : std::string(v.data, v.length);
}

// A benchmark stops at the first GPU error: its figures would be wrong.
void on_error(WGPUDevice const*, WGPUErrorType, WGPUStringView message, void*, void*) {
  std::fprintf(stderr, "raw wgpu: GPU error: %s\n", text(message).c_str());
  std::abort();
}

WGPUBuffer make_buffer(WGPUDevice device, uint64_t bytes, WGPUBufferUsage usage) {
  WGPUBufferDescriptor d{};
  d.size = bytes;
  d.usage = usage;
  return wgpuDeviceCreateBuffer(device, &d);
}

WGPUBindGroup make_group(WGPUDevice device, WGPUComputePipeline pipeline, uint32_t index,
                         const std::vector<WGPUBindGroupEntry>& entries) {
  WGPUBindGroupLayout layout = wgpuComputePipelineGetBindGroupLayout(pipeline, index);
  WGPUBindGroupDescriptor d{};
  d.layout = layout;
  d.entryCount = entries.size();
  d.entries = entries.data();
  WGPUBindGroup group = wgpuDeviceCreateBindGroup(device, &d);
  wgpuBindGroupLayoutRelease(layout);
  return group;
}

WGPUBindGroupEntry entry(uint32_t binding, WGPUBuffer buffer, uint64_t bytes) {
  WGPUBindGroupEntry e{};
  e.binding = binding;
  e.buffer = buffer;
  e.size = bytes;
  return e;
}

}  // namespace

RawWgpu::RawWgpu(std::string_view adapter_name) {
  WGPUInstanceExtras extras{};
  extras.chain.sType = static_cast<WGPUSType>(WGPUSType_InstanceExtras);
  extras.backends = WGPUInstanceBackend_Primary;
  extras.flags = WGPUInstanceFlag_Default;  // as vyre's instance
  WGPUInstanceDescriptor instance{};
  instance.nextInChain = &extras.chain;
  instance_ = wgpuCreateInstance(&instance);
  // On a headless machine libwayland may print a harmless line here (docs/gpu.md).
  std::vector<WGPUAdapter> adapters;
  adapters.resize(wgpuInstanceEnumerateAdapters(instance_, nullptr, nullptr));
  wgpuInstanceEnumerateAdapters(instance_, nullptr, adapters.data());
  // With no name: the first discrete adapter, else the first (as vyre picks by default).
  size_t chosen = adapters.size();
  bool discrete_chosen = false;
  for (size_t i = 0; i < adapters.size(); ++i) {
    WGPUAdapterInfo info{};
    wgpuAdapterGetInfo(adapters[i], &info);
    const std::string name = text(info.device);
    const bool discrete = info.adapterType == WGPUAdapterType_DiscreteGPU;
    wgpuAdapterInfoFreeMembers(info);
    if (!adapter_name.empty()) {
      if (chosen == adapters.size() && name == adapter_name) chosen = i;
    } else if (chosen == adapters.size() || (discrete && !discrete_chosen)) {
      chosen = i;
      discrete_chosen = discrete;
    }
    if (i == chosen) adapter_name_ = name;
  }
  for (size_t i = 0; i < adapters.size(); ++i) {
    if (i == chosen)
      adapter_ = adapters[i];
    else
      wgpuAdapterRelease(adapters[i]);
  }
  if (adapter_ == nullptr) throw std::runtime_error("raw wgpu: no adapter named " + std::string(adapter_name));

  WGPULimits limits{};
  wgpuAdapterGetLimits(adapter_, &limits);
  limits.nextInChain = nullptr;
  WGPUDeviceDescriptor d{};
  d.requiredLimits = &limits;
  d.uncapturedErrorCallbackInfo.callback = on_error;
  WGPURequestDeviceCallbackInfo callback{};
  callback.mode = WGPUCallbackMode_AllowSpontaneous;
  callback.callback = [](WGPURequestDeviceStatus status, WGPUDevice device, WGPUStringView message, void* out, void*) {
    if (status != WGPURequestDeviceStatus_Success)
      std::fprintf(stderr, "raw wgpu: no device: %s\n", text(message).c_str());
    *static_cast<WGPUDevice*>(out) = device;
  };
  callback.userdata1 = &device_;
  wgpuAdapterRequestDevice(adapter_, &d, callback);
  if (device_ == nullptr) throw std::runtime_error("raw wgpu: the adapter opened no device");
  queue_ = wgpuDeviceGetQueue(device_);
}

RawWgpu::~RawWgpu() {
  for (const Kernel& k : kernels_) {
    for (WGPUBindGroup g : {k.group0, k.group1})
      if (g != nullptr) wgpuBindGroupRelease(g);
    wgpuComputePipelineRelease(k.pipeline);
    wgpuShaderModuleRelease(k.module);
  }
  for (WGPUBuffer b : {saxpy_alpha_, saxpy_x_, saxpy_y_, saxpy_lengths_})
    if (b != nullptr) wgpuBufferRelease(b);
  for (WGPUBuffer b : {a_, b_, out_, staging_, lengths_, copy_src_, copy_dst_})
    if (b != nullptr) wgpuBufferRelease(b);
  if (group0_ != nullptr) wgpuBindGroupRelease(group0_);
  if (group1_ != nullptr) wgpuBindGroupRelease(group1_);
  if (pipeline_ != nullptr) wgpuComputePipelineRelease(pipeline_);
  if (module_ != nullptr) wgpuShaderModuleRelease(module_);
  if (queue_ != nullptr) wgpuQueueRelease(queue_);
  if (device_ != nullptr) wgpuDeviceRelease(device_);
  if (adapter_ != nullptr) wgpuAdapterRelease(adapter_);
  if (instance_ != nullptr) wgpuInstanceRelease(instance_);
}

void RawWgpu::prepare_xor(std::string_view wgsl, uint32_t n, uint32_t workgroup_size) {
  n_ = n;
  groups_ = (n + workgroup_size - 1) / workgroup_size;
  WGPUShaderSourceWGSL source{};
  source.chain.sType = WGPUSType_ShaderSourceWGSL;
  source.code = view(wgsl);
  WGPUShaderModuleDescriptor md{};
  md.nextInChain = &source.chain;
  module_ = wgpuDeviceCreateShaderModule(device_, &md);
  WGPUComputePipelineDescriptor pd{};
  pd.compute.module = module_;
  pd.compute.entryPoint = view("main");
  pipeline_ = wgpuDeviceCreateComputePipeline(device_, &pd);

  const uint64_t bytes = uint64_t{n} * 4;
  a_ = make_buffer(device_, bytes, WGPUBufferUsage_Storage | WGPUBufferUsage_CopyDst);
  b_ = make_buffer(device_, bytes, WGPUBufferUsage_Storage | WGPUBufferUsage_CopyDst);
  out_ = make_buffer(device_, bytes, WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc);
  staging_ = make_buffer(device_, bytes, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst);
  lengths_ = make_buffer(device_, 16, WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst);
  group0_ = make_group(device_, pipeline_, 0, {entry(0, a_, bytes), entry(1, b_, bytes), entry(2, out_, bytes)});
  group1_ = make_group(device_, pipeline_, 1, {entry(0, lengths_, 16)});
}

void RawWgpu::wait_mapped(WGPUBuffer buffer, uint64_t bytes) {
  bool mapped = false;
  WGPUBufferMapCallbackInfo callback{};
  callback.mode = WGPUCallbackMode_AllowSpontaneous;
  callback.callback = [](WGPUMapAsyncStatus status, WGPUStringView, void* done, void*) {
    if (status != WGPUMapAsyncStatus_Success) std::abort();
    *static_cast<bool*>(done) = true;
  };
  callback.userdata1 = &mapped;
  wgpuBufferMapAsync(buffer, WGPUMapMode_Read, 0, bytes, callback);
  while (!mapped) wgpuDevicePoll(device_, WGPU_TRUE, nullptr);
}

void RawWgpu::dispatch_xor(const uint32_t* a, const uint32_t* b, uint32_t* out) {
  const uint64_t bytes = uint64_t{n_} * 4;
  const uint32_t lengths[4] = {n_, 0, 0, 0};
  wgpuQueueWriteBuffer(queue_, a_, 0, a, bytes);
  wgpuQueueWriteBuffer(queue_, b_, 0, b, bytes);
  wgpuQueueWriteBuffer(queue_, lengths_, 0, lengths, sizeof lengths);
  WGPUCommandEncoder encoder = wgpuDeviceCreateCommandEncoder(device_, nullptr);
  WGPUComputePassEncoder pass = wgpuCommandEncoderBeginComputePass(encoder, nullptr);
  wgpuComputePassEncoderSetPipeline(pass, pipeline_);
  wgpuComputePassEncoderSetBindGroup(pass, 0, group0_, 0, nullptr);
  wgpuComputePassEncoderSetBindGroup(pass, 1, group1_, 0, nullptr);
  wgpuComputePassEncoderDispatchWorkgroups(pass, groups_, 1, 1);
  wgpuComputePassEncoderEnd(pass);
  wgpuComputePassEncoderRelease(pass);
  wgpuCommandEncoderCopyBufferToBuffer(encoder, out_, 0, staging_, 0, bytes);
  WGPUCommandBuffer commands = wgpuCommandEncoderFinish(encoder, nullptr);
  wgpuQueueSubmit(queue_, 1, &commands);
  wgpuCommandBufferRelease(commands);
  wgpuCommandEncoderRelease(encoder);
  wait_mapped(staging_, bytes);
  std::memcpy(out, wgpuBufferGetConstMappedRange(staging_, 0, bytes), bytes);
  wgpuBufferUnmap(staging_);
}

double RawWgpu::copy_seconds(uint64_t bytes, int copies) {
  if (copy_bytes_ != bytes) {
    for (WGPUBuffer* b : {&copy_src_, &copy_dst_})
      if (*b != nullptr) wgpuBufferRelease(*b);
    copy_src_ = make_buffer(device_, bytes, WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst);
    copy_dst_ = make_buffer(device_, bytes, WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst);
    copy_bytes_ = bytes;
    // Real data, not zeros, in the source.
    std::vector<uint32_t> pattern(1 << 20);
    for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint32_t>(i * 2654435761u);
    for (uint64_t offset = 0; offset < bytes; offset += pattern.size() * 4)
      wgpuQueueWriteBuffer(queue_, copy_src_, offset, pattern.data(), std::min<uint64_t>(pattern.size() * 4, bytes - offset));
    wgpuDevicePoll(device_, WGPU_TRUE, nullptr);
  }
  const auto start = std::chrono::steady_clock::now();
  WGPUCommandEncoder encoder = wgpuDeviceCreateCommandEncoder(device_, nullptr);
  for (int k = 0; k < copies; ++k) wgpuCommandEncoderCopyBufferToBuffer(encoder, copy_src_, 0, copy_dst_, 0, bytes);
  WGPUCommandBuffer commands = wgpuCommandEncoderFinish(encoder, nullptr);
  const WGPUSubmissionIndex index = wgpuQueueSubmitForIndex(queue_, 1, &commands);
  wgpuDevicePoll(device_, WGPU_TRUE, &index);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  wgpuCommandBufferRelease(commands);
  wgpuCommandEncoderRelease(encoder);
  return seconds;
}

void RawWgpu::prepare_saxpy(uint64_t elements) {
  saxpy_n_ = elements;
  const uint64_t bytes = elements * 4;
  const WGPUBufferUsage storage = WGPUBufferUsage_Storage | WGPUBufferUsage_CopyDst | WGPUBufferUsage_CopySrc;
  saxpy_x_ = make_buffer(device_, bytes, storage);
  saxpy_y_ = make_buffer(device_, bytes, storage);
  saxpy_alpha_ = make_buffer(device_, 16, WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst);
  saxpy_lengths_ = make_buffer(device_, 16, WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst);
  const float alpha[4] = {0.5f, 0, 0, 0};
  const uint32_t lengths[4] = {static_cast<uint32_t>(elements), 0, 0, 0};
  wgpuQueueWriteBuffer(queue_, saxpy_alpha_, 0, alpha, sizeof alpha);
  wgpuQueueWriteBuffer(queue_, saxpy_lengths_, 0, lengths, sizeof lengths);
  std::vector<float> ones(1 << 20, 1.0f), ramp(1 << 20);
  for (uint64_t offset = 0; offset < elements; offset += ones.size()) {
    const uint64_t count = std::min<uint64_t>(ones.size(), elements - offset);
    for (uint64_t i = 0; i < count; ++i) ramp[i] = static_cast<float>((offset + i) % 1000);
    wgpuQueueWriteBuffer(queue_, saxpy_x_, offset * 4, ones.data(), count * 4);
    wgpuQueueWriteBuffer(queue_, saxpy_y_, offset * 4, ramp.data(), count * 4);
    wgpuDevicePoll(device_, WGPU_TRUE, nullptr);
  }
}

int RawWgpu::add_saxpy_kernel(std::string_view wgsl, const uint32_t grid[3], bool checked, bool lengths) {
  Kernel k;
  WGPUShaderSourceWGSL source{};
  source.chain.sType = WGPUSType_ShaderSourceWGSL;
  source.code = view(wgsl);
  WGPUShaderModuleDescriptor md{};
  md.nextInChain = &source.chain;
  k.module = checked ? wgpuDeviceCreateShaderModule(device_, &md)
                     : wgpuDeviceCreateShaderModuleTrusted(device_, &md, WGPUShaderRuntimeChecks_None);
  WGPUComputePipelineDescriptor pd{};
  pd.compute.module = k.module;
  pd.compute.entryPoint = view("main");
  k.pipeline = wgpuDeviceCreateComputePipeline(device_, &pd);
  const uint64_t bytes = saxpy_n_ * 4;
  k.group0 = make_group(device_, k.pipeline, 0,
                        {entry(0, saxpy_alpha_, 16), entry(1, saxpy_x_, bytes), entry(2, saxpy_y_, bytes)});
  if (lengths) k.group1 = make_group(device_, k.pipeline, 1, {entry(0, saxpy_lengths_, 16)});
  for (int axis = 0; axis < 3; ++axis) k.grid[axis] = grid[axis];
  kernels_.push_back(k);
  return static_cast<int>(kernels_.size() - 1);
}

double RawWgpu::saxpy_seconds(int index, int dispatches, bool one_pass) {
  const Kernel& k = kernels_.at(static_cast<size_t>(index));
  const auto start = std::chrono::steady_clock::now();
  WGPUCommandEncoder encoder = wgpuDeviceCreateCommandEncoder(device_, nullptr);
  WGPUComputePassEncoder pass = nullptr;
  for (int d = 0; d < dispatches; ++d) {
    if (pass == nullptr) pass = wgpuCommandEncoderBeginComputePass(encoder, nullptr);
    wgpuComputePassEncoderSetPipeline(pass, k.pipeline);
    wgpuComputePassEncoderSetBindGroup(pass, 0, k.group0, 0, nullptr);
    if (k.group1 != nullptr) wgpuComputePassEncoderSetBindGroup(pass, 1, k.group1, 0, nullptr);
    wgpuComputePassEncoderDispatchWorkgroups(pass, k.grid[0], k.grid[1], k.grid[2]);
    if (!one_pass || d + 1 == dispatches) {
      wgpuComputePassEncoderEnd(pass);
      wgpuComputePassEncoderRelease(pass);
      pass = nullptr;
    }
  }
  WGPUCommandBuffer commands = wgpuCommandEncoderFinish(encoder, nullptr);
  const WGPUSubmissionIndex submission = wgpuQueueSubmitForIndex(queue_, 1, &commands);
  wgpuDevicePoll(device_, WGPU_TRUE, &submission);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  wgpuCommandBufferRelease(commands);
  wgpuCommandEncoderRelease(encoder);
  return seconds;
}

std::vector<float> RawWgpu::saxpy_y() {
  const uint64_t bytes = saxpy_n_ * 4;
  WGPUBuffer staging = make_buffer(device_, bytes, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst);
  WGPUCommandEncoder encoder = wgpuDeviceCreateCommandEncoder(device_, nullptr);
  wgpuCommandEncoderCopyBufferToBuffer(encoder, saxpy_y_, 0, staging, 0, bytes);
  WGPUCommandBuffer commands = wgpuCommandEncoderFinish(encoder, nullptr);
  wgpuQueueSubmit(queue_, 1, &commands);
  wait_mapped(staging, bytes);
  std::vector<float> y(saxpy_n_);
  std::memcpy(y.data(), wgpuBufferGetConstMappedRange(staging, 0, bytes), bytes);
  wgpuBufferUnmap(staging);
  wgpuBufferRelease(staging);
  wgpuCommandBufferRelease(commands);
  wgpuCommandEncoderRelease(encoder);
  return y;
}

}  // namespace vyre::bench
