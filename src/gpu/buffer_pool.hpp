// GPU buffers for outputs kept on the device (DeviceBuffer) and staging
// buffers for reading them back. A buffer whose DeviceBuffer is dropped comes
// back here and serves the next output that fits, so that chained dispatches
// of the same sizes create no buffers.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "gpu/device.hpp"
#include "gpu/handles.hpp"

namespace vyre::gpu {

// A buffer with an identity: bind groups are cached by id, since a released
// buffer's address may be reused by the next one.
struct GpuBuffer {
  wgpu::Buffer buffer;
  uint64_t capacity = 0;
  uint64_t id = 0;

  explicit operator bool() const { return static_cast<bool>(buffer); }
};

// Usage of a buffer that any binding, upload or readback may touch.
inline constexpr WGPUBufferUsage kStorageUsage =
    WGPUBufferUsage_Storage | WGPUBufferUsage_CopyDst | WGPUBufferUsage_CopySrc;
inline constexpr WGPUBufferUsage kStagingUsage = WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst;

class BufferPool {
 public:
  explicit BufferPool(std::shared_ptr<DeviceContext> device) : device_(std::move(device)) {}

  // A free buffer of at least `bytes` (and at most twice that), else a new one
  // (under an error scope: never call with the device's scope_mutex held).
  GpuBuffer acquire(uint64_t bytes) { return take(storage_, bytes, kStorageUsage); }
  void give_back(GpuBuffer buffer) { keep(storage_, std::move(buffer)); }
  // Mappable for reading, the destination of copies.
  GpuBuffer acquire_staging(uint64_t bytes) { return take(staging_, bytes, kStagingUsage); }
  void give_back_staging(GpuBuffer buffer) { keep(staging_, std::move(buffer)); }

  // The free storage buffers kept now, and their bytes.
  struct Held {
    size_t buffers = 0;
    uint64_t bytes = 0;
  };
  Held held() {
    std::lock_guard lock(mutex_);
    return {storage_.buffers.size(), storage_.bytes};
  }
  static constexpr size_t max_free_buffers() { return kMaxFree; }
  static constexpr uint64_t max_free_bytes() { return kMaxFreeBytes; }

  DeviceContext& device() const { return *device_; }
  const std::shared_ptr<DeviceContext>& shared_device() const { return device_; }

 private:
  // Free buffers kept at most, per kind; beyond them, those given back
  // longest ago go back to the driver (a buffer larger than the byte bound
  // alone is never kept).
  static constexpr size_t kMaxFree = 64;
  static constexpr uint64_t kMaxFreeBytes = 2ull << 30;

  struct FreeList {
    std::vector<GpuBuffer> buffers;
    uint64_t bytes = 0;
  };
  GpuBuffer take(FreeList& list, uint64_t bytes, WGPUBufferUsage usage);
  void keep(FreeList& list, GpuBuffer buffer);

  std::shared_ptr<DeviceContext> device_;
  std::mutex mutex_;
  FreeList storage_;
  FreeList staging_;
};

}  // namespace vyre::gpu
