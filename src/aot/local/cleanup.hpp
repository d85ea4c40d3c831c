// Cleanup: evicts least recently used entries, and driver pipeline data
// folders (driver_store.hpp, counted in the byte bound), when the writable
// directory is over its bounds and sweeps orphaned temporary files and unpaired or
// unsafe files. Runs under the directory's cleanup lock, so never twice at
// once; evicts a key only under its write stripe, skipping keys being written.
#pragma once

#include "aot/local/stats_store.hpp"

#include <cstdint>
#include <optional>
#include <string>

#include "aot/local/directory.hpp"
#include "aot/local/sqlite_tier.hpp"

namespace vyre::aot {

struct CleanupPolicy {
  std::optional<uint64_t> max_bytes;    // nullopt: unbounded
  std::optional<uint64_t> max_entries;  // nullopt: unbounded
  // When a bound is exceeded, evict down to this fraction of it, so that
  // cleanup does not run again after every write.
  double low_water = 0.8;
  std::optional<int64_t> older_than_ms;  // also evict entries unused for longer
  int64_t grace_ms = 3600'000;           // age before a temporary or unpaired file is an orphan
  // Once the lock is held, do nothing when the estimate (usage.toml plus
  // the driver data measured now) is within the bounds: a writer that
  // waited for another's cleanup finds its work done.
  bool only_if_over = false;
};

// The size the bounds apply to, without a full scan: the entries' estimate
// (usage.toml) and the driver data as it is now (every byte under .driver,
// which the driver grows by itself).
struct BoundedSize {
  uint64_t bytes = 0;
  uint64_t entries = 0;
  bool over(const CleanupPolicy& policy) const {
    return (policy.max_bytes && bytes > *policy.max_bytes) || (policy.max_entries && entries > *policy.max_entries);
  }
};
BoundedSize bounded_size(const CacheDirectory& directory, const Usage& usage);

struct CleanupResult {
  uint64_t evicted = 0;
  uint64_t bytes_freed = 0;
  uint64_t swept = 0;
  uint64_t driver_evicted = 0;  // driver pipeline data folders (driver_store.hpp)
  uint64_t entries = 0;  // complete entries left
  uint64_t bytes = 0;    // their bytes and the driver data's left
  uint64_t not_removed = 0;     // entries and files it meant to remove that are still there
  std::string first_problem;    // why the first of them could not go
  void note_not_removed(const std::string& problem) {
    if (not_removed++ == 0) first_problem = problem;
  }
};

// Fails with busy when another cleanup holds the lock (try_only), io when the
// lock cannot be taken. A directory that cannot be listed is left as it is.
// With `store` (the SQLite store), its rows are entries too, in the same
// recency order as the directory's files and driver folders.
sys::Result<CleanupResult> run_cleanup(CacheDirectory& directory, const CleanupPolicy& policy,
                                       sys::FileLock::Mode lock_mode, SqliteTier* store = nullptr);

}  // namespace vyre::aot
