#include "gpu/device_buffer.hpp"

#include <algorithm>
#include <cstring>

#include "gpu/map_tracker.hpp"
#include "gpu/word_aligned.hpp"
#include "vyre/error.hpp"

namespace vyre::gpu {

std::shared_ptr<DeviceBuffer> make_device_buffer(const std::shared_ptr<BufferPool>& pool, uint64_t bytes,
                                                 ScalarType type, std::string origin) {
  auto impl = std::make_unique<DeviceBufferState>();
  impl->pool = pool;
  impl->buffer = pool->acquire(std::max<uint64_t>(word_rounded(bytes), 4));  // WebGPU cannot bind nothing
  impl->bytes = bytes;
  impl->type = type;
  impl->origin = std::move(origin);
  return std::make_shared<DeviceBuffer>(std::move(impl));
}

DeviceBuffer& bindable_device_buffer(DeviceContents& contents, const DeviceContext& device,
                                     const std::string& binding_name, bool allow_pending) {
  auto* buffer = dynamic_cast<DeviceBuffer*>(&contents);
  if (buffer == nullptr)
    throw Error(ErrorKind::invalid_input, "the device contents given for '" + binding_name +
                                              "' are no vyre::gpu::DeviceBuffer; give host contents instead");
  const DeviceBufferState& impl = buffer->state(kStateKey);
  if (&impl.pool->device() != &device) {
    if (impl.pool->device().lost())
      throw Error(ErrorKind::device_lost, "the DeviceBuffer given for '" + binding_name + "' (" + impl.origin +
                                              ") was on a GPU device that was lost; its contents are gone: "
                                              "dispatch again to make it anew");
    throw Error(ErrorKind::invalid_input, "the DeviceBuffer given for '" + binding_name + "' (" + impl.origin +
                                              ") belongs to another Backend's device: read() it and give its "
                                              "contents, or dispatch on the Backend that made it");
  }
  device.check_alive();
  if (!allow_pending && impl.pending.load())
    throw Error(ErrorKind::invalid_input, "the DeviceBuffer given for '" + binding_name + "' (" + impl.origin +
                                              ") is written by a Batch that has not run: run() it first, or "
                                              "record this dispatch in the same Batch");
  return *buffer;
}

// ---- DeviceBuffer ----------------------------------------------------------

DeviceBuffer::DeviceBuffer(std::unique_ptr<DeviceBufferState> state) : impl_(std::move(state)) {}
DeviceBuffer::~DeviceBuffer() = default;

uint64_t DeviceBuffer::size_bytes() const { return impl_->bytes; }
ScalarType DeviceBuffer::type() const { return impl_->type; }

std::vector<uint8_t> DeviceBuffer::read() const {
  std::vector<uint8_t> out(impl_->bytes);
  read_into(out);
  return out;
}

void DeviceBuffer::read_into(std::span<uint8_t> destination) const {
  if (destination.size() != impl_->bytes)
    throw Error(ErrorKind::invalid_input, "reading a DeviceBuffer of " + std::to_string(impl_->bytes) + " bytes (" +
                                              impl_->origin + ") into " + std::to_string(destination.size()) +
                                              " bytes: give exactly its size");
  if (impl_->pending.load())
    throw Error(ErrorKind::invalid_input, "this DeviceBuffer (" + impl_->origin +
                                              ") is written by a Batch that has not run: run() it first");
  BufferPool& pool = *impl_->pool;
  DeviceContext& device = pool.device();
  device.check_alive();
  if (impl_->bytes == 0) return;

  const uint64_t bytes = impl_->bytes;
  const uint64_t words = word_rounded(bytes);  // copies and maps move whole words
  GpuBuffer staging = pool.acquire_staging(words);
  auto tracker = std::make_unique<MapTracker>();
  tracker->begin(1);
  {
    std::lock_guard lock(device.scope_mutex());
    ErrorScope scope(device);
    wgpu::CommandEncoder encoder(wgpuDeviceCreateCommandEncoder(device.device(), nullptr));
    wgpuCommandEncoderCopyBufferToBuffer(encoder.get(), impl_->buffer.buffer.get(), 0, staging.buffer.get(), 0, words);
    const wgpu::CommandBuffer commands(wgpuCommandEncoderFinish(encoder.get(), nullptr));
    scope.check("the GPU rejected reading a DeviceBuffer back");
    device.check_alive();
    device.submit(commands.get());
  }
  tracker->request(staging.buffer.get(), words);
  try {
    device.poll_until([&] { return tracker->done(); });
  } catch (...) {
    if (!tracker->done()) keep_forever(std::move(tracker));  // its callback is still to come and writes there
    throw;
  }
  if (!tracker->ok(0)) throw Error(ErrorKind::gpu, "reading a DeviceBuffer back failed: " + tracker->error());
  const auto* data = static_cast<const uint8_t*>(wgpuBufferGetConstMappedRange(staging.buffer.get(), 0, words));
  if (data != nullptr) std::memcpy(destination.data(), data, bytes);
  wgpuBufferUnmap(staging.buffer.get());
  pool.give_back_staging(std::move(staging));
  if (data == nullptr) throw Error(ErrorKind::gpu, "reading a DeviceBuffer back failed: no mapped range");
}

}  // namespace vyre::gpu
