#include "gpu/gpu_timer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "gpu/device.hpp"
#include "gpu/kept_forever.hpp"
#include "vyre/error.hpp"

namespace vyre::gpu {

void GpuTimer::reserve(DeviceContext& device, uint32_t passes) {
  if (passes <= capacity_ && queries_) return;
  const uint32_t capacity = std::max<uint32_t>(passes, 8);
  WGPUQuerySetDescriptor descriptor{};
  descriptor.type = WGPUQueryType_Timestamp;
  descriptor.count = 2 * capacity;
  queries_ = wgpu::QuerySet(wgpuDeviceCreateQuerySet(device.device(), &descriptor));
  const uint64_t bytes = uint64_t{2} * capacity * sizeof(uint64_t);
  resolved_ = device.create_buffer(bytes, WGPUBufferUsage_QueryResolve | WGPUBufferUsage_CopySrc);
  readback_ = device.create_buffer(bytes, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst);
  capacity_ = capacity;
}

WGPUPassTimestampWrites GpuTimer::writes(uint32_t pass) const {
  WGPUPassTimestampWrites writes{};
  writes.querySet = queries_.get();
  writes.beginningOfPassWriteIndex = 2 * pass;
  writes.endOfPassWriteIndex = 2 * pass + 1;
  return writes;
}

void GpuTimer::encode_resolve(WGPUCommandEncoder encoder, uint32_t passes) {
  if (passes == 0) return;
  wgpuCommandEncoderResolveQuerySet(encoder, queries_.get(), 0, 2 * passes, resolved_.get(), 0);
  wgpuCommandEncoderCopyBufferToBuffer(encoder, resolved_.get(), 0, readback_.get(), 0,
                                       uint64_t{2} * passes * sizeof(uint64_t));
}

uint64_t GpuTimer::read(DeviceContext& device, uint32_t passes) {
  if (passes == 0) return 0;
  const uint64_t bytes = uint64_t{2} * passes * sizeof(uint64_t);
  tracker_->begin(1);
  tracker_->request(readback_.get(), bytes);
  device.poll_until([&] { return tracker_->done(); });
  if (!tracker_->ok(0)) throw Error(ErrorKind::gpu, "reading the GPU timestamps back failed: " + tracker_->error());
  std::vector<uint64_t> ticks(size_t{2} * passes);
  std::memcpy(ticks.data(), wgpuBufferGetConstMappedRange(readback_.get(), 0, bytes), bytes);
  wgpuBufferUnmap(readback_.get());
  const uint64_t first = ticks.front(), last = ticks.back();
  if (last < first) return 0;
  const double period = wgpuQueueGetTimestampPeriod(device.queue());  // nanoseconds a tick
  return static_cast<uint64_t>(std::llround(static_cast<double>(last - first) * period));
}

void GpuTimer::abandon() {
  if (!tracker_->done()) {
    keep_forever(std::move(tracker_));
    tracker_ = std::make_unique<MapTracker>();
  }
  queries_ = wgpu::QuerySet();
  resolved_ = wgpu::Buffer();
  readback_ = wgpu::Buffer();
  capacity_ = 0;
}

}  // namespace vyre::gpu
