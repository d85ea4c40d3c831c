#include <openssl/evp.h>

#include "vyre/error.hpp"
#include "vyre/wire.hpp"

namespace vyre {

std::string Digest::hex() const {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(bytes.size() * 2, '0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    out[2 * i] = kHex[bytes[i] >> 4];
    out[2 * i + 1] = kHex[bytes[i] & 15];
  }
  return out;
}

Digest sha256(std::span<const uint8_t> data) {
  Digest d;
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), d.bytes.data(), &len, EVP_sha256(), nullptr) != 1 || len != d.bytes.size())
    throw Error(ErrorKind::io, "SHA-256 failed in OpenSSL");
  return d;
}

Digest sha256(std::string_view text) {
  return sha256(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

Digest digest(const Program& program) { return sha256(to_wire(program)); }

}  // namespace vyre
