#include "shader_compiler.hpp"

#include <memory>
#include <mutex>

#include "gpu/adapter_selection.hpp"
#include "gpu/device.hpp"
#include "gpu/instance.hpp"
#include "vyre/error.hpp"

namespace vyre::fuzz {
namespace {

// VYRE_BACKEND and VYRE_WGPU_ADAPTER pick the adapter as they do for Backend.
std::shared_ptr<gpu::DeviceContext> open_device() {
  const gpu::BackendOptions environment = gpu::BackendOptions::from_environment();
  const gpu::BackendChoice backends = gpu::choose_backends(std::nullopt, environment.backend);
  gpu::shared_instance(backends.mask);
  std::vector<gpu::FoundAdapter> adapters = gpu::find_adapters(backends);
  const size_t chosen = gpu::select_adapter(adapters, backends, std::nullopt, environment.adapter);
  return gpu::DeviceContext::open(std::move(adapters[chosen]));
}

}  // namespace

std::optional<std::string> shader_module_error(std::string_view wgsl) {
  static const std::shared_ptr<gpu::DeviceContext> device = open_device();
  std::lock_guard lock(device->scope_mutex());
  gpu::ErrorScope scope(*device);
  WGPUShaderSourceWGSL source{};
  source.chain.sType = WGPUSType_ShaderSourceWGSL;
  source.code = gpu::to_view(wgsl);
  WGPUShaderModuleDescriptor descriptor{};
  descriptor.nextInChain = &source.chain;
  const gpu::wgpu::ShaderModule module(wgpuDeviceCreateShaderModule(device->device(), &descriptor));
  return scope.pop();
}

}  // namespace vyre::fuzz
