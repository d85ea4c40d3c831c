// A listing of a cache directory: entries by key (both files, one, or
// unsafe ones), temporary files, and nothing else (unknown names are never
// touched).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "sys/safe_file.hpp"

namespace vyre::aot {

struct ScannedEntry {
  std::string key;
  sys::FileFacts wgsl;
  sys::FileFacts metadata;
  sys::FileFacts packed;  // the one-file form (packed_name), on a shared file system
  // Whose modification time is the entry's recency: the metadata, else the one file.
  bool is_packed() const { return !metadata.exists && packed.exists; }
  const sys::FileFacts& commit() const { return is_packed() ? packed : metadata; }
  std::string commit_name() const;
  bool complete() const { return (wgsl.safe() && metadata.safe()) || (!metadata.exists && packed.safe()); }
  bool unsafe() const {
    return (wgsl.exists && !wgsl.safe()) || (metadata.exists && !metadata.safe()) || (packed.exists && !packed.safe());
  }
  uint64_t bytes() const {
    return (wgsl.exists ? wgsl.size : 0) + (metadata.exists ? metadata.size : 0) + (packed.exists ? packed.size : 0);
  }
  // Recency: hits refresh the commit file's modification time.
  int64_t last_used_ms() const { return commit().exists ? commit().mtime_ms : wgsl.mtime_ms; }
  int64_t newest_ms() const {
    return std::max({wgsl.exists ? wgsl.mtime_ms : 0, metadata.exists ? metadata.mtime_ms : 0,
                     packed.exists ? packed.mtime_ms : 0});
  }
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

// What an entry's file is: its WGSL, its metadata or its one file.
enum class EntryFile { wgsl, metadata, packed };

// "<64 hex>.wgsl", "<64 hex>.toml" or "<64 hex>.entry": the key, else empty.
std::string entry_key_of(std::string_view file_name, EntryFile* which = nullptr);

}  // namespace vyre::aot
