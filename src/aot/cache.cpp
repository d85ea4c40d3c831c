// Lookups and publication: the path every dispatch takes.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>

#include "aot/cache_impl.hpp"
#include "aot/entry/entry.hpp"
#include "aot/remote_lookup.hpp"
#include "aot/tier_lookup.hpp"
#include "sys/deadline.hpp"
#include "util/log.hpp"
#include "util/stopwatch.hpp"
#include "vyre/error.hpp"
#include "vyre/lower.hpp"

namespace vyre::aot {
namespace {

std::string short_key(const std::string& key) { return key.substr(0, 16); }

}  // namespace

Cache::Impl::Impl(CacheOptions opts) : options(std::move(opts)) {
  last_flush_ms = sys::now_unix_ms();
  // Keys first: they decide which directories and remote entries are trusted.
  bool trust_unusable = false;
  if (!options.trusted_keys.empty()) {
    if (auto loaded = TrustedKeys::load(options.trusted_keys)) {
      trusted = *loaded;
    } else {
      // Fail closed: without the keys nothing that needs a signature is served.
      trust_unusable = true;
      log::warn_once("aot-trusted-keys", "AOT cache: VYRE_AOT_TRUSTED_KEYS unusable (" + loaded.failure().message +
                                             "); the remote tier and layers of other users are not used");
    }
  }
  if (options.signing_key) {
    if (auto loaded = EntrySigner::load(*options.signing_key))
      signer = *loaded;
    else
      log::warn_once("aot-signing-key", "AOT cache: VYRE_AOT_SIGNING_KEY unusable (" + loaded.failure().message +
                                            "); entries are published unsigned");
  }
  const bool signatures_trusted = trusted != nullptr;
  if (options.directory) {
    if (auto opened = CacheDirectory::open_writable(*options.directory, signatures_trusted)) {
      writable = opened->get();
      directory = writable->path();
      store = choose_store(writable->path(), options.store, options.shared_file_system);
      writable->set_shared_file_system(store.file_system.network);
      DirectoryTierOptions local_options{
          sys::saturating_millis(options.recency_granularity), options.on_publish_step};
      auto tier = std::make_unique<DirectoryTier>(std::move(*opened), std::move(local_options));
      if (writable->signed_only()) tier->set_trusted_keys(trusted);
      if (store.store == CacheStore::sqlite && writable->signed_only()) {
        // The database is one file of one user's: a team's directory keeps files.
        store.store = CacheStore::directory;
        store.reason += "; a shared (signed-only) directory keeps files, each entry signed";
      }
      if (store.store == CacheStore::sqlite) open_sqlite();
      // The directory tier owns the directory either way; with the SQLite
      // store it holds the locks, stats and driver data, not entries.
      // Files only where files were chosen: a database that would not open
      // leaves no local store at all (open_sqlite()).
      const bool files = store.store == CacheStore::directory;
      if (files) local = tier.get();
      directory_tier = std::move(tier);
      if (files) owned_tiers.push_back(std::move(directory_tier));
    } else {
      log::warn_once("aot-directory", "AOT cache disabled: " + opened.failure().message +
                                          ". Programs are lowered on every run; set VYRE_AOT_CACHE_DIR to a "
                                          "directory of your own to cache them.");
    }
  }
  for (const auto& path : options.readonly_directories) {
    if (auto layer = CacheDirectory::open_readonly(path, signatures_trusted)) {
      auto tier = std::make_unique<DirectoryTier>(std::move(*layer));
      const bool signed_only = tier->directory().signed_only();
      if (signed_only) tier->set_trusted_keys(trusted);
      CacheDirectory& layer_directory = tier->directory();
      owned_tiers.push_back(std::move(tier));
      open_sqlite_layer(layer_directory, signed_only);
    } else {
      log::warn_once("aot-readonly:" + path.string(), "AOT cache: read-only layer skipped: " + layer.failure().message);
    }
  }
  if (options.remote && !trust_unusable) {
    if (auto opened = RemoteTier::open(*options.remote, trusted)) {
      remote = opened->get();
      owned_tiers.push_back(std::move(*opened));
    } else {
      log::warn_once("aot-remote-url", "AOT cache: remote tier not used: " + opened.failure().message);
    }
  }
  for (const auto& tier : owned_tiers)
    if (tier.get() != remote) nearby.push_back(tier.get());
  own_entries_trusted = !trusted || trusted->accepts(signer.get());
  if (!own_entries_trusted && (remote != nullptr || (writable != nullptr && writable->signed_only())))
    log::warn_once("aot-unsigned-among-trusted",
                   "AOT cache: VYRE_AOT_TRUSTED_KEYS is set but this process signs with no key it trusts "
                   "(VYRE_AOT_SIGNING_KEY), so what it lowers would be refused there: it publishes nothing to " +
                       std::string(remote != nullptr ? "the remote tier" : "the signed-only directory") +
                       " and never replaces the entries trusted readers use");
  register_for_fork(this);
}

void Cache::Impl::open_sqlite() {
  if (store.file_system.network)
    log::warn_once("aot-sqlite-network", "AOT cache: VYRE_AOT_CACHE_STORE=sqlite on " + store.file_system.type +
                                             ", a network file system: SQLite's locks may not hold across machines "
                                             "there (its rollback journal is used); one writer machine at a time");
  auto opened = SqliteTier::open(*writable, store.file_system.network, options.sqlite_wal, sys::saturating_millis(options.recency_granularity));
  if (!opened) {
    // No entries in files beside the database instead: they would be split
    // between two stores, and later runs would not see these. The cache
    // never fails a dispatch for want of its database: it lowers.
    log::warn_once("aot-sqlite", "AOT cache: the SQLite store is not usable (" + opened.failure().message +
                                     "); programs are lowered and nothing is stored in " + writable->path().string() +
                                     " by this process");
    store.reason += "; the database could not be opened: nothing stored";
    return;
  }
  if (writable->signed_only()) (*opened)->set_trusted_keys(trusted);
  sqlite = opened->get();
  local = sqlite;
  owned_tiers.push_back(std::move(*opened));
}

void Cache::Impl::open_sqlite_layer(CacheDirectory& layer, bool signed_only) {
  // A layer made by a writer with the SQLite store (an image's or a CI
  // account's) has its entries in the database: read it beside any files.
  struct stat st {};
  if (::fstatat(layer.fd(), kSqliteStoreName, &st, AT_SYMLINK_NOFOLLOW) != 0) return;
  auto opened = SqliteTier::open(layer, false, false, sys::saturating_millis(options.recency_granularity));
  if (!opened) {
    log::warn_once("aot-readonly-sqlite:" + layer.path().string(),
                   "AOT cache: the database of read-only layer " + layer.path().string() + " is not used: " +
                       opened.failure().message);
    return;
  }
  if (signed_only) (*opened)->set_trusted_keys(trusted);
  owned_tiers.push_back(std::move(*opened));
}

bool Cache::Impl::may_publish_to(const StorageTier& tier) const {
  if (own_entries_trusted || !tier.writable()) return tier.writable();
  if (&tier == remote) return false;
  if (&tier == sqlite) return !writable->signed_only();
  const auto* dir = dynamic_cast<const DirectoryTier*>(&tier);
  return dir == nullptr || !dir->directory().signed_only();
}

Metadata Cache::Impl::metadata_for(const KeyParts& parts, std::string_view label, std::string_view wgsl,
                                   double lower_ms) const {
  Metadata meta = make_metadata(parts, label, wgsl, lower_ms);
  if (signer) meta.signature = signer->sign(meta);
  return meta;
}

std::optional<Entry> Cache::Impl::find_nearby(const std::string& key, Counters& delta) {
  auto found = find_in_tiers(nearby, key, Use::serve, [&](StorageTier& tier, const sys::Failure& failure) {
    if (failure.kind == sys::Fault::untrusted) ++delta.rejected;
    if (is_bad_entry(failure)) {
      ++delta.bad_entries;
      log::warn_once("aot-bad-entry:" + tier.location().string(),
                     "AOT cache: bad entry " + short_key(key) + "... in " + tier.location().string() + " (" +
                         failure.message + ")" + (tier.writable() ? "; it is replaced" : "; it is skipped") +
                         ". `vyre cache verify` checks every entry.");
    } else {
      ++delta.errors;
      log::warn_once("aot-read:" + tier.location().string(), "AOT cache: cannot read " + tier.location().string() +
                                                                 " (" + failure.message + "); lowering instead");
    }
  });
  if (!found) return std::nullopt;
  return std::move(found->entry);
}

Artifact Cache::Impl::serve(Entry&& entry, Artifact& artifact, Counters& delta) {
  ++delta.hits;
  delta.time_saved_us += static_cast<uint64_t>(std::max(0.0, entry.meta.lower_ms) * 1000.0);
  artifact.text = std::move(entry.text);
  artifact.cache_hit = true;
  count(delta);
  maybe_flush_in_background();
  return std::move(artifact);
}

void Cache::Impl::lower_timed(const std::function<std::string()>& make, Artifact& artifact, Counters& delta) {
  ++delta.misses;
  const Clock::time_point start = Clock::now();
  artifact.text = make();
  artifact.lower_ms = ms_since(start);
  delta.lowering_us += static_cast<uint64_t>(artifact.lower_ms * 1000.0);
}

bool Cache::Impl::has_writable_nearby() const {
  return std::any_of(nearby.begin(), nearby.end(), [&](const StorageTier* tier) { return may_publish_to(*tier); });
}

void Cache::Impl::publish_nearby(const Metadata& meta, std::string_view text, Counters& delta) {
  for (StorageTier* tier : nearby) {
    if (!may_publish_to(*tier)) continue;
    auto stored = tier->put(meta, text);
    if (stored) {
      if (!stored->written) continue;  // a good entry was there already
      ++delta.writes;
      delta.bytes_written += stored->bytes;
      if (tier == local) record_growth(static_cast<int64_t>(stored->bytes), 1);
    } else if (stored.failed_with(sys::Fault::too_large)) {
      log::warn_once("aot-skipped", "AOT cache: not caching " + short_key(meta.key) + "...: " + stored.failure().message);
    } else {
      ++delta.errors;
      // One warning per directory, whichever store: the SQLite store's
      // refused commit and a refused flush of the counters beside it are
      // the same news (a full or read-only directory).
      warn_unwritable(tier == local && writable ? writable->path() : tier->location(), stored.failure().message);
    }
  }
}

Cache::Impl::~Impl() {
  unregister_for_fork(this);
  bool cleanup_requested = false;
  {
    std::lock_guard lock(worker_mutex);
    worker_stop = true;
  }
  worker_wake.notify_all();
  if (worker.joinable()) worker.join();
  {
    std::lock_guard lock(worker_mutex);
    cleanup_requested = worker_cleanup;
  }
  // Best effort: a destructor must not throw.
  try {
    if (cleanup_requested)
      cleanup_now();
    else
      check_bounds_at_exit();
    flush_pending(/*last=*/true);
  } catch (...) {
  }
}

void Cache::Impl::count(const Counters& delta) {
  std::lock_guard lock(pending_mutex);
  pending += delta;
  if (remote) pending.remote += remote->drain();
}

CleanupPolicy Cache::Impl::cleanup_policy() const {
  CleanupPolicy policy;
  if (options.max_bytes != 0) policy.max_bytes = options.max_bytes;
  if (options.max_entries != 0) policy.max_entries = options.max_entries;
  policy.grace_ms = sys::saturating_millis(options.orphan_grace).count();
  return policy;
}

std::vector<StorageTier*> Cache::Impl::tiers() const {
  std::vector<StorageTier*> out;
  for (const auto& tier : owned_tiers) out.push_back(tier.get());
  return out;
}

std::vector<CacheDirectory*> Cache::Impl::layers() const {
  std::vector<CacheDirectory*> out;
  for (const auto& tier : owned_tiers)
    if (auto* dir = dynamic_cast<DirectoryTier*>(tier.get())) out.push_back(&dir->directory());
  return out;
}

CacheDirectory& Cache::Impl::require_writable() const {
  if (!writable)
    throw Error(ErrorKind::io,
                "no writable AOT cache directory: set VYRE_AOT_CACHE_DIR (or XDG_CACHE_HOME or HOME) to a directory "
                "of your own");
  return *writable;
}

void Cache::Impl::flush_pending(bool last) {
  std::lock_guard flush_lock(flush_mutex);
  last_flush_ms = sys::now_unix_ms();
  if (!writable) return;
  Counters delta;
  {
    std::lock_guard lock(pending_mutex);
    std::swap(delta, pending);
  }
  if (delta.empty()) return;
  auto stats = writable->stats_fd();
  sys::Result<void> added = stats ? add_to_shard(*stats, delta) : sys::Result<void>(stats.failure());
  if (added) return;
  // One warning per directory for the writes it refuses, whichever comes
  // first (warn_unwritable), each saying only what is true of itself.
  log::warn_once("aot-write:" + writable->path().string(),
                 "AOT cache: cannot write statistics under " + writable->path().string() + "/.stats (" +
                     added.failure().message + "); they are kept and written when it can be");
  if (!last) {
    // Kept for a later flush (a fixed number of counters): a directory
    // full or read-only for a while loses no count of a process that
    // outlives it.
    std::lock_guard lock(pending_mutex);
    pending += delta;
  } else if (stats) {
    note_lost_flush(*stats, added.failure().message);
  }
}

void Cache::Impl::warn_unwritable(const std::filesystem::path& where, const std::string& problem) const {
  log::warn_once("aot-write:" + where.string(),
                 "AOT cache: " + problem + "; programs not in the cache are lowered on every run");
}

void Cache::Impl::record_growth(int64_t bytes, int64_t entries) {
  if (!writable) return;
  auto stats = writable->stats_fd();
  if (!stats) return;
  auto added = add_usage(*stats, bytes, entries);
  if (!added) return;
  const Usage& usage = *added;
  const CleanupPolicy policy = cleanup_policy();
  if (bounded_size(*writable, usage).over(policy)) {
    // Over a bound: this writer cleans before it goes on (waiting for a
    // cleanup that runs), so the cache holds at most one entry per
    // concurrent writer above the bound (docs/cache.md).
    cleanup_now(sys::FileLock::Mode::wait);
    return;
  }
  const bool stale = usage.scanned_unix_ms == 0 || sys::now_unix_ms() - usage.scanned_unix_ms > kRescanIntervalMs;
  if (stale) wake_worker(false, true);
}

void Cache::Impl::cleanup_now(sys::FileLock::Mode lock_mode) {
  if (!writable) return;
  CleanupPolicy policy = cleanup_policy();
  const bool waiting = lock_mode == sys::FileLock::Mode::wait;
  policy.only_if_over = waiting;  // another writer's cleanup may have done it
  // Waiting is bounded: a cleanup that runs longer (a huge directory, a
  // stopped process holding the lock) is as good as this one.
  const int64_t deadline = sys::now_unix_ms() + kCleanupWaitMs;
  auto ran = run_cleanup(*writable, policy, sys::FileLock::Mode::try_only, sqlite);
  while (waiting && !ran && ran.failed_with(sys::Fault::busy) && sys::now_unix_ms() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ran = run_cleanup(*writable, policy, sys::FileLock::Mode::try_only, sqlite);
  }
  if (!ran) return;  // another process is cleaning: as good
  const CleanupResult& cleaned = *ran;
  Counters evictions;
  evictions.evictions = cleaned.evicted;
  if (cleaned.evicted > 0) count(evictions);
  log::debug("AOT cache cleanup: {} evicted ({} bytes), {} swept, {} entries left", cleaned.evicted,
             cleaned.bytes_freed, cleaned.swept, cleaned.entries);
}

// The driver grows its data without telling: a process that used it checks
// the byte bound once more at its end.
void Cache::Impl::check_bounds_at_exit() {
  if (!writable || options.max_bytes == 0) return;
  auto stats = writable->stats_fd();
  if (!stats) return;
  if (bounded_size(*writable, read_usage(*stats)).over(cleanup_policy())) cleanup_now(sys::FileLock::Mode::try_only);
}

void Cache::Impl::maybe_flush_in_background() {
  const int64_t interval = options.stats_flush_interval.count();
  if (sys::now_unix_ms() - last_flush_ms.load(std::memory_order_relaxed) < interval) return;
  wake_worker(true, false);
}

void Cache::Impl::wake_worker(bool flush, bool cleanup) {
  std::lock_guard lock(worker_mutex);
  worker_flush = worker_flush || flush;
  worker_cleanup = worker_cleanup || cleanup;
  if (worker_stop) return;  // the destructor runs what is left
  if (!worker.joinable()) {
    worker_started = false;
    worker = std::thread([this] { worker_loop(); });
  }
  worker_wake.notify_one();
}

void Cache::Impl::before_fork() {
  std::unique_lock lock(worker_mutex);
  // At rest, the worker holds no lock but this one, which it waits for; a
  // worker still starting is waited for until it runs its loop.
  worker_idle.wait(lock, [&] { return !worker_busy && (!worker.joinable() || worker_started); });
  lock.release();  // held across fork(): after_fork() unlocks it
}

void Cache::Impl::after_fork(bool in_child) {
  if (in_child) {
    // The worker thread is the parent's. In the child its handle is ended
    // in place, never joined nor detached (a call on a thread the child
    // does not have), and so are the condition variables it waited on:
    // glibc counts the parent's waiter in them, and destroying one with a
    // waiter blocks for ever. The child's next flush or cleanup starts a
    // worker of its own; one asked for and not started is the destructor's.
    if (worker.joinable()) new (&worker) std::thread();
    worker_started = false;
    new (&worker_wake) std::condition_variable();
    new (&worker_idle) std::condition_variable();
  }
  worker_mutex.unlock();
}

void Cache::Impl::worker_loop() {
  std::unique_lock lock(worker_mutex);
  worker_started = true;
  worker_idle.notify_all();
  for (;;) {
    worker_wake.wait(lock, [&] { return worker_stop || worker_flush || worker_cleanup; });
    if (worker_stop) break;
    bool flush = std::exchange(worker_flush, false);
    bool cleanup = std::exchange(worker_cleanup, false);
    worker_busy = true;
    lock.unlock();
    try {
      if (cleanup) cleanup_now();
      if (flush || cleanup) flush_pending();
    } catch (const std::exception& e) {
      log::warn_once("aot-background", std::string("AOT cache background maintenance failed: ") + e.what());
    }
    lock.lock();
    worker_busy = false;
    worker_idle.notify_all();
  }
  worker_busy = false;
  worker_idle.notify_all();
}

void Cache::Impl::wait_idle() {
  std::unique_lock lock(worker_mutex);
  worker_idle.wait(lock, [&] { return !worker_busy && !worker_cleanup; });
}

// ---- Cache ---------------------------------------------------------------

Cache::Cache(CacheOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Cache::~Cache() = default;
Cache::Cache(Cache&&) noexcept = default;
Cache& Cache::operator=(Cache&&) noexcept = default;

Cache Cache::from_environment() { return Cache(CacheOptions::from_environment()); }

const std::optional<std::filesystem::path>& Cache::directory() const { return impl_->directory; }
const CacheOptions& Cache::options() const { return impl_->options; }

Artifact Cache::load_or_compile(const CheckedProgram& program, std::string_view fingerprint,
                                const ShaderOptions& options) {
  return load_or_compile(
      key_parts(program, fingerprint, options), [&] { return lower_to_wgsl(program, options); }, program.name());
}

Artifact Cache::load_or_compile(const KeyParts& parts, const std::function<std::string()>& lower) {
  return load_or_compile(parts, lower, {});
}

// The lookup, as it reads: the local directory and the read-only layers in
// order, then the remote step (leases, rejections, backfill); on a miss
// everywhere, lower once and publish where it can be written. Each tier
// answers with a Result and never throws (StorageTier's boundary), so a
// tier in trouble costs a lookup in the next, never the dispatch.
Artifact Cache::load_or_compile(const KeyParts& parts, const std::function<std::string()>& make,
                                std::string_view program_label) {
  Impl& impl = *impl_;
  Artifact artifact;
  artifact.key = parts.key();
  Counters delta;

  if (auto found = impl.find_nearby(artifact.key, delta)) return impl.serve(std::move(*found), artifact, delta);

  RemoteLookup remote(impl.remote, impl.remote != nullptr && impl.may_publish_to(*impl.remote), artifact.key, delta);
  if (auto found = remote.find()) {
    impl.publish_nearby(found->meta, found->text, delta);  // backfill: the next run finds it on disk
    return impl.serve(std::move(*found), artifact, delta);
  }

  impl.lower_timed(make, artifact, delta);  // a lowering error is the program's: it propagates
  if (impl.has_writable_nearby() || remote.wants_publication()) {
    const Metadata meta = impl.metadata_for(parts, program_label, artifact.text, artifact.lower_ms);
    impl.publish_nearby(meta, artifact.text, delta);
    remote.publish(meta, artifact.text);
  }
  impl.count(delta);
  impl.maybe_flush_in_background();
  return artifact;
}

Artifact Cache::replace(const KeyParts& parts, const std::function<std::string()>& make, std::string_view program_label) {
  Impl& impl = *impl_;
  Artifact artifact;
  artifact.key = parts.key();
  Counters delta;
  impl.lower_timed(make, artifact, delta);
  const Metadata meta = impl.metadata_for(parts, program_label, artifact.text, artifact.lower_ms);
  for (StorageTier* tier : impl.tiers()) {
    if (!impl.may_publish_to(*tier)) continue;
    (void)tier->remove(artifact.key, /*only_if_bad=*/false);
    auto stored = tier->put(meta, artifact.text);
    if (stored && stored->written && tier != impl.remote) {
      ++delta.writes;
      delta.bytes_written += stored->bytes;
    }
  }
  log::debug("AOT cache: entry {}... made afresh and replaced", short_key(artifact.key));
  impl.count(delta);
  return artifact;
}

std::vector<RemotePing> Cache::remote_ping() {
  if (impl_->remote == nullptr) return {};
  return impl_->remote->ping();
}

void Cache::flush() {
  impl_->wait_idle();
  impl_->flush_pending();
}

}  // namespace vyre::aot
