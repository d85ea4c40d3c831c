// The state behind vyre::aot::Cache, shared by the files that implement it
// (cache.cpp: lookups and publication; maintenance.cpp: the tools).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "aot/local/cleanup.hpp"
#include "aot/local/directory.hpp"
#include "aot/entry/entry_signature.hpp"
#include "aot/local/directory_tier.hpp"
#include "aot/remote/remote_tier.hpp"
#include "aot/entry/storage_tier.hpp"
#include "aot/local/stats_store.hpp"
#include "vyre/aot.hpp"

namespace vyre::aot {

struct Cache::Impl {
  explicit Impl(CacheOptions opts);
  ~Impl();

  CacheOptions options;
  std::optional<std::filesystem::path> directory;  // the writable directory in use
  // The storage tiers in lookup order: the local directory (when usable),
  // then the read-only layers, then the remote tier.
  std::vector<std::unique_ptr<StorageTier>> tiers;
  DirectoryTier* local = nullptr;       // among `tiers`; null without a writable directory
  CacheDirectory* writable = nullptr;   // local's directory: stats, cleanup and the tools
  RemoteTier* remote = nullptr;         // among `tiers`, last; null without one
  // Signs what this process publishes (VYRE_AOT_SIGNING_KEY); null: unsigned.
  std::shared_ptr<const EntrySigner> signer;
  // Keys an entry from a place others can write must be signed by; null: none set.
  std::shared_ptr<const TrustedKeys> trusted;

  // Metadata for a lowered text, signed when there is a signing key.
  Metadata metadata_for(const KeyParts& parts, std::string_view label, std::string_view wgsl, double lower_ms) const;
  // Copies a remote hit into the local directory, so that the next run
  // finds it on disk.
  void backfill(const Entry& entry, Counters& delta);

  // Counters not yet on disk.
  void count(const Counters& delta);
  // Writes pending counters to this process's shard.
  void flush_pending();
  // Adds a publication to the on-disk size estimate at once (so that a
  // process killed later has still counted it) and asks the background
  // worker for a cleanup when the estimate is over a bound or was last
  // corrected by a scan long ago.
  void record_growth(int64_t bytes, int64_t entries);
  // Cleanup without waiting for the cleanup lock (another process's cleanup
  // is as good); counts its evictions.
  void cleanup_now();
  // Hands flush_pending() to the background worker when the flush interval
  // has passed; never blocks.
  void maybe_flush_in_background();
  // Waits for the worker to be idle.
  void wait_idle();

  CleanupPolicy cleanup_policy() const;
  // One warning per process for a tier that refuses writes, whichever
  // write noticed first.
  void warn_unwritable(const std::filesystem::path& where, const std::string& problem) const;
  std::vector<StorageTier*> tier_order() const;
  // The directories of the directory tiers, in lookup order (export).
  std::vector<CacheDirectory*> layers() const;
  // Throws Error(io) when there is no writable directory.
  CacheDirectory& require_writable() const;

  std::mutex pending_mutex;
  Counters pending;
  std::atomic<int64_t> last_flush_ms{0};
  std::mutex flush_mutex;  // one flush at a time

  // The background worker: started on first use, joined at destruction.
  std::mutex worker_mutex;
  std::condition_variable worker_wake;
  std::condition_variable worker_idle;
  std::thread worker;
  pid_t worker_pid = 0;
  bool worker_stop = false;
  bool worker_flush = false;
  bool worker_cleanup = false;
  bool worker_busy = false;
  void wake_worker(bool flush, bool cleanup);
  void worker_loop();
};

// How often the size estimate is corrected by a full scan even when it
// stays under the bounds (writes by processes killed before they flushed
// are otherwise never counted).
inline constexpr int64_t kRescanIntervalMs = int64_t{24} * 3600 * 1000;

}  // namespace vyre::aot
