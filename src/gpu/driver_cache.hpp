// The library's side of vyre/driver_cache.hpp: what a Backend does about
// the driver's pipeline cache once it knows its adapter (at its start it
// calls place_driver_cache, whose first call in the process acts).
#pragma once

#include <string>

#include "vyre/driver_cache.hpp"

namespace vyre::gpu {

// Once a Backend knows its adapter's full fingerprint: records which folder
// this adapter selection resolves to, for the next start, and marks a
// pending folder with the fingerprint so that the next start files it.
void note_driver_fingerprint(const std::string& fingerprint);

}  // namespace vyre::gpu
