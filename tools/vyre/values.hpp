// Buffer contents as people write and read them: comma-separated values or
// JSON arrays in, one JSON array per buffer out. f32 values print so that
// they read back to the same bits ("nan", "inf" and "-inf" as strings).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/json_document.hpp"
#include "vyre/program.hpp"

namespace vyre::cli {

// "1,2,0x10" for u32; "-1,2" for i32; "1.5,nan,-inf" for f32. Throws
// Error(invalid_input) naming `what` and the bad value.
std::vector<uint8_t> parse_values(ScalarType type, std::string_view csv, const std::string& what);
// A JSON array of numbers (exact source text is used) or value strings.
std::vector<uint8_t> values_from_json(ScalarType type, const json_detail::Value& array, const std::string& what);

// A JSON array, as text.
std::string format_values(ScalarType type, const std::vector<uint8_t>& bytes);

// Equal values; for f32 equal bits, any NaN matching any NaN.
bool values_equal(ScalarType type, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b);

}  // namespace vyre::cli
