// One owning wrapper for every WebGPU handle type: move-only, released once.
#pragma once

#include <webgpu.h>
#include <wgpu.h>

#include <string_view>
#include <utility>

#include "gpu/kept_forever.hpp"

// The wrappers live in their own namespace so that wgpu::Buffer never reads as
// a program's vyre::Buffer.
namespace vyre::gpu::wgpu {

template <class T, void (*Release)(T)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T raw) : raw_(raw) {}
  ~Handle() { reset(); }
  Handle(Handle&& other) noexcept : raw_(std::exchange(other.raw_, nullptr)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      raw_ = std::exchange(other.raw_, nullptr);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  T get() const { return raw_; }
  explicit operator bool() const { return raw_ != nullptr; }
  void reset() {
    if (raw_ != nullptr) Release(std::exchange(raw_, nullptr));
  }
  // Gives the handle up without releasing it (a device whose work cannot be
  // waited for: releasing it would wait), kept forever.
  void abandon() { keep_forever(static_cast<void*>(std::exchange(raw_, nullptr))); }

 private:
  T raw_ = nullptr;
};

using Instance = Handle<WGPUInstance, wgpuInstanceRelease>;
using Adapter = Handle<WGPUAdapter, wgpuAdapterRelease>;
using Device = Handle<WGPUDevice, wgpuDeviceRelease>;
using Queue = Handle<WGPUQueue, wgpuQueueRelease>;
using Buffer = Handle<WGPUBuffer, wgpuBufferRelease>;
using ShaderModule = Handle<WGPUShaderModule, wgpuShaderModuleRelease>;
using BindGroupLayout = Handle<WGPUBindGroupLayout, wgpuBindGroupLayoutRelease>;
using BindGroup = Handle<WGPUBindGroup, wgpuBindGroupRelease>;
using PipelineLayout = Handle<WGPUPipelineLayout, wgpuPipelineLayoutRelease>;
using ComputePipeline = Handle<WGPUComputePipeline, wgpuComputePipelineRelease>;
using CommandEncoder = Handle<WGPUCommandEncoder, wgpuCommandEncoderRelease>;
using ComputePassEncoder = Handle<WGPUComputePassEncoder, wgpuComputePassEncoderRelease>;
using CommandBuffer = Handle<WGPUCommandBuffer, wgpuCommandBufferRelease>;
using QuerySet = Handle<WGPUQuerySet, wgpuQuerySetRelease>;

}  // namespace vyre::gpu::wgpu

namespace vyre::gpu {

// Views of text across the C API.
inline WGPUStringView to_view(std::string_view s) { return WGPUStringView{s.data(), s.size()}; }
inline std::string_view from_view(WGPUStringView v) {
  if (v.data == nullptr) return {};
  return v.length == WGPU_STRLEN ? std::string_view(v.data) : std::string_view(v.data, v.length);
}

}  // namespace vyre::gpu
