// The cache's tools: stats, listing, verification, pruning, clearing,
// export and import, and explaining a miss.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include "aot/cache_impl.hpp"
#include "aot/local/driver_store.hpp"
#include "aot/entry/entry.hpp"
#include "aot/fingerprint_diff.hpp"
#include "aot/entry/hashing.hpp"
#include "aot/local/publish.hpp"
#include "aot/local/scan.hpp"
#include "aot/tier_lookup.hpp"
#include "sys/deadline.hpp"
#include "sys/remove_at.hpp"
#include "vyre/error.hpp"

namespace vyre::aot {
namespace {

DriverFolderInfo to_info(const driver::Folder& f) {
  return DriverFolderInfo{f.id, f.fingerprint, f.path, f.bytes, f.files, f.last_used_ms, f.ok, f.problem};
}

// The driver folders of the writable directory, after filing the data of
// first starts that have ended under their fingerprints (so that a tool run
// right after a first start sees, and exports, its data).
std::vector<driver::Folder> driver_folders_of(const CacheDirectory* writable) {
  if (writable == nullptr) return {};
  driver::adopt_finished_pending(writable->path());
  return driver::list(writable->path());
}

// The same folders for what only reads (stats, driver_folders, explain):
// nothing is moved.
std::vector<driver::Folder> driver_folders_seen(const CacheDirectory* writable) {
  if (writable == nullptr) return {};
  return driver::list_as_filed(writable->path());
}

}  // namespace

std::string_view to_string(EntryState state) {
  switch (state) {
    case EntryState::ok: return "ok";
    case EntryState::bad: return "bad";
    case EntryState::incomplete: return "incomplete";
    case EntryState::other_format: return "other-format";
  }
  return "unknown";
}

CacheStats Cache::stats() {
  flush();
  CacheStats s;
  if (impl_->remote) s.remote_location = impl_->remote->location().string();
  if (!impl_->writable) return s;
  auto stats_dir = impl_->writable->stats_fd();
  StatsGaps gaps;
  Counters c = stats_dir ? read_all_shards(*stats_dir, &gaps) : Counters{};
  if (!stats_dir) gaps.unreadable_shard = "cannot open " + impl_->writable->path().string() + "/.stats: " +
                                          stats_dir.failure().message;
  s.incomplete = !gaps.empty();
  s.incomplete_reason = gaps.describe();
  s.hits = c.hits;
  s.misses = c.misses;
  s.writes = c.writes;
  s.evictions = c.evictions;
  s.bad_entries = c.bad_entries;
  s.errors = c.errors;
  s.bytes_written = c.bytes_written;
  s.lowering_ms = static_cast<double>(c.lowering_us) / 1000.0;
  s.time_saved_ms = static_cast<double>(c.time_saved_us) / 1000.0;
  s.rejected = c.rejected;
  // Per tier: a remote hit is a lookup the local tiers missed.
  s.local.hits = c.hits - std::min(c.hits, c.remote.hits);
  s.local.misses = c.misses + c.remote.hits;
  s.local.writes = c.writes;
  s.local.errors = c.errors;
  s.local.rejected = c.bad_entries;
  s.remote = c.remote;
  // Without a local store (a database that would not open) nothing is stored.
  if (auto stored = impl_->local != nullptr ? impl_->local->stats() : sys::Result<TierStats>(TierStats{})) {
    s.entries = stored->entries;
    s.bytes = stored->bytes;
  }
  // The versions are in each entry's metadata: a listing reads it (no digests).
  if (auto listed = impl_->local != nullptr ? impl_->local->list({}) : sys::Result<std::vector<EntryInfo>>(std::vector<EntryInfo>{}))
    for (const auto& e : *listed)
      if (e.state == EntryState::ok && !is_current_version(e.parts)) ++s.older_versions;
  for (const auto& f : driver_folders_seen(impl_->writable)) {
    ++s.driver_folders;
    s.driver_bytes += f.bytes;
  }
  s.store = impl_->sqlite != nullptr ? "sqlite" : "directory";
  s.store_reason = impl_->store.reason;
  s.file_system = impl_->store.file_system.type;
  s.shared_file_system = impl_->writable->shared_file_system();
  if (impl_->sqlite != nullptr) s.journal_mode = impl_->sqlite->journal_mode();
  return s;
}

std::vector<DriverFolderInfo> Cache::driver_folders() const {
  std::vector<DriverFolderInfo> out;
  for (const auto& f : driver_folders_seen(impl_->writable)) out.push_back(to_info(f));
  return out;
}

void Cache::zero_stats() {
  flush();
  CacheDirectory& dir = impl_->require_writable();
  auto stats_dir = dir.stats_fd();
  sys::Result<void> zeroed = stats_dir ? zero_all_shards(*stats_dir) : sys::Result<void>(stats_dir.failure());
  if (!zeroed)
    throw Error(ErrorKind::io,
                "cannot reset the statistics in " + dir.path().string() + "/.stats: " + zeroed.failure().message);
}

std::vector<EntryInfo> Cache::list() const {
  std::vector<EntryInfo> out;
  for (StorageTier* tier : impl_->tiers()) {
    auto listed = tier->list({});
    if (!listed) continue;  // an unreadable tier lists nothing
    for (auto& info : *listed) out.push_back(std::move(info));
  }
  return out;
}

std::optional<EntryInfo> Cache::show(std::string_view key, std::string* wgsl) const {
  if (!is_valid_key(key))
    throw Error(ErrorKind::invalid_input, "`" + std::string(key) + "` is not a cache key (64 lowercase hex digits)");
  for (StorageTier* tier : impl_->tiers()) {
    auto listed = tier->list(ListQuery{true, std::string(key)});
    if (!listed || listed->empty()) continue;
    EntryInfo info = std::move(listed->front());
    if (wgsl != nullptr && info.state == EntryState::ok)
      if (auto entry = tier->get(info.key, Use::inspect)) *wgsl = std::move(entry->text);
    return info;
  }
  return std::nullopt;
}

VerifyReport Cache::verify(bool remove_bad) {
  VerifyReport report;
  Counters delta;
  for (StorageTier* tier : impl_->tiers()) {
    auto listed = tier->list(ListQuery{true, std::nullopt});
    // A database that cannot be read is not "no bad entries".
    if (!listed && tier == impl_->sqlite)
      throw Error(ErrorKind::io, "cannot verify " + tier->location().string() + ": " + listed.failure().message);
    if (!listed) continue;
    for (auto& info : *listed) {
      if (info.state == EntryState::incomplete) {
        ++report.incomplete;
        continue;
      }
      ++report.checked;
      if (info.state == EntryState::ok) {
        ++report.good;
        if (!is_current_version(info.parts)) ++report.older_versions;
        continue;
      }
      if (info.state == EntryState::other_format) {
        ++report.other_format;
        continue;
      }
      ++delta.bad_entries;
      if (remove_bad && tier->writable()) {
        auto removed = tier->remove(info.key, /*only_if_bad=*/true);
        if (removed && *removed) {
          ++report.removed;
        } else if (!removed) {
          if (report.not_removed.count++ == 0) report.not_removed.problem = removed.failure().message;
          info.problem += " (not removed: " + removed.failure().message + ")";
        }
      }
      report.bad.push_back(std::move(info));
    }
  }
  // Driver folders: the driver checks its own files; vyre checks that each
  // folder is what its name says.
  {
    for (const auto& f : driver_folders_of(impl_->writable)) {
      ++report.driver_checked;
      if (f.ok) continue;
      DriverFolderInfo info = to_info(f);
      if (remove_bad) {
        if (auto removed = driver::remove_folder(f.path); removed) {
          ++report.removed;
        } else {
          if (report.not_removed.count++ == 0) report.not_removed.problem = removed.failure().message;
          info.problem += " (not removed: " + removed.failure().message + ")";
        }
      }
      report.driver_bad.push_back(std::move(info));
    }
  }
  impl_->count(delta);
  return report;
}

PruneReport Cache::prune(const PruneOptions& options) {
  CacheDirectory& dir = impl_->require_writable();
  flush();
  CleanupPolicy policy = impl_->cleanup_policy();
  if (options.max_bytes) policy.max_bytes = *options.max_bytes;
  if (options.max_entries) policy.max_entries = *options.max_entries;
  // Exactly down to the bounds asked for (0 empties the cache), not to the
  // low-water mark a background cleanup aims at.
  policy.low_water = 1.0;
  if (options.older_than)
    policy.older_than_ms = sys::saturating_millis(*options.older_than).count();
  // Entries of other versions first, each under its stripe. An entry that
  // verifies holds the key parts its key was made of, so what another
  // version wrote stays another version's (no writer of this one can put its
  // own entry at that key): only good entries, read now, are judged.
  uint64_t older_removed = 0;
  uint64_t older_bytes = 0;
  NotRemoved older_left;
  if (options.older_versions && impl_->local != nullptr) {
    auto listed = impl_->local->list(ListQuery{true, std::nullopt});
    if (!listed)
      throw Error(ErrorKind::io, listed.failure().message + "; no entry of another version was removed");
    for (const auto& e : *listed) {
      if (e.state != EntryState::ok || is_current_version(e.parts)) continue;
      auto removed = impl_->local->remove(e.key, /*only_if_bad=*/false);
      if (removed && *removed) {
        ++older_removed;
        older_bytes += e.metadata_bytes + e.wgsl_bytes;
      } else if (!removed && older_left.count++ == 0) {
        older_left.problem = removed.failure().message;
      }
    }
  }
  auto ran = run_cleanup(dir, policy, sys::FileLock::Mode::wait, impl_->sqlite);
  if (!ran)
    throw Error(ErrorKind::io, "cannot take the cleanup lock in " + dir.path().string() + "/.locks: " +
                                   ran.failure().message + "; nothing was pruned");
  const CleanupResult& result = *ran;
  Counters delta;
  delta.evictions = result.evicted + older_removed;
  impl_->count(delta);
  impl_->flush_pending();
  PruneReport report{result.evicted,
                     result.bytes_freed + older_bytes,
                     result.swept,
                     result.driver_evicted,
                     result.entries,
                     result.bytes,
                     NotRemoved{result.not_removed, result.first_problem}};
  report.older_versions_removed = older_removed;
  if (older_left.count > 0) {
    if (report.not_removed.count == 0) report.not_removed.problem = older_left.problem;
    report.not_removed.count += older_left.count;
  }
  return report;
}

uint64_t Cache::clear(NotRemoved* not_removed, uint64_t* driver_folders_removed) {
  CacheDirectory& dir = impl_->require_writable();
  auto cleanup = dir.cleanup_lock(sys::FileLock::Mode::wait);  // best effort, as before: clear goes on without it
  auto scanned = scan_directory(dir.fd(), dir.owner_rule());
  if (!scanned) throw Error(ErrorKind::io, "cannot read " + dir.path().string() + ": " + scanned.failure().message);
  const DirectoryScan& scan = *scanned;
  uint64_t removed = 0;
  NotRemoved left;
  auto note = [&](const std::string& problem) {
    if (left.count++ == 0) left.problem = problem;
  };
  if (impl_->sqlite != nullptr) {
    if (auto rows = impl_->sqlite->clear()) {
      removed += *rows;
    } else {
      // One transaction failed, and every row it held is still there: the
      // report counts entries, as it does for files.
      const auto there = impl_->sqlite->stats();
      const uint64_t rows_left = there ? std::max<uint64_t>(there->entries, 1) : 1;
      if (left.count == 0) left.problem = rows.failure().message;
      left.count += rows_left;
    }
  }
  for (const auto& e : scan.entries) {
    auto stripe = dir.stripe_lock(e.key, sys::FileLock::Mode::wait);  // best effort, as above
    if (auto gone = remove_entry_files(dir.fd(), e.key, dir.owner_rule()); !gone)
      note(gone.failure().message);
    else if (e.complete())
      ++removed;
  }
  for (const auto& t : scan.temporaries)
    if (auto gone = sys::remove_at(dir.fd(), t.name, dir.owner_rule()); !gone) note(gone.failure().message);
  uint64_t folders_removed = 0;
  for (const auto& f : driver::list(dir.path())) {
    if (auto gone = driver::remove_folder(f.path); gone)
      ++folders_removed;
    else
      note(gone.failure().message);
  }
  if (driver_folders_removed != nullptr) *driver_folders_removed = folders_removed;
  if (not_removed != nullptr) *not_removed = left;
  if (auto stats_dir = dir.stats_fd()) (void)set_usage(*stats_dir, Usage{0, 0, sys::now_unix_ms()});
  return removed;
}

TransferReport Cache::export_to(const std::filesystem::path& destination) const {
  std::error_code ec;
  std::filesystem::create_directories(destination, ec);
  sys::Fd dest(::open(destination.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dest) throw Error(ErrorKind::io, "cannot open " + destination.string() + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(dest.get(), &st) != 0 || st.st_uid != ::geteuid())
    throw Error(ErrorKind::io, destination.string() + " is not a directory of your own");
  TransferReport report;
  std::set<std::string> done;
  // Exports are meant to be shipped and read by others: world-readable.
  auto write_entry = [&](const Entry& entry) {
    ::unlinkat(dest.get(), metadata_name(entry.meta.key).c_str(), 0);
    auto written = sys::write_atomic_at(dest.get(), wgsl_name(entry.meta.key), entry.text, nullptr, 0644);
    if (written)
      written = sys::write_atomic_at(dest.get(), metadata_name(entry.meta.key), encode_metadata(entry.meta), nullptr, 0644);
    if (!written)
      throw Error(ErrorKind::io, "cannot write into " + destination.string() + ": " + written.failure().message);
    ++report.copied;
  };
  // The SQLite store's rows export as files: an export is one format,
  // whichever store it came from, and imports into either.
  if (impl_->sqlite != nullptr) {
    auto listed = impl_->sqlite->list(ListQuery{false, std::nullopt});
    if (!listed) throw Error(ErrorKind::io, "cannot export " + impl_->sqlite->location().string() + ": " + listed.failure().message);
    for (const auto& info : *listed) {
      auto read = impl_->sqlite->get(info.key, Use::inspect);
      if (!read) {
        if (!is_miss(read.failure())) ++report.skipped_bad;
        continue;
      }
      done.insert(info.key);
      if (read_entry(dest.get(), info.key, sys::OwnerRule::self)) {
        ++report.skipped_present;
        continue;
      }
      write_entry(*read);
    }
  }
  for (CacheDirectory* layer : impl_->layers()) {
    auto scan = scan_directory(layer->fd(), layer->owner_rule());
    if (!scan) continue;  // an unreadable layer exports nothing
    for (const auto& e : scan->entries) {
      if (!e.complete() || done.count(e.key)) continue;
      auto read = read_entry(layer->fd(), e.key, layer->owner_rule());
      if (!read) {
        ++report.skipped_bad;
        continue;
      }
      done.insert(e.key);
      if (read_entry(dest.get(), e.key, sys::OwnerRule::self)) {
        ++report.skipped_present;
        continue;
      }
      write_entry(*read);
    }
  }
  {
    for (const auto& f : driver_folders_of(impl_->writable)) {
      if (!f.ok) continue;
      auto copied = driver::copy_folder(f, destination, 0644);
      if (!copied) throw Error(ErrorKind::io, "cannot export driver data: " + copied.failure().message);
      if (*copied) ++report.driver_copied;
    }
  }
  return report;
}

TransferReport Cache::import_from(const std::filesystem::path& source,
                                  const std::optional<std::string>& device_fingerprint) {
  CacheDirectory& dir = impl_->require_writable();
  if (impl_->local == nullptr)
    throw Error(ErrorKind::io, "cannot import: the cache's store in " + dir.path().string() + " is not usable (" +
                                   impl_->store.reason + ")");
  // Imported entries become this user's own, served unchecked by owner: a
  // folder others can write is refused whatever keys are trusted (the
  // refusal of a layer would suggest VYRE_AOT_TRUSTED_KEYS, which does not
  // apply here).
  if (struct stat st {}; ::stat(source.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & (S_IWGRP | S_IWOTH))) {
    char mode[8];
    (void)std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));  // 4 digits fit
    throw Error(ErrorKind::io, "cannot import: " + source.string() + " is group- or world-writable (mode " + mode +
                                   "): other users could have planted entries, and import makes them this user's "
                                   "own, trusted keys or not; `chmod go-w " + source.string() +
                                   "` first if you trust what is in it");
  }
  auto opened = CacheDirectory::open_readonly(source);
  if (!opened) throw Error(ErrorKind::io, "cannot import: " + opened.failure().message);
  const CacheDirectory& from = **opened;
  TransferReport report;
  Counters delta;
  auto scanned = scan_directory(from.fd(), from.owner_rule());
  const std::vector<ScannedEntry> none;
  for (const auto& e : scanned ? scanned->entries : none) {
    if (!e.complete()) continue;
    auto read = read_entry(from.fd(), e.key, from.owner_rule());
    if (!read) {
      ++report.skipped_bad;
      continue;
    }
    // What is imported is served from this user's own directory unchecked:
    // with trusted keys, it comes in only when one of them signed it.
    if (impl_->trusted) {
      if (auto verified = impl_->trusted->verify(read->meta); !verified) {
        if (report.refused_unsigned++ == 0) report.refused_reason = e.key.substr(0, 16) + "...: " + verified.failure().message;
        continue;
      }
    }
    auto published = impl_->local->put(read->meta, read->text);
    if (published && published->written) {
      ++report.copied;
      ++delta.writes;
      delta.bytes_written += published->bytes;
      impl_->record_growth(static_cast<int64_t>(published->bytes), 1);
    } else if (published) {
      ++report.skipped_present;
    } else if (published.failed_with(sys::Fault::too_large)) {
      ++report.skipped_bad;
    } else {
      impl_->count(delta);
      throw Error(ErrorKind::io, "cannot import: " + published.failure().message);
    }
  }
  impl_->count(delta);
  impl_->flush_pending();
  // Driver data is only of use to the same device and driver: the folder of
  // this machine's fingerprint comes in, others are named and left.
  for (const auto& f : driver::list(source)) {
    if (!f.ok) continue;
    if (!device_fingerprint || f.fingerprint != *device_fingerprint) {
      ++report.driver_skipped_other;
      report.driver_skipped_fingerprints.push_back(f.fingerprint);
      continue;
    }
    auto copied = driver::copy_folder(f, dir.path(), 0600);
    if (!copied) throw Error(ErrorKind::io, "cannot import driver data: " + copied.failure().message);
    if (*copied) ++report.driver_copied;
  }
  return report;
}

