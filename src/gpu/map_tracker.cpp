#include "gpu/map_tracker.hpp"

#include "gpu/callback_handover.hpp"

#include "vyre/error.hpp"

namespace vyre::gpu {

void MapTracker::begin(size_t count) {
  if (count > capacity_) {
    state_ = std::make_unique<std::atomic<uint8_t>[]>(count);
    capacity_ = count;
  }
  count_ = 0;
  pending_ = 0;
  std::lock_guard lock(mutex_);
  error_.clear();
}

size_t MapTracker::request(WGPUBuffer staging, uint64_t bytes) {
  if (count_ == capacity_) throw Error(ErrorKind::gpu, "internal: more buffers mapped than the submission planned");
  const size_t index = count_++;
  state_[index] = kPending;
  ++pending_;
  WGPUBufferMapCallbackInfo callback{};
  callback.mode = WGPUCallbackMode_AllowSpontaneous;
  callback.callback = on_mapped;
  callback.userdata1 = this;
  callback.userdata2 = &state_[index];
  handed_to_callback(this);
  wgpuBufferMapAsync(staging, WGPUMapMode_Read, 0, bytes, callback);
  return index;
}

std::string MapTracker::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

void MapTracker::on_mapped(WGPUMapAsyncStatus status, WGPUStringView message, void* tracker, void* state) {
  received_in_callback(tracker);
  auto* self = static_cast<MapTracker*>(tracker);
  auto* slot = static_cast<std::atomic<uint8_t>*>(state);
  if (status == WGPUMapAsyncStatus_Success) {
    slot->store(kMapped);
  } else {
    slot->store(kFailed);
    std::lock_guard lock(self->mutex_);
    if (self->error_.empty()) self->error_ = from_view(message);
  }
  --self->pending_;
}

}  // namespace vyre::gpu
