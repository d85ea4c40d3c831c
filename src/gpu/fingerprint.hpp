// The backend fingerprint: the part of the AOT cache key that names the GPU
// stack a shader was produced for, so that a cache shared across machines
// never hands one driver's entry to another.
#pragma once

#include <optional>
#include <string>

#include "vyre/gpu.hpp"

namespace vyre::gpu {

// wgpu-native=<version>;backend=<name>;vendor=0x<hex>;device=0x<hex, 4 digits
// min>;name=<device name>;driver=<driver description>, written as
// fingerprint fields (util/fingerprint_fields.hpp).
std::string adapter_fingerprint(const AdapterInfo& info);

// `override_value` when set and non-empty (BackendOptions::fingerprint_override,
// else $VYRE_BACKEND_FINGERPRINT_OVERRIDE), else `real`.
std::string effective_fingerprint(const std::string& real, const std::optional<std::string>& override_value);

}  // namespace vyre::gpu
