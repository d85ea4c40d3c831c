// Shared constants of the wire format (docs/wire-format.md).
#pragma once

#include <array>
#include <cstdint>

namespace vyre::wire {

inline constexpr std::array<uint8_t, 4> kMagic{'V', 'Y', 'R', 'W'};
// The one NaN the wire format holds: every f32 NaN literal is written as this.
inline constexpr uint32_t kCanonicalNaN = 0x7fc00000u;

// Statement tags are StmtOp's values, and one more: a loop with a step
// (format version 4), so a loop without one keeps its version-1 bytes. Tag 11
// is the next statement, a private array.
inline constexpr uint8_t kSteppedLoopTag = 12;

inline uint32_t canonical_f32_bits(uint32_t bits) {
  const bool nan = (bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0;
  return nan ? kCanonicalNaN : bits;
}

// An f16 literal's 16 bits, every NaN as the one quiet NaN 0x7e00.
inline constexpr uint32_t kCanonicalF16NaN = 0x7e00u;
inline uint32_t canonical_f16_bits(uint32_t bits) {
  const bool nan = (bits & 0x7c00u) == 0x7c00u && (bits & 0x03ffu) != 0;
  return nan ? kCanonicalF16NaN : bits;
}

// An f64 literal's 64 bits, every NaN as the one quiet NaN.
inline constexpr uint64_t kCanonicalF64NaN = 0x7ff8000000000000ull;
inline uint64_t canonical_f64_bits(uint64_t bits) {
  const bool nan = (bits & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (bits & 0x000fffffffffffffull) != 0;
  return nan ? kCanonicalF64NaN : bits;
}

}  // namespace vyre::wire