Explanation Cache::explain(const KeyParts& parts, const std::optional<std::string>& device_fingerprint) const {
  Explanation x;
  if (device_fingerprint) {
    x.device_fingerprint = *device_fingerprint;
    for (const auto& f : driver_folders_seen(impl_->writable))
      if (f.id == driver::folder_id(*device_fingerprint)) x.driver_folder = to_info(f);
  }
  auto component = [&](std::string name, const std::string& value) {
    x.components.push_back({std::move(name), value, sha256_hex(value)});
  };
  component("program digest", parts.program_digest);
  component("shaping", parts.shaping);
  component("lowering version", std::to_string(parts.lowering_version));
  component("vyre version", parts.vyre_version);
  component("fingerprint", parts.fingerprint);
  x.spec_hash = parts.spec_hash();
  x.key = parts.key();

  // The first tier with a verified entry, else the first with a bad one.
  auto found = find_in_tiers(impl_->tiers(), x.key, Use::inspect, [&](StorageTier& tier, const sys::Failure& failure) {
    if (!is_bad_entry(failure) || x.found_in) return;
    x.found_in = tier.location();
    x.problem = failure.message;
  });
  if (found) {
    x.hit = true;
    x.found_in = found->tier->location();
  }

  auto quoted = [](const std::string& s) { return "\"" + s + "\""; };
  for (StorageTier* tier : impl_->tiers()) {
    auto listed = tier->list({});
    if (!listed) continue;
    for (const auto& e : *listed) {
      if (e.key == x.key || e.state != EntryState::ok || e.parts.program_digest != parts.program_digest) continue;
      Explanation::Neighbour n{e.key, e.directory, {}};
      const KeyParts& cached = e.parts;
      if (cached.shaping != parts.shaping)
        n.differences.push_back("shaping: cached " + quoted(cached.shaping) + ", now " + quoted(parts.shaping));
      if (cached.lowering_version != parts.lowering_version)
        n.differences.push_back("lowering version: cached " + std::to_string(cached.lowering_version) + ", now " +
                                std::to_string(parts.lowering_version));
      if (cached.vyre_version != parts.vyre_version)
        n.differences.push_back("vyre version: cached " + quoted(cached.vyre_version) + ", now " +
                                quoted(parts.vyre_version));
      for (auto& d : fingerprint_differences(cached.fingerprint, parts.fingerprint)) n.differences.push_back(d);
      x.same_program.push_back(std::move(n));
    }
  }
  return x;
}

}  // namespace vyre::aot
