#include "gpu/fingerprint.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <string>

#include "gpu/driver_defects.hpp"
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

std::string shaping_fingerprint(const AdapterInfo&) {
  // Every adapter-specific choice of the text is a ShaderOptions field (the
  // driver workarounds), so it is in the shaping signature already, and only
  // where it changes this program's text.
  return format_fingerprint({{"target", "wgsl"}});
}

std::optional<AdapterInfo> adapter_from_fingerprint(std::string_view fingerprint) {
  const auto fields = fingerprint_fields(fingerprint);
  if (!fields) return std::nullopt;
  AdapterInfo info;
  bool named = false;
  for (const auto& [name, value] : *fields) {
    if (name == "name") {
      info.name = value;
      named = true;
    } else if (name == "driver") {
      info.driver = value;
    } else if (name == "backend") {
      info.backend = value;
    } else if (name == "vendor" || name == "device") {
      uint32_t& id = name == "vendor" ? info.vendor_id : info.device_id;
      size_t used = 0;
      try {
        id = static_cast<uint32_t>(std::stoul(value, &used, 16));
      } catch (const std::exception&) {
        return std::nullopt;
      }
      if (used != value.size()) return std::nullopt;
    }
  }
  if (!named) return std::nullopt;
  info.fingerprint = std::string(fingerprint);
  return info;
}

bool is_adapter_fingerprint(std::string_view fingerprint) { return adapter_from_fingerprint(fingerprint).has_value(); }

WgslTarget wgsl_target(const CheckedProgram& program, std::string_view adapter_fingerprint,
                       const ShaderOptions& options) {
  const std::optional<AdapterInfo> adapter = adapter_from_fingerprint(adapter_fingerprint);
  if (!adapter) return {options, aot::key_parts(program, adapter_fingerprint, options)};
  const ShaderOptions shaped = with_driver_workarounds(options, *adapter);
  return {shaped, aot::key_parts(program, shaping_fingerprint(*adapter), shaped)};
}

std::string effective_fingerprint(const std::string& real, const std::optional<std::string>& override_value) {
  return override_value && !override_value->empty() ? *override_value : real;
}

}  // namespace vyre::gpu
