#include "reference/element_memory.hpp"

#include <algorithm>

namespace vyre::reference {

void fill_slots(ScalarType t, std::span<const uint8_t> bytes, std::vector<Slot>& slots) {
  const uint32_t size = element_bytes(t);
  const size_t n = std::min(slots.size(), bytes.size() / size);
  for (size_t i = 0; i < n; ++i) {
    Slot raw = 0;
    for (uint32_t k = 0; k < size; ++k) raw |= Slot{bytes[i * size + k]} << (8 * k);
    slots[i] = raw;
  }
}

std::vector<uint8_t> slot_bytes(ScalarType t, const std::vector<Slot>& slots) {
  const uint32_t size = element_bytes(t);
  std::vector<uint8_t> bytes(slots.size() * size);
  for (size_t i = 0; i < slots.size(); ++i)
    for (uint32_t k = 0; k < size; ++k) bytes[i * size + k] = static_cast<uint8_t>(slots[i] >> (8 * k));
  return bytes;
}

}  // namespace vyre::reference
