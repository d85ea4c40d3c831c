// A compute pipeline built from WGSL and the ShaderInterface the lowering
// gives with it. Bind group layouts are explicit, never "auto": group 0 holds
// every buffer binding, group 1 the lengths uniform, so a binding the shader
// happens not to use still matches what the dispatcher binds.
#pragma once

#include <memory>
#include <string_view>

#include "gpu/device.hpp"
#include "gpu/handles.hpp"
#include "vyre/lower.hpp"

namespace vyre::gpu {

struct PipelineTimings {
  double shader_ms = 0;
  double pipeline_ms = 0;
};

class ComputePipeline {
 public:
  // Throws Error(limit_exceeded) for a workgroup size or bindings beyond the
  // device's limits, Error(gpu) carrying the compiler's message for WGSL it
  // rejects, Error(device_lost) once the device is gone.
  ComputePipeline(std::shared_ptr<DeviceContext> device, std::string_view wgsl, ShaderInterface interface,
                  PipelineTimings* timings = nullptr);

  DeviceContext& device() const { return *device_; }
  const std::shared_ptr<DeviceContext>& shared_device() const { return device_; }
  const ShaderInterface& interface() const { return interface_; }
  WGPUComputePipeline get() const { return pipeline_.get(); }
  WGPUBindGroupLayout buffers_layout() const { return buffers_layout_.get(); }
  // Group 1: the lengths uniform and the loop guard; null with neither.
  WGPUBindGroupLayout lengths_layout() const { return lengths_layout_.get(); }

 private:
  std::shared_ptr<DeviceContext> device_;
  ShaderInterface interface_;
  wgpu::BindGroupLayout buffers_layout_;
  wgpu::BindGroupLayout lengths_layout_;
  wgpu::PipelineLayout layout_;
  wgpu::ShaderModule module_;
  wgpu::ComputePipeline pipeline_;
};

}  // namespace vyre::gpu
