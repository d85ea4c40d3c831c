#include "gpu/unfilled_buffer.hpp"

#include <algorithm>

#include "gpu/backend_state.hpp"
#include "gpu/device_buffer.hpp"
#include "vyre/error.hpp"

namespace vyre::gpu::detail {

std::shared_ptr<DeviceBuffer> unfilled_buffer(Backend& backend, uint64_t elements, ScalarType type,
                                              std::string origin) {
  const BackendState::Live live = state_of(backend)->live();
  const uint64_t bytes = elements * element_bytes(type);
  // What a dispatch's own output would be refused for (Dispatcher::check_limits),
  // before a buffer the device cannot make is asked for.
  const WGPULimits& limits = live.device->limits();
  const uint64_t limit = std::min<uint64_t>(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
  if (bytes > limit)
    throw Error(ErrorKind::limit_exceeded, origin + " (" + std::to_string(elements) + " " +
                                               std::string(to_string(type)) + " elements) needs " +
                                               std::to_string(bytes) + " bytes; the device's largest storage buffer "
                                               "on '" + live.device->adapter().name + "' is " +
                                               std::to_string(limit) + " bytes. Split the data over several calls.");
  return make_device_buffer(live.pool, bytes, type, std::move(origin));
}

}  // namespace vyre::gpu::detail
