// The backend fingerprint: the part of the AOT cache key that names the GPU
// stack a shader was produced for, so that a cache shared across machines
// never hands one driver's entry to another.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "vyre/gpu.hpp"

namespace vyre::gpu {

// wgpu-native=<version>;backend=<name>;vendor=0x<hex>;device=0x<hex, 4 digits
// min>;name=<device name>;driver=<driver description>, written as
// fingerprint fields (util/fingerprint_fields.hpp).
std::string adapter_fingerprint(const AdapterInfo& info);

// What of the adapter shapes the WGSL text vyre lowers for it, as
// fingerprint fields: the `fingerprint` component of WGSL cache keys, so that
// a driver update, or another machine with the same traits, keeps every
// entry. "target=wgsl" for every adapter: the text depends on the adapter
// only through its driver workarounds (driver_defects.hpp), which are
// ShaderOptions fields and so in the key's shaping signature.
std::string shaping_fingerprint(const AdapterInfo& adapter);

// The adapter a full fingerprint describes, as far as it names it (name,
// driver, backend, vendor and device ids); nullopt for a string not in the
// fingerprint form (an override may be any string).
std::optional<AdapterInfo> adapter_from_fingerprint(std::string_view fingerprint);

// `override_value` when set and non-empty (BackendOptions::fingerprint_override,
// else $VYRE_BACKEND_FINGERPRINT_OVERRIDE), else `real`.
std::string effective_fingerprint(const std::string& real, const std::optional<std::string>& override_value);

}  // namespace vyre::gpu
