// Buffer values from a JSON array of a parsed document (run files): numbers
// keep their source text, so an f32 is rounded once, from the decimal.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/json_document.hpp"
#include "vyre/program.hpp"

namespace vyre {

// A JSON array of numbers (exact source text is used) or value strings.
std::vector<uint8_t> values_from_json(ScalarType type, const json_detail::Value& array, const std::string& what);

}  // namespace vyre
