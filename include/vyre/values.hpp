// Buffer contents as people write and read them (`vyre run`, run files):
// comma-separated values or JSON arrays in, one JSON array per buffer out.
// f32 values print so that they read back to the same bits ("nan", "inf"
// and "-inf" as strings).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vyre/export.hpp"
#include "vyre/program.hpp"

namespace vyre {

// "1,2,0x10" for u32; "-1,2" for i32; "1.5,nan,-inf" for f32; "255,0x7f" for
// u8 (a value the element holds: 256 is refused, never cut); "true,0" for
// bool (written back as true and false). Throws
// Error(invalid_input) naming `what` and the bad value.
VYRE_API std::vector<uint8_t> parse_values(ScalarType type, std::string_view csv, const std::string& what);

// A JSON array, as text.
VYRE_API std::string format_values(ScalarType type, const std::vector<uint8_t>& bytes);

// Equal values; for f32 equal bits, any NaN matching any NaN, or (with a
// tolerance) |a - b| <= abs + rel * |b|.
VYRE_API bool values_equal(ScalarType type, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, double abs = 0,
                  double rel = 0);

// The index of the first element where `a` and `b` differ by the rule of
// values_equal (the shorter length when only the lengths differ); nullopt
// when they are equal.
VYRE_API std::optional<size_t> first_difference(ScalarType type, const std::vector<uint8_t>& a,
                                                const std::vector<uint8_t>& b, double abs = 0, double rel = 0);

}  // namespace vyre
