// f32 values as text that reads back to the same bits: the shortest decimal
// that rounds to the value, and "nan", "inf", "-inf" for the rest.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace vyre {

// Shortest round-trip decimal, or "nan" / "inf" / "-inf" (the caller decides
// whether to quote those).
std::string format_f32(float value);

// True for the values format_f32 spells as words.
bool f32_needs_word(float value);

enum class F32ParseError { none, syntax, overflow };

// Parses a decimal (correctly rounded to the nearest f32; values too small
// for f32 round to zero or a subnormal) or one of "nan", "inf", "-inf".
// A finite decimal beyond the f32 range is `overflow`.
F32ParseError parse_f32(std::string_view text, float& out);

}  // namespace vyre
