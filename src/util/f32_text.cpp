#include "util/f32_text.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include "util/shortest_decimal.hpp"

namespace vyre {

bool f32_needs_word(float value) { return !std::isfinite(value); }

std::string format_f32(float value) { return shortest_decimal(value); }

F32ParseError parse_f32(std::string_view text, float& out) {
  if (text == "nan") {
    out = std::numeric_limits<float>::quiet_NaN();
    return F32ParseError::none;
  }
  if (text == "inf" || text == "-inf") {
    out = text[0] == '-' ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
    return F32ParseError::none;
  }
  const char* first = text.data();
  const char* last = text.data() + text.size();
  // from_chars accepts no leading '+'; JSON has none either.
  float value = 0;
  auto res = std::from_chars(first, last, value, std::chars_format::general);
  if (res.ec == std::errc() && res.ptr == last) {
    out = value;
    return F32ParseError::none;
  }
  if (res.ec == std::errc::result_out_of_range && res.ptr == last) {
    // Too large or too small for f32: tell them apart by the magnitude.
    double d = 0;
    auto dres = std::from_chars(first, last, d, std::chars_format::general);
    const bool tiny = (dres.ec == std::errc() && std::fabs(d) < 1.0) ||
                      (dres.ec == std::errc::result_out_of_range && text.find_first_of("eE") != std::string_view::npos &&
                       text.find("e-") != std::string_view::npos) ||
                      (dres.ec == std::errc::result_out_of_range && text.find("E-") != std::string_view::npos);
    if (tiny) {
      out = text.front() == '-' ? -0.0f : 0.0f;
      return F32ParseError::none;
    }
    return F32ParseError::overflow;
  }
  return F32ParseError::syntax;
}

}  // namespace vyre
