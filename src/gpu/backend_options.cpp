// BackendOptions::from_environment: the one place the GPU layer reads its
// settings from the environment (docs/configuration.md).
#include <cstdlib>

#include "vyre/gpu.hpp"

namespace vyre::gpu {
namespace {

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

}  // namespace

BackendOptions BackendOptions::from_environment() {
  BackendOptions options;
  options.backend = env("WGPU_BACKEND");
  options.adapter = env("VYRE_WGPU_ADAPTER");
  options.fingerprint_override = env("VYRE_BACKEND_FINGERPRINT_OVERRIDE");
  return options;
}

}  // namespace vyre::gpu
