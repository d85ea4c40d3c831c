// SHA-256 (vyre::sha256) as lowercase hex, and the length-prefixed encoding the key
// derivation hashes (docs/cache.md, "Key derivation").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace vyre::aot {

std::string sha256_hex(std::string_view bytes);

// Appends fields in the key derivation's encoding: strings as an unsigned
// 64-bit little-endian byte count then the bytes; integers as 32-bit
// little-endian. Lengths make the encoding unambiguous ("ab"+"c" != "a"+"bc").
class KeyEncoder {
 public:
  KeyEncoder& text(std::string_view value);
  KeyEncoder& u32(uint32_t value);
  const std::string& bytes() const { return bytes_; }
  std::string sha256_hex() const { return aot::sha256_hex(bytes_); }

 private:
  std::string bytes_;
};

}  // namespace vyre::aot
