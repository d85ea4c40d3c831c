// Buffer values as lines of text, for the files of values (values_file.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vyre/program.hpp"

namespace vyre {

// One value a line, each ending in '\n': spelled as format_values spells it,
// but "nan", "inf" and "-inf" bare and bool as 1 and 0.
std::string format_values_lines(ScalarType type, const std::vector<uint8_t>& bytes);

}  // namespace vyre
