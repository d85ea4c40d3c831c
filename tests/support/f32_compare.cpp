#include "support/f32_compare.hpp"

#include <cstdlib>
#include <limits>

namespace vyre::test {

bool is_nan_bits(uint32_t bits) { return (bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0; }

bool is_subnormal_bits(uint32_t bits) { return (bits & 0x7f800000u) == 0 && (bits & 0x007fffffu) != 0; }

uint32_t flush_subnormal(uint32_t bits) { return is_subnormal_bits(bits) ? (bits & 0x80000000u) : bits; }

bool same_f32(uint32_t a, uint32_t b) { return a == b || (is_nan_bits(a) && is_nan_bits(b)); }

int64_t ulp_distance(uint32_t a, uint32_t b) {
  if (is_nan_bits(a) || is_nan_bits(b)) return std::numeric_limits<int64_t>::max();
  // Map the bits onto a line where adjacent floats are adjacent integers.
  auto ordered = [](uint32_t bits) -> int64_t {
    const int64_t magnitude = bits & 0x7fffffffu;
    return (bits & 0x80000000u) ? -magnitude : magnitude;
  };
  return std::llabs(ordered(a) - ordered(b));
}

}  // namespace vyre::test
