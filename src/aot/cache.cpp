// Lookups and publication: the path every dispatch takes.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "aot/cache_impl.hpp"
#include "aot/entry/entry.hpp"
#include "aot/tier_lookup.hpp"
#include "sys/deadline.hpp"
#include "util/log.hpp"
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
      DirectoryTierOptions local_options{
          sys::saturating_millis(options.recency_granularity), options.on_publish_step};
      auto tier = std::make_unique<DirectoryTier>(std::move(*opened), std::move(local_options));
      if (writable->signed_only()) tier->set_trusted_keys(trusted);
      local = tier.get();
      tiers.push_back(std::move(tier));
    } else {
      log::warn_once("aot-directory", "AOT cache disabled: " + opened.failure().message +
                                          ". Programs are lowered on every run; set VYRE_AOT_CACHE_DIR to a "
                                          "directory of your own to cache them.");
    }
  }
  for (const auto& path : options.readonly_directories) {
    if (auto layer = CacheDirectory::open_readonly(path, signatures_trusted)) {
      auto tier = std::make_unique<DirectoryTier>(std::move(*layer));
      if (tier->directory().signed_only()) tier->set_trusted_keys(trusted);
      tiers.push_back(std::move(tier));
    } else {
      log::warn_once("aot-readonly:" + path.string(), "AOT cache: read-only layer skipped: " + layer.failure().message);
    }
  }
  if (options.remote && !trust_unusable) {
    if (auto opened = RemoteTier::open(*options.remote, trusted)) {
      remote = opened->get();
      tiers.push_back(std::move(*opened));
    } else {
      log::warn_once("aot-remote-url", "AOT cache: remote tier not used: " + opened.failure().message);
    }
  }
}

Metadata Cache::Impl::metadata_for(const KeyParts& parts, std::string_view label, std::string_view wgsl,
                                   double lower_ms) const {
  Metadata meta = make_metadata(parts, label, wgsl, lower_ms);
  if (signer) meta.signature = signer->sign(meta);
  return meta;
}

void Cache::Impl::backfill(const Entry& entry, Counters& delta) {
  if (!local) return;
  try {
    auto stored = local->put(entry.meta, entry.wgsl);
    if (stored && stored->written) {
      ++delta.writes;
      delta.bytes_written += stored->bytes;
      record_growth(static_cast<int64_t>(stored->bytes), 1);
    } else if (!stored && !stored.failed_with(sys::Fault::too_large)) {
      ++delta.errors;
      warn_unwritable(local->location(), stored.failure().message);
    }
  } catch (const std::exception& e) {
    ++delta.errors;
    log::warn_once("aot-write-exception", std::string("AOT cache: backfill failed: ") + e.what());
  }
}

Cache::Impl::~Impl() {
  bool cleanup_requested = false;
  {
    std::lock_guard lock(worker_mutex);
    worker_stop = true;
  }
  worker_wake.notify_all();
  if (worker.joinable()) {
    if (worker_pid == ::getpid())
      worker.join();
    else
      worker.detach();  // forked child: the worker thread exists only in the parent
  }
  {
    std::lock_guard lock(worker_mutex);
    cleanup_requested = worker_cleanup;
  }
  // Best effort: a destructor must not throw.
  try {
    if (cleanup_requested) cleanup_now();
    flush_pending();
  } catch (...) {
  }
}

void Cache::Impl::count(const Counters& delta) {
  std::lock_guard lock(pending_mutex);
  pending += delta;
  if (remote) {
    const TierCounters r = remote->drain();
    pending.remote_hits += r.hits;
    pending.remote_misses += r.misses;
    pending.remote_writes += r.writes;
    pending.remote_errors += r.errors;
    pending.remote_timeouts += r.timeouts;
    pending.remote_rejected += r.rejected;
  }
}

CleanupPolicy Cache::Impl::cleanup_policy() const {
  CleanupPolicy policy;
  if (options.max_bytes != 0) policy.max_bytes = options.max_bytes;
  if (options.max_entries != 0) policy.max_entries = options.max_entries;
  policy.grace_ms = sys::saturating_millis(options.orphan_grace).count();
  return policy;
}

