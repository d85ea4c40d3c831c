// f16 values as text that reads back to the same bits: the shortest decimal
// that rounds to the value (at most 5 significant digits), and "nan", "inf",
// "-inf" for the rest.
#pragma once

#include <string>
#include <string_view>

#include "util/f32_text.hpp"
#include "vyre/half.hpp"

namespace vyre {

std::string format_f16(half value);

// Parses a decimal, rounded to the nearest double and then to the nearest
// f16 (a decimal of more significant digits than a double holds may round
// differently from its exact value at a halfway point), or one of "nan",
// "inf", "-inf". A finite decimal that rounds beyond 65504 is `overflow`.
F32ParseError parse_f16(std::string_view text, half& out);

}  // namespace vyre
