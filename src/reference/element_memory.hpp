// The interpreter holds one 64-bit slot per element whatever the element
// type, as it holds every value (ir/scalar_ops.hpp). A slot holds the
// element's raw storage bits (the low 8, 16, 32 or all 64), so contents go
// in and come out byte for byte and a load extends them as the type says
// (ScalarType, program.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "vyre/program.hpp"

namespace vyre::reference {

using Slot = uint64_t;

// The value a load of a slot of storage type `t` gives.
inline uint64_t loaded_value(ScalarType t, Slot raw) {
  switch (t) {
    case ScalarType::I8: return static_cast<uint32_t>(int32_t{static_cast<int8_t>(raw)});
    case ScalarType::I16: return static_cast<uint32_t>(int32_t{static_cast<int16_t>(raw)});
    case ScalarType::Bool: return raw != 0 ? 1u : 0u;
    default: return raw;
  }
}

// The raw bits a store of `value` into an element of type `t` leaves: the low bits.
inline Slot stored_bits(ScalarType t, uint64_t value) {
  switch (element_bytes(t)) {
    case 1: return value & 0xffu;
    case 2: return value & 0xffffu;
    case 4: return value & 0xffffffffu;
    default: return value;
  }
}

// Little-endian contents (`element_bytes(t)` bytes per element) into slots,
// from the first slot; slots beyond the contents are left as they are.
void fill_slots(ScalarType t, std::span<const uint8_t> bytes, std::vector<Slot>& slots);

// The slots as little-endian contents of `element_bytes(t)` bytes each.
std::vector<uint8_t> slot_bytes(ScalarType t, const std::vector<Slot>& slots);

}  // namespace vyre::reference
