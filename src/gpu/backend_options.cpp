// BackendOptions::from_environment: the one place the GPU layer reads its
// settings from the environment (docs/configuration.md).
#include "sys/environment.hpp"
#include "vyre/gpu.hpp"

namespace vyre::gpu {

BackendOptions BackendOptions::from_environment() {
  BackendOptions options;
  options.backend = sys::environment_value("WGPU_BACKEND");
  options.adapter = sys::environment_value("VYRE_WGPU_ADAPTER");
  options.fingerprint_override = sys::environment_value("VYRE_BACKEND_FINGERPRINT_OVERRIDE");
  return options;
}

}  // namespace vyre::gpu
