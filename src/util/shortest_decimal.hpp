// The shortest decimal that reads back to a float's bits, f32's and f64's
// alike (util/f32_text, util/f64_text).
#pragma once

#include <charconv>
#include <cmath>
#include <string>

namespace vyre {

// The shortest round-trip decimal with a "." or an exponent ("-0" would read
// back as the integer 0, losing the sign, and readers should see a float
// either way), or "nan" / "inf" / "-inf".
template <class Float>
std::string shortest_decimal(Float value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value);
  std::string out(buf, res.ptr);
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

}  // namespace vyre
