// The ahead-of-time specialization cache: lowered WGSL kept on disk, keyed by
// the program's identity, the text-shaping dispatch policy, the lowering's
// version and the backend fingerprint, so that a second process skips
// lowering. The cache never fails a dispatch: when it cannot read or write it
// lowers the program and warns once. It knows nothing of GPUs: the
// fingerprint is a string it is given.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "vyre/dispatch.hpp"
#include "vyre/program.hpp"

namespace vyre::aot {

// Version of the key derivation and of the entry format.
inline constexpr uint32_t kCacheVersion = 1;

// Everything a cache key is made of, kept apart so that a miss can be
// explained component by component.
struct KeyParts {
  std::string program_digest;  // hex SHA-256 of the canonical wire bytes
  std::string shaping;         // lower::shaping_signature()
  uint32_t lowering_version = 0;
  std::string vyre_version;
  std::string fingerprint;     // backend fingerprint

  // Hash of everything but the fingerprint (the reference's "spec").
  std::string spec_hash() const;
  // cache_key(spec_hash(), fingerprint): 64 lowercase hex characters.
  std::string key() const;
};

KeyParts key_parts(const Program& program, std::string_view fingerprint, const DispatchConfig& config = {});

// Versioned, length-prefixed key derivation (docs/cache.md).
std::string cache_key(std::string_view spec_hash, std::string_view fingerprint);

struct Artifact {
  std::string wgsl;
  std::string key;
  bool cache_hit = false;
  double lower_ms = 0;  // time spent lowering (0 on a hit)
};

struct CacheOptions {
  // Writable directory; nullopt: no disk cache (lower every time).
  std::optional<std::filesystem::path> directory;
};

class Cache {
 public:
  // Directory from VYRE_AOT_CACHE_DIR, else $XDG_CACHE_HOME/vyre/aot, else
  // $HOME/.cache/vyre/aot; with none of them, no disk cache (and a warning).
  static std::optional<std::filesystem::path> default_directory();
  static Cache from_environment();

  explicit Cache(CacheOptions options);
  ~Cache();
  Cache(Cache&&) noexcept;
  Cache& operator=(Cache&&) noexcept;

  const std::optional<std::filesystem::path>& directory() const;

  Artifact load_or_compile(const Program& program, std::string_view fingerprint, const DispatchConfig& config = {});
  Artifact load_or_compile(const KeyParts& parts, const std::function<std::string()>& lower);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vyre::aot
