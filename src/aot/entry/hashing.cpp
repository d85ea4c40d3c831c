#include "aot/entry/hashing.hpp"

#include "vyre/wire.hpp"

namespace vyre::aot {

std::string sha256_hex(std::string_view bytes) { return sha256(bytes).hex(); }

KeyEncoder& KeyEncoder::text(std::string_view value) {
  uint64_t n = value.size();
  for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  bytes_.append(value);
  return *this;
}

KeyEncoder& KeyEncoder::u32(uint32_t value) {
  for (int i = 0; i < 4; ++i) bytes_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  return *this;
}

}  // namespace vyre::aot
