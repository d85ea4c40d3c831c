// The AOT cache a Backend compiles through, for records of the library's own
// that are kept beside its entries (vyre::lib's shape records), without
// opening the rest of the Backend's state (nor webgpu.h) to their module.
#pragma once

#include "vyre/aot.hpp"
#include "vyre/gpu.hpp"

namespace vyre::gpu {

aot::Cache& cache_of(Backend& backend);

}  // namespace vyre::gpu
