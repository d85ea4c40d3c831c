// WebGPU moves buffer data in whole 4-byte words: queue writes, buffer
// copies and mapped ranges take sizes that are multiples of 4. Contents of
// narrow elements (a u8 buffer of 5 elements is 5 bytes) are carried in
// their word-rounded size, the tail word padded with zeros.
#pragma once

#include <cstdint>
#include <span>

#include "gpu/handles.hpp"

namespace vyre::gpu {

inline uint64_t word_rounded(uint64_t bytes) { return (bytes + 3) / 4 * 4; }

// Writes `bytes` at `offset` (a multiple of 4) of `buffer`, and zeros up to
// the next multiple of 4.
void write_word_padded(WGPUQueue queue, WGPUBuffer buffer, uint64_t offset, std::span<const uint8_t> bytes);

}  // namespace vyre::gpu
