#include "lower/wgsl_literal.hpp"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "util/concat.hpp"
#include "util/f16_text.hpp"
#include "util/f64_text.hpp"

namespace vyre::wgsl {

std::string u32_literal(uint32_t v) { return std::to_string(v) + "u"; }

std::string i32_literal(int32_t v) {
  // -2147483648i would negate 2147483648i, which overflows i32.
  if (v == INT32_MIN) return "i32(-2147483648)";
  if (v < 0) return concat("(", std::to_string(v), "i)");
  return std::to_string(v) + "i";
}

std::string f32_literal(uint32_t bits, HelperSet& helpers) {
  const float f = std::bit_cast<float>(bits);
  if (!std::isnormal(f) && !(f == 0.0f && !std::signbit(f))) {
    char hex[16];
    (void)std::snprintf(hex, sizeof hex, "0x%08xu", bits);  // 11 characters fit
    return helpers.use("vyre_f32_bits") + "(" + hex + ")";
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, std::fabs(f));
  std::string text(buf, res.ptr);
  // A WGSL front end may read the decimal into a double first; keep the
  // decimal only if that path lands on the same f32, and only if it does not
  // lie past the largest finite f32 (the shortest decimal of FLT_MAX,
  // 3.4028235e38, does): WGSL refuses such a literal at shader creation.
  double d = 0;
  std::from_chars(text.data(), text.data() + text.size(), d);
  if (static_cast<float>(d) != std::fabs(f) || d > static_cast<double>(std::numeric_limits<float>::max())) {
    res = std::to_chars(buf, buf + sizeof buf, std::fabs(f), std::chars_format::hex);
    text = "0x" + std::string(buf, res.ptr);
  }
  text += "f";
  return std::signbit(f) ? "(-" + text + ")" : text;
}

std::string f16_literal(uint32_t bits, HelperSet& helpers) {
  const half h{static_cast<uint16_t>(bits)};
  const double v = to_double(h);
  // Normal values and +0 as decimals (any decimal nearest to the value
  // names it); the rest, whose spelling a front end may not keep, by bits.
  const bool normal = std::isnormal(v) || (v == 0.0 && !std::signbit(v));
  if (!normal) {
    char hex[16];
    (void)std::snprintf(hex, sizeof hex, "0x%04xu", bits);
    return helpers.use("vyre_f16_bits") + "(" + hex + ")";
  }
  const std::string text = format_f16(half{static_cast<uint16_t>(bits & 0x7fffu)}) + "h";
  return std::signbit(v) ? "(-" + text + ")" : text;
}

std::string f64_literal(uint64_t bits, HelperSet& helpers) {
  const double v = std::bit_cast<double>(bits);
  if (std::isnan(v) || std::isinf(v) || (v == 0.0 && std::signbit(v))) {
    const uint32_t f32_bits = std::isnan(v) ? 0x7fc00000u : std::bit_cast<uint32_t>(static_cast<float>(v));
    char hex[16];
    (void)std::snprintf(hex, sizeof hex, "0x%08xu", f32_bits);
    return "f64(" + helpers.use("vyre_f32_bits") + "(" + hex + "))";
  }
  const std::string text = format_f64(std::fabs(v)) + "lf";
  return std::signbit(v) ? "(-" + text + ")" : text;
}

}  // namespace vyre::wgsl
