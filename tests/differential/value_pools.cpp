#include "differential/value_pools.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

namespace vyre::differential {
namespace {

constexpr std::array<uint32_t, 26> kIntegerEdges{
    0u,          1u,          2u,          3u,          7u,          31u,         32u,         33u,          63u,
    64u,         255u,        0xffffu,     0x10000u,    0x7fffffffu, 0x80000000u, 0x80000001u, 0xffffffffu, 0xfffffffeu,
    0xfffffff0u, 0x55555555u, 0xaaaaaaaau, 100u,        1000u,       0x7ffffffeu, 0xffffffe0u, 17u};

constexpr std::array<uint32_t, 22> kSpecialF32{
    0x00000000u,  // 0
    0x80000000u,  // -0
    0x3f800000u,  // 1
    0xbf800000u,  // -1
    0x7fc00000u,  // NaN
    0xffc00000u,  // -NaN
    0x7f800001u,  // signalling NaN
    0x7fffffffu,  // NaN, all payload bits
    0x7f800000u,  // inf
    0xff800000u,  // -inf
    0x00000001u,  // smallest subnormal
    0x80000001u,  // its negation
    0x007fffffu,  // largest subnormal
    0x807fffffu,  //
    0x00800000u,  // smallest normal
    0x80800000u,  //
    0x7f7fffffu,  // largest finite
    0xff7fffffu,  //
    0x4f800000u,  // 2^32
    0xcf000000u,  // -2^31
    0x4effffffu,  // just below 2^31
    0x3effffffu,  // just below 0.5
};

bool allowed(uint32_t bits, const SpecialF32& kind) {
  const bool nan_inf = (bits & 0x7f800000u) == 0x7f800000u;
  const bool subnormal = (bits & 0x7f800000u) == 0 && (bits & 0x007fffffu) != 0;
  return (kind.nan_inf || !nan_inf) && (kind.subnormal || !subnormal);
}

}  // namespace

uint32_t pick_integer_bits(ChoiceStream& choices, ScalarType type) {
  switch (choices.weighted({6, 2, 2})) {
    case 0: return kIntegerEdges[choices.below(kIntegerEdges.size())];
    case 1: {
      // Small values around zero, negative ones for i32.
      const uint32_t v = choices.below(16);
      return type == ScalarType::I32 && choices.coin(50) ? 0u - v : v;
    }
    default: {
      const uint32_t hi = choices.below(0x10000), lo = choices.below(0x10000);
      return (hi << 16) | lo;
    }
  }
}

uint32_t pick_special_f32_bits(ChoiceStream& choices, const SpecialF32& kind) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    uint32_t bits = 0;
    switch (choices.weighted({6, 2, 2})) {
      case 0: bits = kSpecialF32[choices.below(kSpecialF32.size())]; break;
      case 1: bits = std::bit_cast<uint32_t>(static_cast<float>(static_cast<int>(choices.below(200)) - 100) / 8.0f); break;
      default: {
        const uint32_t hi = choices.below(0x10000), lo = choices.below(0x10000);
        bits = (hi << 16) | lo;
        break;
      }
    }
    if (allowed(bits, kind)) return bits;
  }
  return 0;
}

float pick_exact_f32(ChoiceStream& choices, const ExactRange& range) {
  const double steps = std::floor((range.hi - range.lo) / range.quantum);
  double v = 0;
  switch (choices.weighted({2, 3, 5})) {
    case 0:  // nearest zero
      v = range.contains_zero() ? 0.0 : (range.lo > 0 ? range.lo : range.hi);
      break;
    case 1: {  // an edge of the range, or one quantum inside it
      const double edges[] = {range.lo, range.hi, range.lo + range.quantum, range.hi - range.quantum,
                              range.contains_zero() ? range.quantum : range.lo};
      v = edges[choices.below(5)];
      break;
    }
    default: {
      const double k = steps <= 0 ? 0 : std::floor(static_cast<double>(choices.below(1u << 30)) / (1u << 30) * (steps + 1));
      v = range.lo + std::min(k, steps) * range.quantum;
      break;
    }
  }
  v = std::clamp(v, range.lo, range.hi);
  // -0 is in every range that holds 0.
  if (v == 0 && range.contains_zero() && choices.coin(20)) return -0.0f;
  return static_cast<float>(v);
}

uint32_t pick_normal_f32_bits(ChoiceStream& choices) {
  const uint32_t sign = choices.coin(50) ? 0x80000000u : 0u;
  const uint32_t exponent = 1 + choices.below(254);
  const uint32_t high = choices.below(0x800), low = choices.below(0x1000);
  const uint32_t mantissa = (high << 12) | low;
  return sign | (exponent << 23) | mantissa;
}

}  // namespace vyre::differential