std::vector<StorageTier*> Cache::Impl::tier_order() const {
  std::vector<StorageTier*> out;
  for (const auto& tier : tiers) out.push_back(tier.get());
  return out;
}

std::vector<CacheDirectory*> Cache::Impl::layers() const {
  std::vector<CacheDirectory*> out;
  for (const auto& tier : tiers)
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

void Cache::Impl::flush_pending() {
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
  if (!added)
    // Dropped: counters must not grow without bound in a process that cannot write them.
    warn_unwritable(writable->path(), "cannot write statistics under " + writable->path().string() +
                                          "/.stats: " + added.failure().message);
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
  const bool over = (options.max_bytes != 0 && static_cast<uint64_t>(usage.bytes) > options.max_bytes) ||
                    (options.max_entries != 0 && static_cast<uint64_t>(usage.entries) > options.max_entries);
  const bool stale = usage.scanned_unix_ms == 0 || sys::now_unix_ms() - usage.scanned_unix_ms > kRescanIntervalMs;
  if (over || stale) wake_worker(false, true);
}

void Cache::Impl::cleanup_now() {
  if (!writable) return;
  auto ran = run_cleanup(*writable, cleanup_policy(), sys::FileLock::Mode::try_only);
  if (!ran) return;  // another process is cleaning: as good
  const CleanupResult& cleaned = *ran;
  Counters evictions;
  evictions.evictions = cleaned.evicted;
  if (cleaned.evicted > 0) count(evictions);
  log::debug("AOT cache cleanup: {} evicted ({} bytes), {} swept, {} entries left", cleaned.evicted,
             cleaned.bytes_freed, cleaned.swept, cleaned.entries);
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
    worker_pid = ::getpid();
    worker = std::thread([this] { worker_loop(); });
  }
  worker_wake.notify_one();
}

