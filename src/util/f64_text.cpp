#include "util/f64_text.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "util/shortest_decimal.hpp"

namespace vyre {

std::string format_f64(double value) { return shortest_decimal(value); }

F32ParseError parse_f64(std::string_view text, double& out) {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  if (text == "nan") return out = std::numeric_limits<double>::quiet_NaN(), F32ParseError::none;
  if (text == "inf") return out = kInfinity, F32ParseError::none;
  if (text == "-inf") return out = -kInfinity, F32ParseError::none;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  double value = 0;
  auto res = std::from_chars(first, last, value, std::chars_format::general);
  if (res.ec == std::errc() && res.ptr == last) {
    out = value;
    return F32ParseError::none;
  }
  if (res.ec != std::errc::result_out_of_range || res.ptr != last) return F32ParseError::syntax;
  // Out of range: strtod tells overflow (an infinity) from underflow (zero
  // or the nearest subnormal, which is the value wanted).
  const std::string s(text);
  const double d = std::strtod(s.c_str(), nullptr);
  if (std::isinf(d)) return F32ParseError::overflow;
  out = d;
  return F32ParseError::none;
}

}  // namespace vyre
