#include "gpu/buffer_pool.hpp"

#include <string>

namespace vyre::gpu {

GpuBuffer BufferPool::take(FreeList& list, uint64_t bytes, WGPUBufferUsage usage) {
  {
    std::lock_guard lock(mutex_);
    auto best = list.buffers.end();
    for (auto it = list.buffers.begin(); it != list.buffers.end(); ++it)
      if (it->capacity >= bytes && it->capacity / 2 <= bytes &&
          (best == list.buffers.end() || it->capacity < best->capacity))
        best = it;
    if (best != list.buffers.end()) {
      GpuBuffer found = std::move(*best);
      list.buffers.erase(best);
      list.bytes -= found.capacity;
      return found;
    }
  }
  GpuBuffer fresh;
  std::lock_guard lock(device_->scope_mutex());
  ErrorScope scope(*device_);
  fresh.buffer = device_->create_buffer(bytes, usage);
  scope.check("creating a GPU buffer of " + std::to_string(bytes) + " bytes failed");
  fresh.capacity = bytes;
  fresh.id = device_->next_buffer_id();
  return fresh;
}

void BufferPool::keep(FreeList& list, GpuBuffer buffer) {
  if (!buffer || device_->lost()) return;
  std::lock_guard lock(mutex_);
  if (list.buffers.size() >= kMaxFree || list.bytes + buffer.capacity > kMaxFreeBytes) return;  // released here
  list.bytes += buffer.capacity;
  list.buffers.push_back(std::move(buffer));
}

}  // namespace vyre::gpu
