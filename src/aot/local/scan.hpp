// A listing of a cache directory: entries by key (both files, one, or
// unsafe ones), temporary files, and nothing else (unknown names are never
// touched).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sys/safe_file.hpp"

namespace vyre::aot {

struct ScannedEntry {
  std::string key;
  sys::FileFacts wgsl;
  sys::FileFacts metadata;
  bool complete() const { return wgsl.safe() && metadata.safe(); }
  bool unsafe() const { return (wgsl.exists && !wgsl.safe()) || (metadata.exists && !metadata.safe()); }
  uint64_t bytes() const { return (wgsl.exists ? wgsl.size : 0) + (metadata.exists ? metadata.size : 0); }
  // Recency: hits refresh the metadata's modification time.
  int64_t last_used_ms() const { return metadata.exists ? metadata.mtime_ms : wgsl.mtime_ms; }
  int64_t newest_ms() const { return std::max(wgsl.exists ? wgsl.mtime_ms : 0, metadata.exists ? metadata.mtime_ms : 0); }
};

struct ScannedTemporary {
  std::string name;
  int64_t mtime_ms = 0;
};

struct DirectoryScan {
  std::vector<ScannedEntry> entries;  // sorted by key
  std::vector<ScannedTemporary> temporaries;
};

// Fails with io (the errno's text as the message) when the directory cannot
// be read.
sys::Result<DirectoryScan> scan_directory(int dirfd, sys::OwnerRule rule);

// "<64 hex>.wgsl" or "<64 hex>.toml": the key, else empty.
std::string entry_key_of(std::string_view file_name, bool* is_metadata = nullptr);

}  // namespace vyre::aot
