#include "gpu/word_aligned.hpp"

#include <array>
#include <cstring>

namespace vyre::gpu {

void write_word_padded(WGPUQueue queue, WGPUBuffer buffer, uint64_t offset, std::span<const uint8_t> bytes) {
  const uint64_t whole = bytes.size() / 4 * 4;
  if (whole > 0) wgpuQueueWriteBuffer(queue, buffer, offset, bytes.data(), whole);
  if (whole == bytes.size()) return;
  std::array<uint8_t, 4> tail{};  // the queue copies it before returning
  std::memcpy(tail.data(), bytes.data() + whole, bytes.size() - whole);
  wgpuQueueWriteBuffer(queue, buffer, offset + whole, tail.data(), tail.size());
}

}  // namespace vyre::gpu
