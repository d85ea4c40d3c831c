// The cache key: a versioned, length-prefixed hash of every input that
// shapes the WGSL text, then of that "spec" hash with the backend fingerprint.
#include <string>

#include "aot/entry/hashing.hpp"
#include "vyre/aot.hpp"
#include "vyre/lower.hpp"
#include "vyre/version.hpp"
#include "vyre/wire.hpp"

namespace vyre::aot {
namespace {
// Domain tags keep these hashes apart from every other SHA-256 in vyre.
constexpr std::string_view kSpecDomain = "vyre-aot-spec";
constexpr std::string_view kKeyDomain = "vyre-aot-key";
}  // namespace

std::string KeyParts::spec_hash() const {
  return KeyEncoder()
      .text(kSpecDomain)
      .u32(kCacheVersion)
      .text(program_digest)
      .text(shaping)
      .u32(lowering_version)
      .text(vyre_version)
      .sha256_hex();
}

std::string KeyParts::key() const { return cache_key(spec_hash(), fingerprint); }

std::string cache_key(std::string_view spec_hash, std::string_view fingerprint) {
  return KeyEncoder().text(kKeyDomain).u32(kCacheVersion).text(spec_hash).text(fingerprint).sha256_hex();
}

bool is_valid_key(std::string_view key) {
  if (key.size() != 64) return false;
  for (char c : key)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

KeyParts key_parts(const CheckedProgram& program, std::string_view fingerprint, const ShaderOptions& options) {
  KeyParts parts;
  parts.program_digest = digest(program.program()).hex();
  parts.shaping = shaping_signature(program, options);
  parts.lowering_version = kLoweringVersion;
  parts.vyre_version = kVersion;
  parts.fingerprint = std::string(fingerprint);
  return parts;
}

bool is_current_version(const KeyParts& parts) {
  if (parts.vyre_version != kVersion) return false;
  const uint32_t current = is_tuning_record(parts) ? kTuningRecordFormat
                           : is_shape_record(parts) ? kShapeRecordFormat
                                                    : kLoweringVersion;
  return parts.lowering_version == current;
}

}  // namespace vyre::aot