void Cache::Impl::worker_loop() {
  std::unique_lock lock(worker_mutex);
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

Artifact Cache::load_or_compile(const KeyParts& parts, const std::function<std::string()>& lower,
                                std::string_view program_label) {
  Impl& impl = *impl_;
  Artifact artifact;
  artifact.key = parts.key();
  Counters delta;

  auto note_bad = [&](const StorageTier& tier, const sys::Failure& failure) {
    ++delta.bad_entries;
    log::warn_once("aot-bad-entry:" + tier.location().string(),
                   "AOT cache: bad entry " + short_key(artifact.key) + "... in " + tier.location().string() + " (" +
                       failure.message + ")" + (tier.writable() ? "; it is replaced" : "; it is skipped") +
                       ". `vyre cache verify` checks every entry.");
  };
  auto note_error = [&](const StorageTier& tier, const sys::Failure& failure) {
    ++delta.errors;
    log::warn_once("aot-read:" + tier.location().string(), "AOT cache: cannot read " + tier.location().string() +
                                                               " (" + failure.message + "); lowering instead");
  };

  // The remote tier answers for itself (RemoteTier counts its hits, misses,
  // errors and rejections); a remote that failed in this lookup is not asked
  // again in it, so a dispatch waits on the network at most once.
  bool remote_failed = false;
  const std::vector<StorageTier*> tiers = impl.tier_order();
  auto found = find_in_tiers(tiers, artifact.key, Use::serve, [&](StorageTier& tier, const sys::Failure& failure) {
    if (&tier == impl.remote) {
      if (!is_bad_entry(failure)) {
        remote_failed = true;
        return;
      }
      if (failure.kind == sys::Fault::untrusted) ++delta.rejected;
      log::warn_once("aot-remote-rejected:" + tier.location().string(),
                     "AOT cache: rejected entry " + short_key(artifact.key) + "... from " + tier.location().string() +
                         " (" + failure.message + "); lowering instead");
      return;
    }
    if (failure.kind == sys::Fault::untrusted) ++delta.rejected;
    if (is_bad_entry(failure))
      note_bad(tier, failure);
    else
      note_error(tier, failure);
  });

  auto serve = [&](Entry&& entry, bool from_remote) {
    if (from_remote) impl.backfill(entry, delta);
    ++delta.hits;
    delta.time_saved_us += static_cast<uint64_t>(std::max(0.0, entry.meta.lower_ms) * 1000.0);
    artifact.wgsl = std::move(entry.wgsl);
    artifact.cache_hit = true;
    impl.count(delta);
    impl.maybe_flush_in_background();
    return artifact;
  };
  if (found) return serve(std::move(found->entry), found->tier == impl.remote && impl.remote != nullptr);

  // A fleet lowers each program once: claim the lowering, or wait a bounded
  // time for the worker that has.
  RemoteTier* remote = impl.remote != nullptr && impl.remote->writable() && !remote_failed ? impl.remote : nullptr;
  bool leased = false;
  if (remote != nullptr && remote->options().lease_wait.count() > 0) {
    switch (remote->claim(artifact.key)) {
      case RemoteTier::Claim::taken:
        if (auto entry = remote->wait_for(artifact.key, remote->options().lease_wait)) return serve(std::move(*entry), true);
        break;
      case RemoteTier::Claim::owned:
        leased = true;
        // Published between the lookup and the claim?
        if (auto entry = remote->recheck(artifact.key)) {
          remote->release(artifact.key);
          return serve(std::move(*entry), true);
        }
        break;
      case RemoteTier::Claim::unavailable: remote = nullptr; break;
    }
  }
  struct LeaseGuard {
    RemoteTier* remote;
    std::string key;  // a copy: `artifact` may be moved out by the return
    ~LeaseGuard() {
      if (remote != nullptr) remote->release(key);
    }
  } lease_guard{leased ? remote : nullptr, artifact.key};

  ++delta.misses;
  const auto start = std::chrono::steady_clock::now();
  artifact.wgsl = lower();  // a lowering error is the program's, not the cache's: it propagates
  artifact.lower_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  delta.lowering_us += static_cast<uint64_t>(artifact.lower_ms * 1000.0);

  std::optional<Metadata> meta;
  for (StorageTier* tier : tiers) {
    if (!tier->writable()) continue;
    const bool is_remote = tier == impl.remote;
    if (is_remote && remote == nullptr) continue;  // it failed in this lookup
    try {
      if (!meta) meta = impl.metadata_for(parts, program_label, artifact.wgsl, artifact.lower_ms);
      auto stored = tier->put(*meta, artifact.wgsl);
      if (stored) {
        if (!stored->written || is_remote) continue;  // the remote counts its own writes
        ++delta.writes;
        delta.bytes_written += stored->bytes;
        if (tier == impl.local) impl.record_growth(static_cast<int64_t>(stored->bytes), 1);
      } else if (stored.failed_with(sys::Fault::too_large)) {
        log::warn_once("aot-skipped",
                       "AOT cache: not caching " + short_key(artifact.key) + "...: " + stored.failure().message);
      } else if (!is_remote) {
        ++delta.errors;
        impl.warn_unwritable(tier->location(), stored.failure().message);
      }
    } catch (const std::exception& e) {
      ++delta.errors;
      log::warn_once("aot-write-exception", std::string("AOT cache: publication failed: ") + e.what());
    }
  }
  impl.count(delta);
  impl.maybe_flush_in_background();
  return artifact;
}

Artifact Cache::replace(const KeyParts& parts, const std::function<std::string()>& lower, std::string_view program_label) {
  Impl& impl = *impl_;
  Artifact artifact;
  artifact.key = parts.key();
  Counters delta;
  ++delta.misses;
  const auto start = std::chrono::steady_clock::now();
  artifact.wgsl = lower();
  artifact.lower_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  delta.lowering_us += static_cast<uint64_t>(artifact.lower_ms * 1000.0);
  const Metadata meta = impl.metadata_for(parts, program_label, artifact.wgsl, artifact.lower_ms);
  for (StorageTier* tier : impl.tier_order()) {
    if (!tier->writable()) continue;
    try {
      (void)tier->remove(artifact.key, /*only_if_bad=*/false);
      auto stored = tier->put(meta, artifact.wgsl);
      if (stored && stored->written && tier != impl.remote) {
        ++delta.writes;
        delta.bytes_written += stored->bytes;
      }
    } catch (const std::exception& e) {
      ++delta.errors;
      log::warn_once("aot-write-exception", std::string("AOT cache: replacing an entry failed: ") + e.what());
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
