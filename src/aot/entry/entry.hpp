// An entry: `<key>.wgsl` and its metadata `<key>.toml`, the commit record.
// The metadata names everything the key was made of and a digest of the
// WGSL, so that a pair is either proven consistent with its key or rejected.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sys/safe_file.hpp"
#include "vyre/aot.hpp"

namespace vyre::aot {

// The metadata file's fields are the public EntryRecord: one struct for what
// is written, read back and shown.
using Metadata = EntryRecord;

// Names of an entry's two files, and of its one file (`<key>.entry`, an
// entry frame: entry_frame.hpp) where the directory is on a shared or
// network file system and an entry is published with a single rename.
std::string wgsl_name(const std::string& key);
std::string metadata_name(const std::string& key);
std::string packed_name(const std::string& key);

Metadata make_metadata(const KeyParts& parts, std::string_view program, std::string_view wgsl, double lower_ms);
std::string encode_metadata(const Metadata& meta);

// Reads the format first and nothing else of another format's metadata.
// Fills `into` as far as it reads (its format even for another version);
// fails with malformed or unsupported.
sys::Result<void> parse_metadata(std::string_view text, Metadata& into);

// Why the pair is not a valid entry for `key` (a mismatch), or success: the
// metadata names this key, its components hash to this key, and the WGSL has
// the recorded size and SHA-256.
sys::Result<void> check_entry(std::string_view key, const Metadata& meta, std::string_view wgsl);

// A verified entry.
struct Entry {
  Metadata meta;
  std::string text;  // the WGSL or record; empty when read without its content (listing)
  uint64_t metadata_bytes = 0;
  int64_t metadata_mtime_ms = 0;
};

// How an entry's failure to read counts: missing and partial (metadata
// without WGSL, or the reverse: a write not committed, an eviction under the
// reader) are plain misses; io is the file system's refusal; every other
// kind (unsafe, too_large, malformed, mismatch, unsupported) is a bad entry.
bool is_miss(const sys::Failure& failure);
bool is_bad_entry(const sys::Failure& failure);

// Reads metadata first (the commit record), then the WGSL, and verifies the
// pair; without metadata, the one-file form (packed_name), verified alike. Takes no lock: any interleaving with writers and evictors is either a
// verified entry or a failure, never a torn entry. With `verify_content`
// false the WGSL is not read, only its size compared (listing).
sys::Result<Entry> read_entry(int dirfd, const std::string& key, sys::OwnerRule rule, bool verify_content = true);

// As read_entry, keeping the metadata as far as it was read even when the
// entry is bad, for the tools that show bad entries.
struct EntryInspection {
  sys::Result<Entry> entry;
  Metadata seen;
};
EntryInspection inspect_entry(int dirfd, const std::string& key, sys::OwnerRule rule, bool verify_content);

}  // namespace vyre::aot
