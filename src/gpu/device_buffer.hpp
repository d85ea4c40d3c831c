// What a DeviceBuffer holds: a pooled GPU buffer of one device, its size and
// element type, and whether the Batch that writes it has run yet.
#pragma once

#include <atomic>
#include <memory>

#include "gpu/buffer_pool.hpp"
#include "gpu/state_key.hpp"
#include "vyre/gpu.hpp"

namespace vyre::gpu {

using detail::DeviceBufferState;

struct detail::DeviceBufferState {
  std::shared_ptr<BufferPool> pool;
  GpuBuffer buffer;
  uint64_t bytes = 0;  // the contents' size (the buffer may be larger)
  ScalarType type = ScalarType::U32;
  std::atomic<bool> pending{false};  // written by a Batch that has not run
  std::string origin;                // "output 'y' of 'saxpy'", for messages

  ~DeviceBufferState() { pool->give_back(std::move(buffer)); }
};

// A new DeviceBuffer for `bytes` of `type` elements from the pool.
std::shared_ptr<DeviceBuffer> make_device_buffer(const std::shared_ptr<BufferPool>& pool, uint64_t bytes,
                                                 ScalarType type, std::string origin);

// The DeviceBuffer behind `contents` if it lives on `device` and can be bound
// now; else Error(invalid_input) or Error(device_lost) naming `binding_name`.
DeviceBuffer& bindable_device_buffer(DeviceContents& contents, const DeviceContext& device,
                                     const std::string& binding_name, bool allow_pending);

}  // namespace vyre::gpu
