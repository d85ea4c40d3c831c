// The library's side of vyre/driver_cache.hpp: what a Backend does about
// the driver's pipeline cache when it starts and once it knows its adapter.
#pragma once

#include <string>

#include "vyre/driver_cache.hpp"

namespace vyre::gpu {

// Before a Backend's first instance: places the driver cache when no one
// has. Safe with other threads running: the variables are published as a
// new environment array (sys/environment_publish.hpp).
void place_driver_cache_at_first_backend(const aot::CacheOptions& options);

// Once a Backend knows its adapter's full fingerprint: records which folder
// this adapter selection resolves to, for the next start, and marks a
// pending folder with the fingerprint so that the next start files it.
void note_driver_fingerprint(const std::string& fingerprint);

}  // namespace vyre::gpu
