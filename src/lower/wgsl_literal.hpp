// Spelling literals in WGSL so that the shader holds exactly the program's
// bits, and never anything WGSL would reject at shader creation.
#pragma once

#include <cstdint>
#include <string>

#include "lower/wgsl_helpers.hpp"

namespace vyre::wgsl {

std::string u32_literal(uint32_t v);
std::string i32_literal(int32_t v);
// NaN, infinities, -0.0 and subnormals go through vyre_f32_bits (a runtime
// call); other values are a decimal when it reads back exactly even through
// a double, else a hexadecimal float.
std::string f32_literal(uint32_t bits, HelperSet& helpers);
// An f16 literal from its 16 bits (in the low half of `bits`): `1.5h`, or a
// call of vyre_f16_bits for zeros of sign -, subnormals, infinities and NaN.
std::string f16_literal(uint32_t bits, HelperSet& helpers);
// An f64 literal from its 64 bits: `0.1lf` (naga's suffix; WGSL has no f64
// of its own), subnormals included; -0.0, infinities and NaN, which no
// decimal spells, as the f32 of those bits widened (exact for all three).
std::string f64_literal(uint64_t bits, HelperSet& helpers);

}  // namespace vyre::wgsl
