#include "gpu/driver_defects.hpp"

namespace vyre::gpu {

bool stops_long_loops(const AdapterInfo& adapter) { return adapter.name.rfind("llvmpipe", 0) == 0; }

ShaderOptions with_driver_workarounds(ShaderOptions options, const AdapterInfo& adapter) {
  if (stops_long_loops(adapter)) options.loop_guard = true;
  return options;
}

}  // namespace vyre::gpu
