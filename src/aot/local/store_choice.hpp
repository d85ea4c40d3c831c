// Which store keeps the writable directory's entries, and why: the setting
// (VYRE_AOT_CACHE_STORE), a database already there, or the file system's
// facts (sys/file_system.hpp). The driver's data follows the same choice
// (gpu/driver_cache.cpp: Mesa's single-file cache with the SQLite store).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "sys/file_system.hpp"
#include "vyre/aot.hpp"

namespace vyre::aot {

struct StoreChoice {
  CacheStore store = CacheStore::directory;  // directory or sqlite, never automatic
  std::string reason;                        // in words, for cache stats
  sys::FileSystemFacts file_system;
};

// `shared`: the file system is shared between machines (a setting), else
// as its type says.
StoreChoice choose_store(const std::filesystem::path& directory, CacheStore setting,
                         std::optional<bool> shared = std::nullopt);

}  // namespace vyre::aot
