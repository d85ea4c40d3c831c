#include "differential/element_values.hpp"

#include "reference/element_memory.hpp"

namespace vyre::differential {

// The reference interpreter's element memory already speaks bytes and slots;
// these only add the tester's one choice: a generated bool is its lowest bit.
uint32_t element_value(ScalarType t, uint32_t value) {
  if (t == ScalarType::Bool) return value & 1u;
  return reference::loaded_value(t, reference::stored_bits(t, value));
}

std::vector<uint8_t> element_bytes_of(ScalarType t, const std::vector<uint32_t>& values) {
  return reference::slot_bytes(t, values);
}

std::vector<uint32_t> element_values_of(ScalarType t, std::span<const uint8_t> bytes) {
  std::vector<uint32_t> values(bytes.size() / element_bytes(t));
  reference::fill_slots(t, bytes, values);
  // A bool byte other than 0 or 1 is shown as it is, not as true.
  if (t != ScalarType::Bool)
    for (auto& v : values) v = reference::loaded_value(t, v);
  return values;
}

}  // namespace vyre::differential
