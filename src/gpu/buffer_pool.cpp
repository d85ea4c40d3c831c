#include "gpu/buffer_pool.hpp"

#include <iterator>
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
  if (!buffer || device_->lost() || buffer.capacity > kMaxFreeBytes) return;  // released here
  std::vector<GpuBuffer> evicted;  // released after the lock
  std::lock_guard lock(mutex_);
  // The buffer given back last is the likeliest to be asked for next: make
  // room for it by releasing those given back longest ago. Keeping the first
  // ones instead let a run of calls of other sizes (tuning's candidates, other
  // primitives) fill the bounds, and then every buffer given back was
  // released and created again by the next call.
  size_t drop = 0;
  while (drop < list.buffers.size() &&
         (list.buffers.size() - drop >= kMaxFree || list.bytes + buffer.capacity > kMaxFreeBytes)) {
    list.bytes -= list.buffers[drop].capacity;
    ++drop;
  }
  const auto kept = list.buffers.begin() + static_cast<std::ptrdiff_t>(drop);
  evicted.assign(std::make_move_iterator(list.buffers.begin()), std::make_move_iterator(kept));
  list.buffers.erase(list.buffers.begin(), kept);
  list.bytes += buffer.capacity;
  list.buffers.push_back(std::move(buffer));
}

}  // namespace vyre::gpu
