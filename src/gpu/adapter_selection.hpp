// Finding adapters and choosing one: by index or name from the options or
// the environment (VYRE_WGPU_ADAPTER), else the best kind (discrete first).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpu/handles.hpp"
#include "gpu/instance.hpp"
#include "vyre/gpu.hpp"

namespace vyre::gpu {

struct FoundAdapter {
  wgpu::Adapter adapter;
  AdapterInfo info;
};

// Every adapter of the chosen backends, in enumeration order.
std::vector<FoundAdapter> find_adapters(const BackendChoice& backends);

// The adapter to open. `requested` (BackendOptions::adapter), else
// `from_environment` (VYRE_WGPU_ADAPTER), is an index, else a
// case-insensitive part of the name (the first match); without one:
// discrete, then integrated, then CPU, then unknown, the first found on a tie.
// Throws Error(no_adapter) with what to install or what is visible.
size_t select_adapter(const std::vector<FoundAdapter>& adapters, const BackendChoice& backends,
                      const std::optional<std::string>& requested, const std::optional<std::string>& from_environment);

// The adapter a Backend with `options` would open, described without
// opening a device: no device, so the driver writes nothing (the cache's
// inspection commands name a device's keys this way).
AdapterInfo chosen_adapter(const BackendOptions& options);

}  // namespace vyre::gpu
