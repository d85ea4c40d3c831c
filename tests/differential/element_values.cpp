#include "differential/element_values.hpp"

#include <cstring>

namespace vyre::differential {

uint32_t element_value(ScalarType t, uint32_t value) {
  switch (t) {
    case ScalarType::U8: return value & 0xffu;
    case ScalarType::U16: return value & 0xffffu;
    case ScalarType::I8: return static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(value)));
    case ScalarType::I16: return static_cast<uint32_t>(static_cast<int32_t>(static_cast<int16_t>(value)));
    case ScalarType::Bool: return value & 1u;
    default: return value;
  }
}

std::vector<uint8_t> element_bytes_of(ScalarType t, const std::vector<uint32_t>& values) {
  const uint32_t size = element_bytes(t);
  std::vector<uint8_t> bytes(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i)
    for (uint32_t k = 0; k < size; ++k) bytes[i * size + k] = static_cast<uint8_t>(values[i] >> (8 * k));
  return bytes;
}

std::vector<uint32_t> element_values_of(ScalarType t, std::span<const uint8_t> bytes) {
  const uint32_t size = element_bytes(t);
  std::vector<uint32_t> values(bytes.size() / size);
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t raw = 0;
    for (uint32_t k = 0; k < size; ++k) raw |= uint32_t{bytes[i * size + k]} << (8 * k);
    // A bool byte other than 0 or 1 is shown as it is, not as true.
    values[i] = t == ScalarType::Bool ? raw : element_value(t, raw);
  }
  return values;
}

}  // namespace vyre::differential
