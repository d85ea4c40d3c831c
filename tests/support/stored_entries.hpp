// A stored entry as the cache's tests see it, in whichever store holds it:
// the files store's `<key>.wgsl` and `<key>.toml` (or its one-file
// `<key>.entry`), or the SQLite store's row in `entries.sqlite3`. The tests
// that damage, count or look for entries go through these, so that one test
// runs against both stores (tests/CMakeLists.txt, VYRE_STORE_SUITE).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace vyre::test {

enum class EntryPart { wgsl, metadata };

// Whether the cache in `dir` keeps its entries as rows of a database.
bool keeps_rows(const std::filesystem::path& dir);

// The part's bytes, or nullopt when the entry (or that part) is not there.
std::optional<std::string> read_entry_part(const std::filesystem::path& dir, const std::string& key, EntryPart part);

// Replaces the part's bytes; the entry must be stored (the test fails if not).
void write_entry_part(const std::filesystem::path& dir, const std::string& key, EntryPart part,
                      const std::string& bytes);

// Copies one entry's part to another entry's: the swap of a key's halves.
void copy_entry_part(const std::filesystem::path& dir, const std::string& from, const std::string& to,
                     EntryPart part);

// Moves an entry to another key as it is (its metadata still names the old
// key): an entry planted under a key it does not belong to.
void move_entry(const std::filesystem::path& dir, const std::string& from, const std::string& to);

bool has_entry(const std::filesystem::path& dir, const std::string& key);

// The keys of the entries stored in `dir`, sorted.
std::vector<std::string> stored_keys(const std::filesystem::path& dir);

// When the entry was last used, in ms since the epoch (a file's mtime, a
// row's used_ms); 0 when it is not stored.
int64_t entry_used_ms(const std::filesystem::path& dir, const std::string& key);

// Marks an entry as last used `seconds` ago (a file's mtime, a row's used_ms).
void set_entry_age(const std::filesystem::path& dir, const std::string& key, int64_t seconds);

}  // namespace vyre::test
