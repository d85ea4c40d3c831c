// Buffer contents as the differential tester holds them: one 32-bit value
// per element, whatever the element's storage type. A narrow element's value
// is what a load of it gives (u8 and u16 zero-extended, i8 and i16
// sign-extended, bool 0 or 1), so run files and reports show numbers a
// person reads; its bytes are the value's low bits.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "vyre/program.hpp"

namespace vyre::differential {

// The value an element of type `t` holds when given `value`: its low bits,
// extended as a load extends them (bool: 0 or 1 by the lowest bit).
uint32_t element_value(ScalarType t, uint32_t value);

// Contents as little-endian bytes of `element_bytes(t)` each, and back.
std::vector<uint8_t> element_bytes_of(ScalarType t, const std::vector<uint32_t>& values);
std::vector<uint32_t> element_values_of(ScalarType t, std::span<const uint8_t> bytes);

}  // namespace vyre::differential
