// The mapAsync requests of one submission and what their callbacks said.
// Reused from submission to submission, so that a warm readback allocates
// nothing. wgpu-native cannot tell a buffer's map state, so each callback
// records its own.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "gpu/handles.hpp"

namespace vyre::gpu {

class MapTracker {
 public:
  // Starts a submission that will map up to `count` buffers. Call only when
  // no callback of the last one is still to come (done()).
  void begin(size_t count);
  // Maps `bytes` of `staging` for reading; returns the request's index.
  size_t request(WGPUBuffer staging, uint64_t bytes);
  bool done() const { return pending_.load() == 0; }
  bool ok(size_t index) const { return state_[index].load() == kMapped; }
  std::string error() const;

 private:
  static constexpr uint8_t kPending = 0, kMapped = 1, kFailed = 2;
  static void on_mapped(WGPUMapAsyncStatus status, WGPUStringView message, void* tracker, void* state);

  std::unique_ptr<std::atomic<uint8_t>[]> state_;
  size_t capacity_ = 0;
  size_t count_ = 0;
  std::atomic<int> pending_{0};
  mutable std::mutex mutex_;
  std::string error_;
};

}  // namespace vyre::gpu
