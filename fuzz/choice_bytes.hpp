// The fuzzer's bytes as the program generator's decisions, and back (for
// the seed corpus). One byte is one decision, so that libFuzzer's byte
// mutations change one choice each; 0xFF introduces a decision of four
// bytes (little-endian), for the few choices wider than a byte (literals).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vyre::fuzz {

inline std::vector<uint32_t> decisions_from_bytes(const uint8_t* data, size_t size) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < size;) {
    if (data[i] != 0xFF) {
      out.push_back(data[i++]);
      continue;
    }
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) v |= uint32_t{i + 1 + k < size ? data[i + 1 + k] : uint8_t{0}} << (8 * k);
    out.push_back(v);
    i += 5;
  }
  return out;
}

inline std::vector<uint8_t> bytes_from_decisions(const std::vector<uint32_t>& decisions) {
  std::vector<uint8_t> out;
  for (uint32_t v : decisions) {
    if (v < 0xFF) {
      out.push_back(static_cast<uint8_t>(v));
      continue;
    }
    out.push_back(0xFF);
    for (int k = 0; k < 4; ++k) out.push_back(static_cast<uint8_t>(v >> (8 * k)));
  }
  return out;
}

}  // namespace vyre::fuzz
