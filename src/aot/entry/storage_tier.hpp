// A storage tier: one place the cache keeps entries, behind one small
// interface (get, put, remove, list, stats), as ccache's storage backends
// are. The cache asks the tiers on this machine in order (the local
// directory, then read-only layers), then the remote store (Redis or Redis
// Cluster), and stores what it lowers into those it may write. A tier never
// hands out a torn entry: get() yields an entry it has verified against its
// key, or a failure.
//
// One error convention: every call answers with a Result and never throws.
// The public calls are the boundary (they catch whatever an implementation
// throws and answer Fault::io with its message), so the cache writes one
// error path per step, and a tier in trouble costs a lookup in the next,
// never a dispatch. Implementations override the do_* functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "aot/entry/entry.hpp"
#include "sys/result.hpp"
#include "vyre/aot.hpp"

namespace vyre::aot {

struct Stored {
  bool written = false;  // false: a good entry was already there (another process wrote it)
  uint64_t bytes = 0;    // written: what the entry takes in the tier
};

struct TierStats {
  uint64_t entries = 0;  // complete entries
  uint64_t bytes = 0;    // their size
};

// Why an entry is read: a tier that tracks recency (for eviction) records a
// use only when the entry is served, not when a tool looks at it.
enum class Use { serve, inspect };

struct ListQuery {
  bool verify_content = false;     // recompute each entry's digest (verify, show) or not (ls)
  std::optional<std::string> key;  // only the entry at this key (show)
};

class StorageTier {
 public:
  virtual ~StorageTier() = default;

  // Where the tier is, for messages and the tools' listings (a directory;
  // for a remote tier, its address).
  virtual const std::filesystem::path& location() const = 0;
  // Whether put() and remove() may change it. A read-only tier refuses them
  // with Fault::read_only.
  virtual bool writable() const = 0;

  // The verified entry at `key`, or why there is none: missing or partial is
  // a miss, io means the tier could not be asked, any other kind is a bad
  // entry (see is_bad_entry()).
  sys::Result<Entry> get(const std::string& key, Use use) noexcept;
  // Stores a complete entry (its metadata names its key). Fails with
  // too_large when the entry is not cacheable, read_only in a tier that is
  // never written, else with what refused it.
  sys::Result<Stored> put(const Metadata& meta, std::string_view text) noexcept;
  // Removes the entry at `key`; with `only_if_bad`, only when it is still
  // bad once no writer can be replacing it. True when something was removed.
  sys::Result<bool> remove(const std::string& key, bool only_if_bad) noexcept;
  // Entries as the tools show them, bad and incomplete ones included.
  sys::Result<std::vector<EntryInfo>> list(const ListQuery& query) const noexcept;
  sys::Result<TierStats> stats() const noexcept;

 private:
  // What each tier implements; the public calls above guard them.
  virtual sys::Result<Entry> do_get(const std::string& key, Use use) = 0;
  virtual sys::Result<Stored> do_put(const Metadata& meta, std::string_view text) = 0;
  virtual sys::Result<bool> do_remove(const std::string& key, bool only_if_bad) = 0;
  virtual sys::Result<std::vector<EntryInfo>> do_list(const ListQuery& query) const = 0;
  virtual sys::Result<TierStats> do_stats() const = 0;
};

}  // namespace vyre::aot
