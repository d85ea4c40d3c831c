#include "gpu/compute_pipeline.hpp"

#include <string>
#include <vector>

#include "util/stopwatch.hpp"
#include "vyre/error.hpp"

namespace vyre::gpu {
namespace {

void check_limits(const ShaderInterface& iface, const DeviceContext& device) {
  const WGPULimits& limits = device.limits();
  const Dim3& wg = iface.workgroup_size;
  const std::string size = dim3_text(wg);
  const std::string on = " of '" + device.adapter().name + "'";
  const uint32_t per_axis[3] = {limits.maxComputeWorkgroupSizeX, limits.maxComputeWorkgroupSizeY,
                                limits.maxComputeWorkgroupSizeZ};
  for (int axis = 0; axis < 3; ++axis)
    if (wg[axis] > per_axis[axis])
      throw Error(ErrorKind::limit_exceeded, "workgroup size " + size + " exceeds the limit of " +
                                                 std::to_string(per_axis[axis]) + " on axis " + "xyz"[axis] + on);
  const uint64_t invocations = uint64_t{wg[0]} * wg[1] * wg[2];
  if (invocations > limits.maxComputeInvocationsPerWorkgroup)
    throw Error(ErrorKind::limit_exceeded, "workgroup size " + size + " has " + std::to_string(invocations) +
                                               " invocations; the limit" + on + " is " +
                                               std::to_string(limits.maxComputeInvocationsPerWorkgroup));

  uint32_t storage = 0, uniform = iface.uniform_slots() == 0 ? 0 : 1;
  for (const auto& b : iface.bindings) {
    (b.kind == BindingKind::Uniform ? uniform : storage) += 1;
    if (b.binding >= limits.maxBindingsPerBindGroup)
      throw Error(ErrorKind::limit_exceeded, "buffer '" + b.buffer + "' uses binding " + std::to_string(b.binding) +
                                                 "; bindings" + on + " go up to " +
                                                 std::to_string(limits.maxBindingsPerBindGroup - 1));
  }
  if (storage > limits.maxStorageBuffersPerShaderStage)
    throw Error(ErrorKind::limit_exceeded, "the shader binds " + std::to_string(storage) +
                                               " storage buffers; the limit" + on + " is " +
                                               std::to_string(limits.maxStorageBuffersPerShaderStage));
  if (uniform > limits.maxUniformBuffersPerShaderStage)
    throw Error(ErrorKind::limit_exceeded, "the shader binds " + std::to_string(uniform) +
                                               " uniform buffers; the limit" + on + " is " +
                                               std::to_string(limits.maxUniformBuffersPerShaderStage));
}

WGPUBufferBindingType binding_type(BindingKind kind) {
  switch (kind) {
    case BindingKind::StorageRead: return WGPUBufferBindingType_ReadOnlyStorage;
    case BindingKind::StorageReadWrite: return WGPUBufferBindingType_Storage;
    case BindingKind::Uniform: return WGPUBufferBindingType_Uniform;
  }
  return WGPUBufferBindingType_Undefined;
}

WGPUBindGroupLayoutEntry layout_entry(uint32_t binding, WGPUBufferBindingType type) {
  WGPUBindGroupLayoutEntry entry{};
  entry.binding = binding;
  entry.visibility = WGPUShaderStage_Compute;
  entry.buffer.type = type;
  return entry;
}

wgpu::BindGroupLayout make_layout(WGPUDevice device, const std::vector<WGPUBindGroupLayoutEntry>& entries,
                                  std::string_view label) {
  WGPUBindGroupLayoutDescriptor descriptor{};
  descriptor.label = to_view(label);
  descriptor.entryCount = entries.size();
  descriptor.entries = entries.data();
  return wgpu::BindGroupLayout(wgpuDeviceCreateBindGroupLayout(device, &descriptor));
}

}  // namespace

ComputePipeline::ComputePipeline(std::shared_ptr<DeviceContext> device, std::string_view wgsl,
                                 ShaderInterface interface, PipelineTimings* timings)
    : device_(std::move(device)), interface_(std::move(interface)) {
  device_->check_alive();
  check_limits(interface_, *device_);
  WGPUDevice dev = device_->device();
  std::lock_guard lock(device_->scope_mutex());

  auto start = Clock::now();
  {
    ErrorScope scope(*device_);
    WGPUShaderSourceWGSL source{};
    source.chain.sType = WGPUSType_ShaderSourceWGSL;
    source.code = to_view(wgsl);
    WGPUShaderModuleDescriptor descriptor{};
    descriptor.nextInChain = &source.chain;
    module_ = wgpu::ShaderModule(wgpuDeviceCreateShaderModule(dev, &descriptor));
    scope.check("the GPU compiler rejected the WGSL");
  }
  if (timings) timings->shader_ms = ms_since(start);

  start = Clock::now();
  ErrorScope scope(*device_);
  std::vector<WGPUBindGroupLayoutEntry> entries;
  for (const auto& b : interface_.bindings) entries.push_back(layout_entry(b.binding, binding_type(b.kind)));
  buffers_layout_ = make_layout(dev, entries, "vyre buffers");
  std::vector<WGPUBindGroupLayout> layouts{buffers_layout_.get()};
  // Group 1 holds what vyre binds itself: the lengths uniform and the loop guard.
  std::vector<WGPUBindGroupLayoutEntry> own;
  if (interface_.uniform_slots() != 0)
    own.push_back(layout_entry(ShaderInterface::kLengthsBinding, WGPUBufferBindingType_Uniform));
  if (interface_.loop_guard) own.push_back(layout_entry(ShaderInterface::kLoopGuardBinding, WGPUBufferBindingType_Storage));
  if (!own.empty()) {
    lengths_layout_ = make_layout(dev, own, "vyre lengths and loop guard");
    layouts.push_back(lengths_layout_.get());
  }
  WGPUPipelineLayoutDescriptor layout{};
  layout.bindGroupLayoutCount = layouts.size();
  layout.bindGroupLayouts = layouts.data();
  layout_ = wgpu::PipelineLayout(wgpuDeviceCreatePipelineLayout(dev, &layout));

  WGPUComputePipelineDescriptor descriptor{};
  descriptor.label = to_view("vyre");
  descriptor.layout = layout_.get();
  descriptor.compute.module = module_.get();
  descriptor.compute.entryPoint = to_view(ShaderInterface::kEntryPoint);
  pipeline_ = wgpu::ComputePipeline(wgpuDeviceCreateComputePipeline(dev, &descriptor));
  scope.check("the GPU rejected the compute pipeline");
  if (timings) timings->pipeline_ms = ms_since(start);
}

}  // namespace vyre::gpu
