#include "util/f16_text.hpp"

#include <cmath>
#include <cstdio>
#include <cctype>
#include <cstdlib>
#include <limits>

namespace vyre {

std::string format_f16(half value) {
  const double v = to_double(value);
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {
    (void)std::snprintf(text, sizeof text, "%.*g", digits, v);  // 17 digits and an exponent fit
    if (to_half(std::strtod(text, nullptr)) == value) break;
  }
  std::string out = text;
  // Read as a number, never as an integer-looking literal of another type.
  if (out.find_first_of(".eEn") == std::string::npos) out += ".0";
  return out;
}

F32ParseError parse_f16(std::string_view text, half& out) {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  if (text == "nan") return out = to_half(std::numeric_limits<double>::quiet_NaN()), F32ParseError::none;
  if (text == "inf") return out = to_half(kInfinity), F32ParseError::none;
  if (text == "-inf") return out = to_half(-kInfinity), F32ParseError::none;
  const std::string s(text);
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '+' || s[0] == '.'))
    return F32ParseError::syntax;
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return F32ParseError::syntax;
  const half h = to_half(d);
  if (std::isinf(to_double(h))) return F32ParseError::overflow;
  out = h;
  return F32ParseError::none;
}

}  // namespace vyre
