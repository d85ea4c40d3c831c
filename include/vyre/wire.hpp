// The canonical wire format (docs/wire-format.md) and the program digest.
//
// The wire bytes are the program's identity: buffers in canonical order, no
// label, floats canonicalized. Equal meaning gives equal bytes; the digest
// is SHA-256 of those bytes.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vyre/export.hpp"
#include "vyre/program.hpp"

namespace vyre {

// The newest wire version (docs/wire-format.md): a program is encoded in
// the version of its format (format_version), so version-1 bytes never change.
inline constexpr uint32_t kWireVersion = 4;

struct VYRE_API WireLimits {
  size_t max_bytes = 16u << 20;
  size_t max_depth = 256;        // nesting of statements and expressions (never above the format's 200)
  size_t max_nodes = 1u << 20;   // statements plus expressions
  size_t max_string = 256;       // identifier length
  size_t max_buffers = 1024;
};

struct VYRE_API Digest {
  std::array<uint8_t, 32> bytes{};
  std::string hex() const;
  friend bool operator==(const Digest&, const Digest&) = default;
};

VYRE_API std::vector<uint8_t> to_wire(const Program& program);

// Throws Error(invalid_wire) naming the offset and what is wrong. The result
// is structurally well formed; call validate() for the format's rules.
VYRE_API Program from_wire(std::span<const uint8_t> bytes, const WireLimits& limits = {});

VYRE_API Digest digest(const Program& program);
VYRE_API Digest sha256(std::span<const uint8_t> bytes);
VYRE_API Digest sha256(std::string_view text);

}  // namespace vyre
