// Counters shared by every process that uses a cache directory, kept in
// shards under .stats/ so that processes rarely wait for one another: each
// process adds its counts to one shard (chosen by its pid) under that shard's
// lock; readers sum all shards without locking (shards are replaced by
// rename, so a reader sees a whole file). The size estimate that triggers
// cleanup lives beside them.
#pragma once

#include <cstdint>
#include <string>

#include "sys/result.hpp"

namespace vyre::aot {

struct Counters {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t writes = 0;
  uint64_t evictions = 0;
  uint64_t bad_entries = 0;
  uint64_t errors = 0;
  uint64_t bytes_written = 0;
  uint64_t lowering_us = 0;
  uint64_t time_saved_us = 0;
  uint64_t rejected = 0;  // refused for want of a trusted signature
  // The remote tier's part (RemoteTier::drain).
  uint64_t remote_hits = 0;
  uint64_t remote_misses = 0;
  uint64_t remote_writes = 0;
  uint64_t remote_errors = 0;
  uint64_t remote_timeouts = 0;
  uint64_t remote_rejected = 0;

  Counters& operator+=(const Counters& other);
  bool empty() const;
};

inline constexpr unsigned kStatsShards = 8;

// Each takes the descriptor of an open .stats directory.

// Adds `delta` to this process's shard. When that fails (a full disk, a
// read-only directory) the loss is noted in .stats/lost.toml, a record
// rewritten in place, which needs no new disk block once it exists (it is
// made at the first successful flush).
sys::Result<void> add_to_shard(int stats_dirfd, const Counters& delta);

// Why the counters read back are not the whole count: flushes that were
// lost and shards that could not be read. Empty when they are complete.
struct StatsGaps {
  uint64_t lost_flushes = 0;
  std::string last_loss;         // the reason the last lost flush gave
  std::string unreadable_shard;  // the first shard that exists but could not be read
  bool empty() const { return lost_flushes == 0 && unreadable_shard.empty(); }
  std::string describe() const;
};

// The sum of every shard (unreadable or malformed shards count as zero and
// are named in `gaps`, with the lost flushes, when given).
Counters read_all_shards(int stats_dirfd, StatsGaps* gaps = nullptr);
// Sets every shard to zero and forgets lost flushes.
sys::Result<void> zero_all_shards(int stats_dirfd);

// The size of the writable directory as last scanned, plus what writers
// added since.
struct Usage {
  int64_t bytes = 0;
  int64_t entries = 0;
  int64_t scanned_unix_ms = 0;  // 0: never scanned
};
// Adds to the estimate and returns the new one.
sys::Result<Usage> add_usage(int stats_dirfd, int64_t bytes, int64_t entries);
sys::Result<void> set_usage(int stats_dirfd, const Usage& usage);
// Sets the estimate to a scan's result plus what writers added while the
// scan ran (the growth of the estimate since `before`), so that a cleanup
// never makes the estimate smaller than the truth.
sys::Result<void> set_usage_after_scan(int stats_dirfd, const Usage& scanned, const Usage& before);
Usage read_usage(int stats_dirfd);

}  // namespace vyre::aot
