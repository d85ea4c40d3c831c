#include "aot/hashing.hpp"

#include <openssl/evp.h>

#include <array>

#include "vyre/error.hpp"

namespace vyre::aot {

std::string sha256_hex(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1 || length != 32)
    throw Error(ErrorKind::io, "SHA-256 failed in OpenSSL; the OpenSSL installation may be broken");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(64, '0');
  for (unsigned i = 0; i < 32; ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  return hex;
}

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
