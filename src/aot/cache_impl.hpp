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

#include "aot/cleanup.hpp"
#include "aot/directory.hpp"
#include "aot/stats_store.hpp"
#include "vyre/aot.hpp"

namespace vyre::aot {

struct Cache::Impl {
  explicit Impl(CacheOptions opts);
  ~Impl();

  CacheOptions options;
  std::optional<std::filesystem::path> directory;  // the writable directory in use
  std::unique_ptr<CacheDirectory> writable;
  std::vector<std::unique_ptr<CacheDirectory>> readonly;

  // Counters and size changes not yet on disk.
  void count(const Counters& delta, int64_t usage_bytes = 0, int64_t usage_entries = 0);
  // Writes pending counters to this process's shard and the size estimate,
  // then runs cleanup (without waiting for its lock) when the estimate is
  // over a bound or was last scanned long ago.
  void flush_pending();
  // Hands flush_pending() to the background worker when the flush interval
  // has passed; never blocks.
  void maybe_flush_in_background();
  // Waits for the worker to be idle.
  void wait_idle();

  CleanupPolicy cleanup_policy() const;
  // The writable directory first, then the read-only layers.
  std::vector<CacheDirectory*> layers() const;
  // Throws Error(io) when there is no writable directory.
  CacheDirectory& require_writable() const;

  std::mutex pending_mutex;
  Counters pending;
  int64_t pending_usage_bytes = 0;
  int64_t pending_usage_entries = 0;
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
  bool worker_busy = false;
  void worker_loop();
};

// How often the size estimate is corrected by a full scan even when it
// stays under the bounds (writes by processes killed before they flushed
// are otherwise never counted).
inline constexpr int64_t kRescanIntervalMs = 24 * 3600 * 1000;

}  // namespace vyre::aot
