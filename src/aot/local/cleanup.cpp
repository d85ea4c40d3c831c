#include "aot/local/cleanup.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "aot/local/driver_store.hpp"
#include "aot/local/publish.hpp"
#include "aot/local/scan.hpp"
#include "aot/local/stats_store.hpp"
#include "sys/remove_at.hpp"

namespace vyre::aot {
namespace {

void sweep_temporaries(int dirfd, const std::vector<ScannedTemporary>& temporaries, int64_t cutoff_ms,
                       sys::OwnerRule rule, CleanupResult& result) {
  for (const auto& t : temporaries) {
    if (t.mtime_ms >= cutoff_ms) continue;
    if (auto removed = sys::remove_at(dirfd, t.name, rule); removed)
      result.swept += *removed ? 1 : 0;
    else
      result.note_not_removed(removed.failure().message);
  }
}

// A key whose stripe could not be taken is left: busy, it is being written
// (the next cleanup sees it); any other failure (a read-only directory) is
// something this cleanup could not remove.
void note_unlocked(const sys::Failure& failure, const std::string& key, CleanupResult& result) {
  if (failure.kind != sys::Fault::busy) result.note_not_removed("cannot lock " + key + ": " + failure.message);
}

uint64_t bound_target(uint64_t bound, double low_water) {
  return static_cast<uint64_t>(static_cast<double>(bound) * low_water);
}

}  // namespace

BoundedSize bounded_size(const CacheDirectory& directory, const Usage& usage) {
  return BoundedSize{static_cast<uint64_t>(usage.bytes) + driver::total_bytes(directory.path()),
                     static_cast<uint64_t>(usage.entries)};
}

sys::Result<CleanupResult> run_cleanup(CacheDirectory& directory, const CleanupPolicy& policy,
                                       sys::FileLock::Mode lock_mode, SqliteTier* store) {
  CleanupResult result;
  auto lock = directory.cleanup_lock(lock_mode);
  if (!lock) return lock.failure();
  // Without its .stats directory a cleanup still evicts and sweeps.
  auto stats = directory.stats_fd();

  const int dirfd = directory.fd();
  const int64_t now = sys::now_unix_ms();
  const Usage usage_before = stats ? read_usage(*stats) : Usage{};
  if (policy.only_if_over && !bounded_size(directory, usage_before).over(policy)) return result;
  const int64_t orphan_cutoff = now - policy.grace_ms;
  const sys::OwnerRule rule = directory.owner_rule();
  auto scanned = scan_directory(dirfd, rule);
  if (!scanned) return result;
  const DirectoryScan& scan = *scanned;

  sweep_temporaries(dirfd, scan.temporaries, orphan_cutoff, rule, result);
  if (auto stats_scan = stats ? scan_directory(*stats, sys::owner_rule_in(*stats)) : sys::Result<DirectoryScan>(stats.failure()))
    sweep_temporaries(*stats, stats_scan->temporaries, orphan_cutoff, sys::owner_rule_in(*stats), result);

  std::vector<const ScannedEntry*> complete;
  for (const auto& entry : scan.entries) {
    if (entry.complete()) {
      complete.push_back(&entry);
      continue;
    }
    // Unsafe files are never an entry a writer made; unpaired files are
    // orphans once older than the grace period (a writer is done by then).
    if (entry.unsafe() || entry.newest_ms() < orphan_cutoff) {
      auto stripe = directory.stripe_lock(entry.key, sys::FileLock::Mode::try_only);
      if (!stripe) {
        note_unlocked(stripe.failure(), entry.key, result);
        continue;
      }
      if (auto removed = remove_entry_files(dirfd, entry.key, rule); removed)
        ++result.swept;
      else
        result.note_not_removed(removed.failure().message);
    }
  }

  driver::adopt_finished_pending(directory.path());
  for (const auto& pending : driver::stale_pending(directory.path(), orphan_cutoff)) {
    if (auto removed = driver::remove_folder(pending); removed)
      ++result.swept;
    else
      result.note_not_removed(removed.failure().message);
  }
  for (const auto& temporary : driver::stale_temporaries(directory.path(), orphan_cutoff)) {
    std::error_code ec;
    if (std::filesystem::remove(temporary, ec))
      ++result.swept;
    else if (ec)
      result.note_not_removed(temporary.string() + ": " + ec.message());
  }

  // One recency order over entries and driver folders; a driver folder
  // counts towards the byte bound, not the entry bound.
  struct Candidate {
    int64_t last_used_ms;
    std::string name;
    const ScannedEntry* entry;  // null for a driver folder and a row
    const driver::Folder* folder;
    uint64_t bytes;
    bool row = false;           // a row of the SQLite store
  };
  const std::vector<driver::Folder> folders = driver::list(directory.path());
  std::vector<StoredEntryUse> rows;
  if (store != nullptr) {
    auto uses = store->uses();
    if (!uses) return uses.failure();  // an unreadable database: nothing evicted blind
    rows = std::move(*uses);
  }
  std::vector<Candidate> candidates;
  candidates.reserve(complete.size() + folders.size() + rows.size());
  uint64_t bytes = 0;
  for (const auto* e : complete) candidates.push_back({e->last_used_ms(), e->key, e, nullptr, e->bytes()});
  for (const auto& f : folders) candidates.push_back({f.last_used_ms, f.id, nullptr, &f, f.bytes});
  for (const auto& r : rows) candidates.push_back({r.last_used_ms, r.key, nullptr, nullptr, r.bytes, true});
  for (const auto& c : candidates) bytes += c.bytes;
  // Driver data outside the fingerprint folders (pending folders of first
  // starts, selection records) counts too, though only cleanup's sweep of
  // stale pending folders removes it.
  uint64_t folder_bytes = 0;
  for (const auto& f : folders) folder_bytes += f.bytes;
  const uint64_t driver_bytes = driver::total_bytes(directory.path());
  const uint64_t other_driver_bytes = driver_bytes > folder_bytes ? driver_bytes - folder_bytes : 0;
  bytes += other_driver_bytes;
  uint64_t entries = complete.size() + rows.size();

  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.last_used_ms != b.last_used_ms) return a.last_used_ms < b.last_used_ms;
    return a.name < b.name;
  });
  const bool over_bytes = policy.max_bytes && bytes > *policy.max_bytes;
  const bool over_entries = policy.max_entries && entries > *policy.max_entries;
  const uint64_t target_bytes = over_bytes ? bound_target(*policy.max_bytes, policy.low_water) : UINT64_MAX;
  const uint64_t target_entries = over_entries ? bound_target(*policy.max_entries, policy.low_water) : UINT64_MAX;
  const int64_t unused_cutoff = policy.older_than_ms ? now - *policy.older_than_ms : INT64_MIN;

  for (const auto& c : candidates) {
    bool too_old = c.last_used_ms < unused_cutoff;
    // Sorted oldest first: once one may stay, so may all that follow.
    if (!too_old && bytes <= target_bytes && entries <= target_entries) break;
    if (c.folder != nullptr) {
      // Over the entry bound alone, a driver folder's eviction would not help.
      if (!too_old && bytes <= target_bytes) continue;
      if (auto removed = driver::remove_folder(c.folder->path); !removed) {
        result.note_not_removed(removed.failure().message);
        continue;
      }
      ++result.driver_evicted;
      result.bytes_freed += c.bytes;
      bytes -= c.bytes;
      continue;
    }
    if (c.row) {
      // Removed only if not used since it was listed; one statement, so no
      // reader sees half of it.
      auto evicted = store->evict(c.name, c.last_used_ms);
      if (!evicted) {
        result.note_not_removed(evicted.failure().message);
        continue;
      }
      if (!*evicted) continue;  // used (or replaced) since: it stays
      ++result.evicted;
      result.bytes_freed += c.bytes;
      bytes -= c.bytes;
      --entries;
      continue;
    }
    const ScannedEntry* e = c.entry;
    auto stripe = directory.stripe_lock(e->key, sys::FileLock::Mode::try_only);
    if (!stripe) {
      note_unlocked(stripe.failure(), e->key, result);
      continue;
    }
    sys::FileFacts meta_now = sys::file_facts_at(dirfd, e->commit_name(), rule);
    if (meta_now.exists && meta_now.mtime_ms != e->commit().mtime_ms) continue;  // used or rewritten since the scan
    if (meta_now.exists) {
      if (auto removed = remove_entry_files(dirfd, e->key, rule); !removed) {
        result.note_not_removed(removed.failure().message);
        continue;  // still there: still counted
      }
      ++result.evicted;
      result.bytes_freed += e->bytes();
    }
    bytes -= e->bytes();
    --entries;
  }
  result.entries = entries;
  result.bytes = bytes;
  // The estimate holds the entries alone: the driver data is measured when
  // the bounds are checked (bounded_size), since the driver grows it without
  // telling. A failure leaves the old estimate, which the next cleanup
  // corrects.
  uint64_t driver_left = other_driver_bytes;
  for (const auto& f : folders)
    if (std::filesystem::exists(f.path)) driver_left += f.bytes;
  const uint64_t entry_bytes = bytes > driver_left ? bytes - driver_left : 0;
  if (stats)
    (void)set_usage_after_scan(*stats, Usage{static_cast<int64_t>(entry_bytes), static_cast<int64_t>(entries), now},
                             usage_before);
  return result;
}

}  // namespace vyre::aot
