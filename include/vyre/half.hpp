// vyre::half: an IEEE 754 binary16 value as its 16 bits, the element type of
// an f16 buffer (format version 4) in C++. Conversions round to nearest,
// ties to even, in software, so the reference interpreter and the host agree
// bit for bit on every compiler (clang 14 has no _Float16 on x86-64).
#pragma once

#include <cstdint>

#include "vyre/export.hpp"

namespace vyre {

struct half {
  uint16_t bits = 0;
  friend bool operator==(half, half) = default;
};

// The binary16 nearest to `value` (ties to even): overflow gives an
// infinity, values below half the smallest subnormal give a signed zero,
// and a NaN gives the quiet NaN of its sign.
VYRE_API half to_half(double value);
// The value `h` holds, exactly.
VYRE_API double to_double(half h);

}  // namespace vyre
