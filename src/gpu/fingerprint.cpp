#include "gpu/fingerprint.hpp"

#include <fmt/format.h>

#include <cstdlib>

namespace vyre::gpu {

std::string adapter_fingerprint(const AdapterInfo& info) {
  return fmt::format("wgpu-native={};backend={};vendor=0x{:x};device=0x{:04x};name={};driver={}",
                     wgpu_native_version(), info.backend, info.vendor_id, info.device_id, info.name, info.driver);
}

std::string effective_fingerprint(const std::string& real) {
  const char* override_value = std::getenv("VYRE_BACKEND_FINGERPRINT_OVERRIDE");
  return override_value != nullptr && *override_value != '\0' ? std::string(override_value) : real;
}

}  // namespace vyre::gpu
