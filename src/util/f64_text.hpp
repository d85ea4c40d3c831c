// f64 values as text that reads back to the same bits: the shortest decimal
// that rounds to the value, and "nan", "inf", "-inf" for the rest.
#pragma once

#include <string>
#include <string_view>

#include "util/f32_text.hpp"

namespace vyre {

// Shortest round-trip decimal with a "." or an exponent, or "nan" / "inf" /
// "-inf" (the caller decides whether to quote those).
std::string format_f64(double value);

// Parses a decimal, correctly rounded to the nearest f64 (values too small
// round to zero or a subnormal), or one of "nan", "inf", "-inf". A finite
// decimal beyond the f64 range is `overflow`.
F32ParseError parse_f64(std::string_view text, double& out);

}  // namespace vyre
