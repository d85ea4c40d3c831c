// GPU timestamps around a submission's compute passes (BackendOptions::
// gpu_timestamps): a timestamp at the start and at the end of every pass,
// resolved into a buffer after the last and read back after the wait, so a
// submission's GPU time runs from its first pass's start to its last pass's
// end (what CUDA events around the same work measure).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "gpu/handles.hpp"
#include "gpu/map_tracker.hpp"

namespace vyre::gpu {

class DeviceContext;

class GpuTimer {
 public:
  // One submission's timing at a time: held from encoding to read().
  std::mutex& mutex() { return mutex_; }
  // Before encoding a submission of at most `passes` compute passes.
  void reserve(DeviceContext& device, uint32_t passes);
  // The timestamp writes of the submission's pass `pass` (0, 1, ...).
  WGPUPassTimestampWrites writes(uint32_t pass) const;
  // After its last pass: resolves the `passes` passes' timestamps and copies
  // them to the buffer read() maps.
  void encode_resolve(WGPUCommandEncoder encoder, uint32_t passes);
  // After the submission's wait: nanoseconds from the first pass's start to
  // the last pass's end (0 when the device gave them in the wrong order).
  uint64_t read(DeviceContext& device, uint32_t passes);
  // After a failure between reserve() and read(): a map still to come
  // keeps its tracker, and the buffers are made again next time.
  void abandon();

 private:
  std::mutex mutex_;
  uint32_t capacity_ = 0;  // passes
  wgpu::QuerySet queries_;
  wgpu::Buffer resolved_;  // QueryResolve | CopySrc
  wgpu::Buffer readback_;  // MapRead | CopyDst
  std::unique_ptr<MapTracker> tracker_ = std::make_unique<MapTracker>();
};

}  // namespace vyre::gpu
