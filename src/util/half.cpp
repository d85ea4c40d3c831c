#include "vyre/half.hpp"

#include <bit>
#include <cmath>
#include <limits>

namespace vyre {

namespace {
constexpr uint16_t kSign = 0x8000, kInfinity = 0x7c00, kQuietNan = 0x7e00;
constexpr int kMantissaBits = 10;
constexpr double kSmallestNormal = 0x1p-14, kSmallestSubnormal = 0x1p-24;
// 65504 is the largest half; 65520, halfway to 2^16, rounds (to even) to infinity.
constexpr double kOverflow = 65520.0;
}  // namespace

half to_half(double value) {
  const uint16_t sign = std::signbit(value) ? kSign : 0;
  if (std::isnan(value)) return {static_cast<uint16_t>(sign | kQuietNan)};
  const double a = std::fabs(value);
  if (a >= kOverflow) return {static_cast<uint16_t>(sign | kInfinity)};
  if (a < kSmallestNormal) {
    // Subnormal: a multiple of 2^-24, rounded (ties to even, the default
    // rounding mode). The scaling by a power of two is exact, and a value
    // that rounds up to 1024 units is the smallest normal, whose bits are 1024.
    return {static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(a / kSmallestSubnormal)))};
  }
  int e = 0;
  const double m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int exponent = e - 1;                // a = (2m) * 2^exponent, 2m in [1, 2)
  auto units = static_cast<uint32_t>(std::nearbyint(std::ldexp(m, kMantissaBits + 1)));  // in [1024, 2048]
  if (units == 2048) {
    units = 1024;
    ++exponent;
  }
  // exponent <= 15 here: a < 65520 rounds to at most 65504.
  return {static_cast<uint16_t>(sign | static_cast<uint16_t>((exponent + 15) << kMantissaBits) | (units - 1024))};
}

double to_double(half h) {
  const bool negative = (h.bits & kSign) != 0;
  const int exponent = (h.bits >> kMantissaBits) & 0x1f;
  const int mantissa = h.bits & 0x3ff;
  double magnitude = 0;
  if (exponent == 0x1f)
    magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (exponent == 0) magnitude = std::ldexp(mantissa, -24);
  else magnitude = std::ldexp(mantissa + 1024, exponent - 25);
  return negative ? -magnitude : magnitude;
}

}  // namespace vyre
