#include "gpu/adapter_selection.hpp"

#include <algorithm>
#include <cctype>

#include <dlfcn.h>

#include "gpu/fingerprint.hpp"
#include "vyre/error.hpp"

namespace vyre::gpu {
namespace {

std::string backend_name(WGPUBackendType type) {
  switch (type) {
    case WGPUBackendType_Vulkan: return "vulkan";
    case WGPUBackendType_OpenGL:
    case WGPUBackendType_OpenGLES: return "gl";
    case WGPUBackendType_Metal: return "metal";
    case WGPUBackendType_D3D12: return "dx12";
    case WGPUBackendType_D3D11: return "dx11";
    case WGPUBackendType_WebGPU: return "webgpu";
    case WGPUBackendType_Null: return "null";
    default: return "unknown";
  }
}

std::string adapter_type_name(WGPUAdapterType type) {
  switch (type) {
    case WGPUAdapterType_DiscreteGPU: return "discrete";
    case WGPUAdapterType_IntegratedGPU: return "integrated";
    case WGPUAdapterType_CPU: return "cpu";
    default: return "unknown";
  }
}

// Lower is better.
int preference(const std::string& type) {
  if (type == "discrete") return 0;
  if (type == "integrated") return 1;
  if (type == "cpu") return 2;
  return 3;
}

AdapterInfo describe(WGPUAdapter adapter, uint32_t index) {
  WGPUAdapterInfo raw{};
  AdapterInfo info;
  info.index = index;
  if (wgpuAdapterGetInfo(adapter, &raw) == WGPUStatus_Success) {
    info.name = from_view(raw.device);
    info.vendor = from_view(raw.vendor);
    info.driver = from_view(raw.description);
    info.backend = backend_name(raw.backendType);
    info.type = adapter_type_name(raw.adapterType);
    info.vendor_id = raw.vendorID;
    info.device_id = raw.deviceID;
    wgpuAdapterInfoFreeMembers(raw);
  } else {
    info.backend = info.type = "unknown";
  }
  info.fingerprint = adapter_fingerprint(info);
  return info;
}

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool vulkan_loader_present() {
  void* loader = dlopen("libvulkan.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (loader == nullptr) return false;
  dlclose(loader);
  return true;
}

std::string install_hint(const BackendChoice& backends) {
  if (backends.name == "metal") return "Metal exists only on macOS; choose another backend (WGPU_BACKEND=vulkan).";
  if (backends.name == "dx12") return "DirectX 12 exists only on Windows; choose another backend (WGPU_BACKEND=vulkan).";
  if (backends.name == "gl")
    return "Install OpenGL/EGL drivers: `apt install libegl1 libgl1-mesa-dri` gives llvmpipe, a CPU device; or "
           "your GPU vendor's driver.";
  // wgpu-native loads the Vulkan loader at run time, so a missing one shows
  // only as no adapter: say which of the two parts is missing.
  if (!vulkan_loader_present())
    return "The Vulkan loader (libvulkan.so.1) is not installed: `apt install libvulkan1 mesa-vulkan-drivers` "
           "(Debian, Ubuntu; `dnf install vulkan-loader mesa-vulkan-drivers` on Fedora) gives it with lavapipe, a "
           "CPU Vulkan device; or install your GPU vendor's driver.";
  return "The Vulkan loader is installed but no Vulkan driver is: `apt install mesa-vulkan-drivers` gives lavapipe, "
         "a CPU Vulkan device; or install your GPU vendor's driver.";
}

std::string list_adapters(const std::vector<FoundAdapter>& adapters) {
  std::string s;
  for (const auto& a : adapters)
    s += "\n  [" + std::to_string(a.info.index) + "] " + a.info.name + " (" + a.info.backend + ", " + a.info.type + ")";
  return s;
}

std::optional<uint32_t> parse_index(const std::string& s) {
  if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }))
    return std::nullopt;
  return static_cast<uint32_t>(std::stoul(s));
}

}  // namespace

std::vector<FoundAdapter> find_adapters(const BackendChoice& backends) {
  WGPUInstance instance = shared_instance(backends.mask);
  // Without XDG_RUNTIME_DIR, libwayland prints a harmless error line here
  // (docs/gpu.md); stderr is the process's, never redirected by the library.
  std::vector<WGPUAdapter> raw;
  raw.resize(wgpuInstanceEnumerateAdapters(instance, nullptr, nullptr));
  raw.resize(wgpuInstanceEnumerateAdapters(instance, nullptr, raw.data()));
  std::vector<FoundAdapter> found;
  found.reserve(raw.size());
  for (WGPUAdapter a : raw) {
    wgpu::Adapter owned(a);
    AdapterInfo info = describe(a, static_cast<uint32_t>(found.size()));
    found.push_back({std::move(owned), std::move(info)});
  }
  return found;
}

size_t select_adapter(const std::vector<FoundAdapter>& adapters, const BackendChoice& backends,
                      const std::optional<std::string>& requested, const std::optional<std::string>& from_environment) {
  if (adapters.empty())
    throw Error(ErrorKind::no_adapter, "no GPU adapter found (backend: " + backends.name + "). " +
                                           install_hint(backends) + " `vyre devices` lists what is visible.");

  std::string wanted, source;
  if (requested && !requested->empty()) {
    wanted = *requested;
    source = "BackendOptions::adapter";
  } else if (from_environment && !from_environment->empty()) {
    wanted = *from_environment;
    source = "VYRE_WGPU_ADAPTER";
  }

  if (wanted.empty()) {
    auto best = std::min_element(adapters.begin(), adapters.end(), [](const FoundAdapter& a, const FoundAdapter& b) {
      return preference(a.info.type) < preference(b.info.type);
    });
    return static_cast<size_t>(best - adapters.begin());
  }
  if (auto index = parse_index(wanted); index && *index < adapters.size()) return *index;
  // Digits that are no index may still be part of a name ("3090").
  const std::string needle = lowercase(wanted);
  for (size_t i = 0; i < adapters.size(); ++i)
    if (lowercase(adapters[i].info.name).find(needle) != std::string::npos) return i;
  throw Error(ErrorKind::no_adapter, "no GPU adapter matches " + source + "='" + wanted +
                                         "' (an index or part of a name); visible adapters (backend: " +
                                         backends.name + "):" + list_adapters(adapters));
}

std::vector<AdapterInfo> enumerate_adapters(const BackendOptions& options) {
  std::vector<AdapterInfo> infos;
  const BackendChoice backends = choose_backends(options.backend, BackendOptions::from_environment().backend);
  for (auto& found : find_adapters(backends)) infos.push_back(std::move(found.info));
  return infos;
}

AdapterInfo chosen_adapter(const BackendOptions& options) {
  const BackendOptions environment = BackendOptions::from_environment();
  const BackendChoice backends = choose_backends(options.backend, environment.backend);
  std::vector<FoundAdapter> adapters = find_adapters(backends);
  return std::move(adapters[select_adapter(adapters, backends, options.adapter, environment.adapter)].info);
}

}  // namespace vyre::gpu
