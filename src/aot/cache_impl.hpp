// The state behind vyre::aot::Cache, shared by the files that implement it
// (cache.cpp: lookups and publication; maintenance.cpp: the tools).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "aot/fork_guard.hpp"
#include "aot/local/cleanup.hpp"
#include "aot/local/directory.hpp"
#include "aot/entry/entry_signature.hpp"
#include "aot/local/directory_tier.hpp"
#include "aot/local/sqlite_tier.hpp"
#include "aot/local/store_choice.hpp"
#include "aot/remote/remote_tier.hpp"
#include "aot/entry/storage_tier.hpp"
#include "aot/local/stats_store.hpp"
#include "vyre/aot.hpp"

namespace vyre::aot {

// Hidden: a type nested in an exported class would otherwise export its
// members (tests/exports/ checks that none of them leaks).
struct __attribute__((visibility("hidden"))) Cache::Impl final : ForkGuarded {
  explicit Impl(CacheOptions opts);
  ~Impl() override;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  Impl(Impl&&) = delete;
  Impl& operator=(Impl&&) = delete;

  CacheOptions options;
  std::optional<std::filesystem::path> directory;  // the writable directory in use
  // The storage tiers in lookup order: the local directory (when usable),
  // then the read-only layers, then the remote tier.
  // With the SQLite store: the directory tier kept for its directory alone
  // (locks, stats, driver data), never asked for entries; declared first,
  // so that it outlives the tiers that use its directory.
  std::unique_ptr<DirectoryTier> directory_tier;
  std::vector<std::unique_ptr<StorageTier>> owned_tiers;
  // Among `owned_tiers`; null without a writable directory: its
  // DirectoryTier, or its SqliteTier (`sqlite`) as `store` chose.
  StorageTier* local = nullptr;
  SqliteTier* sqlite = nullptr;
  StoreChoice store;
  CacheDirectory* writable = nullptr;   // local's directory: stats, cleanup and the tools
  RemoteTier* remote = nullptr;         // among `owned_tiers`, last; null without one
  // Signs what this process publishes (VYRE_AOT_SIGNING_KEY); null: unsigned.
  std::shared_ptr<const EntrySigner> signer;
  // Keys an entry from a place others can write must be signed by; null: none set.
  std::shared_ptr<const TrustedKeys> trusted;
  // Whether readers who trust `trusted` would accept what this process
  // signs (always, without trusted keys). When not, it publishes nothing
  // to the places that need signatures, so that it never replaces entries
  // those readers use by entries they refuse.
  bool own_entries_trusted = true;
  bool may_publish_to(const StorageTier& tier) const;
  // Opens the SQLite store as `local`; on failure, no local store (a warning).
  void open_sqlite();
  // A read-only layer's database, when the layer has one.
  void open_sqlite_layer(CacheDirectory& layer, bool signed_only);

  // The tiers on this machine, in lookup order: the local directory, then
  // the read-only layers (all of `owned_tiers` but the remote).
  std::vector<StorageTier*> nearby;

  // The steps of Cache::load_or_compile.
  // The first verified entry of the nearby tiers; bad entries and read
  // errors are counted and said once.
  std::optional<Entry> find_nearby(const std::string& key, Counters& delta);
  // A hit: the artifact from `entry`, counted.
  Artifact serve(Entry&& entry, Artifact& artifact, Counters& delta);
  // Runs `make` into the artifact, counted as a miss with its time.
  void lower_timed(const std::function<std::string()>& make, Artifact& artifact, Counters& delta);
  bool has_writable_nearby() const;
  // Stores an entry into each writable nearby tier: what was lowered, or a
  // remote hit (a backfill, so that the next run finds it on disk).
  void publish_nearby(const Metadata& meta, std::string_view text, Counters& delta);
  // Metadata for a lowered text, signed when there is a signing key.
  Metadata metadata_for(const KeyParts& parts, std::string_view label, std::string_view wgsl, double lower_ms) const;

  // Counters not yet on disk.
  void count(const Counters& delta);
  // Writes pending counters to this process's shard. When that fails they
  // stay pending, unless this is the `last` flush (the Cache's end): then
  // the loss is noted where the directory allows (cache stats says its
  // counts are incomplete).
  void flush_pending(bool last = false);
  // Adds a publication to the on-disk size estimate at once (so that a
  // process killed later has still counted it). Over a bound (the driver
  // data included) it cleans up before returning; an estimate last
  // corrected by a scan long ago gets a cleanup from the background worker.
  void record_growth(int64_t bytes, int64_t entries);
  // Cleanup; counts its evictions. try_only: another process's cleanup is
  // as good. wait: after another's, only if still over a bound.
  void cleanup_now(sys::FileLock::Mode lock_mode = sys::FileLock::Mode::try_only);
  // At the Cache's end: a cleanup when the driver's data grew past the
  // byte bound.
  void check_bounds_at_exit();
  // Hands flush_pending() to the background worker when the flush interval
  // has passed; never blocks.
  void maybe_flush_in_background();
  // Waits for the worker to be idle.
  void wait_idle();

  CleanupPolicy cleanup_policy() const;
  // One warning per process for a tier that refuses writes, whichever
  // write noticed first.
  void warn_unwritable(const std::filesystem::path& where, const std::string& problem) const;
  // Every tier, in lookup order (the tools go through all of them).
  std::vector<StorageTier*> tiers() const;
  // The directories of the directory tiers, in lookup order (export).
  std::vector<CacheDirectory*> layers() const;
  // Throws Error(io) when there is no writable directory.
  CacheDirectory& require_writable() const;

  std::mutex pending_mutex;
  Counters pending;
  std::atomic<int64_t> last_flush_ms{0};
  std::mutex flush_mutex;  // one flush at a time

  // The background worker: started on first use, joined at destruction.
  // Around a fork() the forking thread waits for it to be at rest and holds
  // worker_mutex (fork_guard.hpp); the child starts a worker of its own.
  std::mutex worker_mutex;
  std::condition_variable worker_wake;
  std::condition_variable worker_idle;
  std::thread worker;
  bool worker_stop = false;
  bool worker_flush = false;
  bool worker_cleanup = false;
  bool worker_busy = false;
  // Set by the worker thread once it runs its loop: a thread still starting
  // may hold its runtime's locks (a sanitizer's thread registry), which a
  // child forked then would inherit held, so fork waits for this too.
  bool worker_started = false;
  void wake_worker(bool flush, bool cleanup);
  void worker_loop();
  void before_fork() override;
  void after_fork(bool in_child) override;
};

// Reaches a Cache's state: for the tests that put a tier of their own in
// front of the others.
struct CacheInternals {
  static Cache::Impl& of(Cache& cache) { return *cache.impl_; }
};

// How long a writer over a bound waits for another process's cleanup
// before it goes on without cleaning (docs/cache.md, "Bounds").
inline constexpr int64_t kCleanupWaitMs = 2000;

// How often the size estimate is corrected by a full scan even when it
// stays under the bounds (writes by processes killed before they flushed
// are otherwise never counted).
inline constexpr int64_t kRescanIntervalMs = int64_t{24} * 3600 * 1000;

}  // namespace vyre::aot
