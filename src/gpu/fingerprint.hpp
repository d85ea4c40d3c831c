// The backend fingerprint: the part of the AOT cache key that names the GPU
// stack a shader was produced for, so that a cache shared across machines
// never hands one driver's entry to another.
#pragma once

#include <string>

#include "vyre/gpu.hpp"

namespace vyre::gpu {

// wgpu-native=<version>;backend=<name>;vendor=0x<hex>;device=0x<hex, 4 digits
// min>;name=<device name>;driver=<driver description>
std::string adapter_fingerprint(const AdapterInfo& info);

// $VYRE_BACKEND_FINGERPRINT_OVERRIDE when set and non-empty, else `real`.
std::string effective_fingerprint(const std::string& real);

}  // namespace vyre::gpu
