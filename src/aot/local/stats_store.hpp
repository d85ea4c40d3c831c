// Counters shared by every process that uses a cache directory, kept in
// shards under .stats/ so that processes rarely wait for one another: each
// process adds its counts to one shard (chosen by its pid) under that shard's
// lock; readers sum all shards without locking (shards are replaced by
// rename, so a reader sees a whole file). The size estimate that triggers
// cleanup lives beside them.
#pragma once

#include <cstdint>
#include <string>

#include "aot/entry/tier_counters.hpp"
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
  TierCounters remote;    // the remote tier's part (RemoteTier::drain)

  Counters& operator+=(const Counters& other);
  bool empty() const;
  friend bool operator==(const Counters&, const Counters&) = default;
};

// The counters of a shard file by name (the remote tier's follow, as
// "remote_<name>"): the one list that the sum, the emptiness and the files
// go through.
struct CounterField {
  const char* name;
  uint64_t Counters::*member;
};

inline constexpr CounterField kCounterFields[] = {
    {"hits", &Counters::hits},
    {"misses", &Counters::misses},
    {"writes", &Counters::writes},
    {"evictions", &Counters::evictions},
    {"bad_entries", &Counters::bad_entries},
    {"errors", &Counters::errors},
    {"bytes_written", &Counters::bytes_written},
    {"lowering_us", &Counters::lowering_us},
    {"time_saved_us", &Counters::time_saved_us},
    {"rejected", &Counters::rejected},
};

// Calls fn(name, field) for each counter of `c` (Counters, const or not),
// by its name in a shard file.
template <class C, class Fn>
void for_each_field(C& c, Fn&& fn) {
  for (const auto& field : kCounterFields) fn(field.name, c.*field.member);
  for (const auto& field : kTierCounterFields) fn((std::string("remote_") + field.name).c_str(), c.remote.*field.member);
}

inline constexpr unsigned kStatsShards = 8;

// Each takes the descriptor of an open .stats directory.

// Adds `delta` to this process's shard.
sys::Result<void> add_to_shard(int stats_dirfd, const Counters& delta);

// Notes counters that will never be written (a process ending while its
// directory is full or read-only) in .stats/lost.toml, a record rewritten in
// place, which needs no new disk block once it exists (it is made at the
// first successful flush). Best effort: a directory that takes no write at
// all cannot record it.
void note_lost_flush(int stats_dirfd, const std::string& reason);

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
