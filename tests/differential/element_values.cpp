#include "differential/element_values.hpp"

#include "reference/element_memory.hpp"

namespace vyre::differential {

// The reference interpreter's element memory already speaks bytes and slots;
// these only add the tester's one choice: a generated bool is its lowest bit.
// The generator's types are 32 bits wide or narrower (no f64), so its
// values are 32-bit words; the reference's slots are 64 bits wide.
uint32_t element_value(ScalarType t, uint32_t value) {
  if (t == ScalarType::Bool) return value & 1u;
  return static_cast<uint32_t>(reference::loaded_value(t, reference::stored_bits(t, value)));
}

std::vector<uint8_t> element_bytes_of(ScalarType t, const std::vector<uint32_t>& values) {
  return reference::slot_bytes(t, std::vector<reference::Slot>(values.begin(), values.end()));
}

std::vector<uint32_t> element_values_of(ScalarType t, std::span<const uint8_t> bytes) {
  std::vector<reference::Slot> slots(bytes.size() / element_bytes(t));
  reference::fill_slots(t, bytes, slots);
  std::vector<uint32_t> values(slots.size());
  // A bool byte other than 0 or 1 is shown as it is, not as true.
  for (size_t i = 0; i < slots.size(); ++i)
    values[i] = static_cast<uint32_t>(t == ScalarType::Bool ? slots[i] : reference::loaded_value(t, slots[i]));
  return values;
}

}  // namespace vyre::differential
