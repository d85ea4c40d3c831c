// The process-wide WebGPU instance (one per set of backends), created on first
// use and kept for the life of the process, and the choice of backends.
#pragma once

#include <optional>
#include <string>

#include "gpu/handles.hpp"

namespace vyre::gpu {

struct BackendChoice {
  WGPUInstanceBackend mask = WGPUInstanceBackend_Primary;
  std::string name;    // "primary", "vulkan", "gl", "metal", "dx12" or "all"
  std::string source;  // where the choice came from, for messages
};

// The requested backend name (BackendOptions::backend), else the
// environment's (BackendOptions::from_environment()), else "primary". GL is
// not the default: probing it through EGL prints noise on machines without
// it. Throws Error(no_adapter) for a name that is not a backend.
BackendChoice choose_backends(const std::optional<std::string>& requested,
                              const std::optional<std::string>& from_environment);

// Never null; thread-safe. Routes wgpu-native's own log into vyre's logger.
WGPUInstance shared_instance(WGPUInstanceBackend backends);

}  // namespace vyre::gpu
