#include "gpu/instance.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <mutex>

#include "util/log.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"

namespace vyre::gpu {
namespace {

struct NamedBackends {
  const char* name;
  WGPUInstanceBackend mask;
};

constexpr std::array kBackends{
    NamedBackends{"primary", WGPUInstanceBackend_Primary}, NamedBackends{"vulkan", WGPUInstanceBackend_Vulkan},
    NamedBackends{"gl", WGPUInstanceBackend_GL},           NamedBackends{"metal", WGPUInstanceBackend_Metal},
    NamedBackends{"dx12", WGPUInstanceBackend_DX12},       NamedBackends{"all", WGPUInstanceBackend_All},
};

bool same_name(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](unsigned char x, unsigned char y) { return std::tolower(x) == std::tolower(y); });
}

void forward_wgpu_log(WGPULogLevel level, WGPUStringView message, void*) {
  if (level <= WGPULogLevel_Warn) log::debug("wgpu: {}", from_view(message));
  else log::trace("wgpu: {}", from_view(message));
}

// wgpu-native logs nothing unless vyre's own level asks for detail.
void route_wgpu_log() {
  static std::once_flag once;
  std::call_once(once, [] {
    const auto level = log::get().level();
    wgpuSetLogCallback(forward_wgpu_log, nullptr);
    wgpuSetLogLevel(level <= spdlog::level::trace   ? WGPULogLevel_Info
                    : level <= spdlog::level::debug ? WGPULogLevel_Warn
                                                    : WGPULogLevel_Off);
  });
}

}  // namespace

BackendChoice choose_backends(const std::optional<std::string>& requested,
                              const std::optional<std::string>& from_environment) {
  BackendChoice choice{WGPUInstanceBackend_Primary, "primary", "default"};
  std::string name;
  if (requested && !requested->empty()) {
    name = *requested;
    choice.source = "BackendOptions::backend";
  } else if (from_environment && !from_environment->empty()) {
    name = *from_environment;
    choice.source = "WGPU_BACKEND";
  } else {
    return choice;
  }
  for (const auto& b : kBackends) {
    if (same_name(name, b.name)) {
      choice.mask = b.mask;
      choice.name = b.name;
      return choice;
    }
  }
  throw Error(ErrorKind::no_adapter, "unknown GPU backend '" + name + "' (from " + choice.source +
                                         "); use one of primary, vulkan, gl, metal, dx12, all");
}

WGPUInstance shared_instance(WGPUInstanceBackend backends) {
  static std::mutex mutex;
  // Process-wide and never released: adapters and devices may outlive any
  // owner we could give it, and the OS reclaims it at exit.
  static auto* instances = new std::map<WGPUInstanceBackend, WGPUInstance>();
  std::lock_guard lock(mutex);
  if (auto it = instances->find(backends); it != instances->end()) return it->second;

  route_wgpu_log();
  WGPUInstanceExtras extras{};
  extras.chain.sType = static_cast<WGPUSType>(WGPUSType_InstanceExtras);
  extras.backends = backends;
  extras.flags = WGPUInstanceFlag_Default;
  WGPUInstanceDescriptor descriptor{};
  descriptor.nextInChain = &extras.chain;
  WGPUInstance instance = wgpuCreateInstance(&descriptor);
  if (instance == nullptr) throw Error(ErrorKind::no_adapter, "wgpu-native could not create a WebGPU instance");
  instances->emplace(backends, instance);
  return instance;
}

std::string wgpu_native_version() {
  const uint32_t v = wgpuGetVersion();  // one byte each: major.minor.patch.build
  return std::to_string(v >> 24) + "." + std::to_string((v >> 16) & 0xff) + "." + std::to_string((v >> 8) & 0xff) +
         "." + std::to_string(v & 0xff);
}

}  // namespace vyre::gpu
