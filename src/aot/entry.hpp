// An entry: `<key>.wgsl` and its metadata `<key>.toml`, the commit record.
// The metadata names everything the key was made of and a digest of the
// WGSL, so that a pair is either proven consistent with its key or rejected.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "aot/safe_file.hpp"
#include "vyre/aot.hpp"

namespace vyre::aot {

struct Metadata {
  uint32_t format = kCacheVersion;
  std::string key;
  std::string program;  // label
  KeyParts parts;
  std::string spec_hash;
  std::string content_sha256;
  uint64_t wgsl_bytes = 0;
  int64_t created_unix_ms = 0;
  double lower_ms = 0;
};

Metadata make_metadata(const KeyParts& parts, std::string_view program, std::string_view wgsl, double lower_ms);
std::string encode_metadata(const Metadata& meta);

struct ParsedMetadata {
  enum class Status { ok, other_format, malformed } status = Status::malformed;
  Metadata meta;        // complete only when ok; format set for other_format
  std::string problem;  // for malformed
};
// Reads the format first and nothing else of another format's metadata.
ParsedMetadata parse_metadata(std::string_view text);

// Why the pair is not a valid entry for `key`, or nullopt when it is: the
// metadata names this key, its components hash to this key, and the WGSL has
// the recorded size and SHA-256.
std::optional<std::string> check_entry(std::string_view key, const Metadata& meta, std::string_view wgsl);

struct EntryRead {
  enum class Status {
    good,          // verified
    missing,       // no metadata: never written, evicted, or a write not yet committed
    incomplete,    // metadata without WGSL: removed under the reader
    bad,           // unsafe file, over a bound, malformed, or does not verify
    other_format,  // metadata of another format version
    error,         // the file system refused a read
  } status = Status::missing;
  Metadata meta;
  std::string wgsl;
  std::string problem;
  uint64_t metadata_bytes = 0;
  int64_t metadata_mtime_ms = 0;
};

// Reads metadata first (the commit record), then the WGSL, and verifies the
// pair. Takes no lock: any interleaving with writers and evictors is either a
// verified entry or not an entry. With `verify_content` false the WGSL's
// digest is not recomputed (listing).
EntryRead read_entry(int dirfd, const std::string& key, OwnerRule rule, bool verify_content = true);

}  // namespace vyre::aot
