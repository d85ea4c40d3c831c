#include "gpu/backend_cache.hpp"

#include "gpu/backend_state.hpp"

namespace vyre::gpu {

aot::Cache& cache_of(Backend& backend) { return *state_of(backend)->cache; }

}  // namespace vyre::gpu
