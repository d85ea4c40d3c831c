#include "gpu/fingerprint.hpp"

#include <fmt/format.h>

#include "util/fingerprint_fields.hpp"

namespace vyre::gpu {

std::string adapter_fingerprint(const AdapterInfo& info) {
  return format_fingerprint({
      {"wgpu-native", wgpu_native_version()},
      {"backend", info.backend},
      {"vendor", fmt::format("0x{:x}", info.vendor_id)},
      {"device", fmt::format("0x{:04x}", info.device_id)},
      {"name", info.name},
      {"driver", info.driver},
  });
}

std::string effective_fingerprint(const std::string& real, const std::optional<std::string>& override_value) {
  return override_value && !override_value->empty() ? *override_value : real;
}

}  // namespace vyre::gpu
