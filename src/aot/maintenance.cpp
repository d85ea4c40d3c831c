// The cache's tools: stats, listing, verification, pruning, clearing,
// export and import, and explaining a miss.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "aot/cache_impl.hpp"
#include "aot/entry.hpp"
#include "aot/fingerprint_diff.hpp"
#include "aot/hashing.hpp"
#include "aot/publish.hpp"
#include "aot/scan.hpp"
#include "vyre/error.hpp"

namespace vyre::aot {

std::string_view to_string(EntryState state) {
  switch (state) {
    case EntryState::ok: return "ok";
    case EntryState::bad: return "bad";
    case EntryState::incomplete: return "incomplete";
    case EntryState::other_format: return "other-format";
  }
  return "unknown";
}

namespace {

// Why a scanned name is unsafe, when it is.
std::optional<std::string> unsafe_problem(const ScannedEntry& e) {
  auto describe = [&](const FileFacts& f, const std::string& name) -> std::optional<std::string> {
    if (!f.exists || f.safe()) return std::nullopt;
    return name + (f.regular ? " is owned by another user" : " is not a regular file (link, FIFO or device)");
  };
  if (auto p = describe(e.metadata, metadata_name(e.key))) return p;
  return describe(e.wgsl, wgsl_name(e.key));
}

EntryInfo info_of(const CacheDirectory& layer, const ScannedEntry& scanned, const EntryRead& read) {
  EntryInfo info;
  info.key = scanned.key;
  info.directory = layer.path();
  info.readonly_layer = !layer.writable();
  info.metadata_bytes = scanned.metadata.exists ? scanned.metadata.size : 0;
  info.wgsl_bytes = scanned.wgsl.exists ? scanned.wgsl.size : 0;
  info.last_used_unix_ms = scanned.last_used_ms();
  info.problem = read.problem;
  switch (read.status) {
    case EntryRead::Status::good: info.state = EntryState::ok; break;
    case EntryRead::Status::other_format: info.state = EntryState::other_format; break;
    case EntryRead::Status::missing:
    case EntryRead::Status::incomplete:
      info.state = EntryState::incomplete;
      info.problem = scanned.metadata.exists ? "WGSL file missing" : "metadata missing (not committed)";
      break;
    case EntryRead::Status::bad:
    case EntryRead::Status::error: info.state = EntryState::bad; break;
  }
  if (auto problem = unsafe_problem(scanned)) {
    info.state = EntryState::bad;
    info.problem = *problem;
  }
  info.format = read.meta.format;
  if (read.status == EntryRead::Status::good || read.status == EntryRead::Status::bad) {
    info.program = read.meta.program;
    info.parts = read.meta.parts;
    info.spec_hash = read.meta.spec_hash;
    info.content_sha256 = read.meta.content_sha256;
    info.created_unix_ms = read.meta.created_unix_ms;
    info.lower_ms = read.meta.lower_ms;
  }
  return info;
}

// Reads an entry found by a scan and classifies it, unsafe names included.
EntryInfo inspect(const CacheDirectory& layer, const ScannedEntry& scanned, bool verify_content,
                  std::string* wgsl = nullptr) {
  EntryRead read = read_entry(layer.fd(), scanned.key, layer.owner_rule(), verify_content);
  EntryInfo info = info_of(layer, scanned, read);
  if (wgsl != nullptr && info.state == EntryState::ok) *wgsl = std::move(read.wgsl);
  return info;
}

ScannedEntry scan_one(const CacheDirectory& layer, const std::string& key) {
  return ScannedEntry{key, file_facts_at(layer.fd(), wgsl_name(key), layer.owner_rule()),
                      file_facts_at(layer.fd(), metadata_name(key), layer.owner_rule())};
}

}  // namespace

CacheStats Cache::stats() {
  flush();
  CacheStats s;
  if (!impl_->writable) return s;
  Counters c = read_all_shards(impl_->writable->stats_fd());
  s.hits = c.hits;
  s.misses = c.misses;
  s.writes = c.writes;
  s.evictions = c.evictions;
  s.bad_entries = c.bad_entries;
  s.errors = c.errors;
  s.bytes_written = c.bytes_written;
  s.lowering_ms = static_cast<double>(c.lowering_us) / 1000.0;
  s.time_saved_ms = static_cast<double>(c.time_saved_us) / 1000.0;
  DirectoryScan scan = scan_directory(impl_->writable->fd(), OwnerRule::self);
  for (const auto& e : scan.entries) {
    if (!e.complete()) continue;
    ++s.entries;
    s.bytes += e.bytes();
  }
  return s;
}

void Cache::zero_stats() {
  flush();
  CacheDirectory& dir = impl_->require_writable();
  if (!zero_all_shards(dir.stats_fd()))
    throw Error(ErrorKind::io, "cannot reset the statistics in " + dir.path().string() + "/.stats: " + std::strerror(errno));
}

std::vector<EntryInfo> Cache::list() const {
  std::vector<EntryInfo> out;
  for (CacheDirectory* layer : impl_->layers()) {
    DirectoryScan scan = scan_directory(layer->fd(), layer->owner_rule());
    for (const auto& e : scan.entries) out.push_back(inspect(*layer, e, false));
  }
  return out;
}

std::optional<EntryInfo> Cache::show(std::string_view key, std::string* wgsl) const {
  if (!is_valid_key(key))
    throw Error(ErrorKind::invalid_input, "`" + std::string(key) + "` is not a cache key (64 lowercase hex digits)");
  for (CacheDirectory* layer : impl_->layers()) {
    ScannedEntry scanned = scan_one(*layer, std::string(key));
    if (!scanned.wgsl.exists && !scanned.metadata.exists) continue;
    return inspect(*layer, scanned, true, wgsl);
  }
  return std::nullopt;
}

VerifyReport Cache::verify(bool remove_bad) {
  VerifyReport report;
  Counters delta;
  for (CacheDirectory* layer : impl_->layers()) {
    DirectoryScan scan = scan_directory(layer->fd(), layer->owner_rule());
    for (const auto& e : scan.entries) {
      EntryInfo info = inspect(*layer, e, true);
      if (info.state == EntryState::incomplete) {
        ++report.incomplete;
        continue;
      }
      ++report.checked;
      if (info.state == EntryState::ok) {
        ++report.good;
        continue;
      }
      if (info.state == EntryState::other_format) {
        ++report.other_format;
        continue;
      }
      ++delta.bad_entries;
      if (remove_bad && layer->writable()) {
        FileLock stripe = layer->stripe_lock(e.key, FileLock::Mode::wait);
        // A writer may have replaced it while it was read.
        if (stripe.held() && inspect(*layer, scan_one(*layer, e.key), true).state == EntryState::bad) {
          remove_entry_files(layer->fd(), e.key);
          ++report.removed;
        }
      }
      report.bad.push_back(std::move(info));
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
    policy.older_than_ms = std::chrono::duration_cast<std::chrono::milliseconds>(*options.older_than).count();
  CleanupResult result = run_cleanup(dir, policy, FileLock::Mode::wait);
  if (!result.ran) throw Error(ErrorKind::io, "cannot take the cleanup lock in " + dir.path().string() + "/.locks");
  Counters delta;
  delta.evictions = result.evicted;
  impl_->count(delta);
  impl_->flush_pending();
  return PruneReport{result.evicted, result.bytes_freed, result.swept, result.entries, result.bytes};
}

uint64_t Cache::clear() {
  CacheDirectory& dir = impl_->require_writable();
  FileLock cleanup = dir.cleanup_lock(FileLock::Mode::wait);
  DirectoryScan scan = scan_directory(dir.fd(), OwnerRule::self);
  if (!scan.ok) throw Error(ErrorKind::io, "cannot read " + dir.path().string() + ": " + std::strerror(errno));
  uint64_t removed = 0;
  for (const auto& e : scan.entries) {
    FileLock stripe = dir.stripe_lock(e.key, FileLock::Mode::wait);
    remove_entry_files(dir.fd(), e.key);
    if (e.complete()) ++removed;
  }
  for (const auto& t : scan.temporaries) ::unlinkat(dir.fd(), t.name.c_str(), 0);
  set_usage(dir.stats_fd(), Usage{0, 0, now_unix_ms()});
  return removed;
}

TransferReport Cache::export_to(const std::filesystem::path& destination) const {
  std::error_code ec;
  std::filesystem::create_directories(destination, ec);
  Fd dest(::open(destination.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dest) throw Error(ErrorKind::io, "cannot open " + destination.string() + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(dest.get(), &st) != 0 || st.st_uid != ::geteuid())
    throw Error(ErrorKind::io, destination.string() + " is not a directory of your own");
  TransferReport report;
  std::set<std::string> done;
  for (CacheDirectory* layer : impl_->layers()) {
    DirectoryScan scan = scan_directory(layer->fd(), layer->owner_rule());
    for (const auto& e : scan.entries) {
      if (!e.complete() || done.count(e.key)) continue;
      EntryRead read = read_entry(layer->fd(), e.key, layer->owner_rule());
      if (read.status != EntryRead::Status::good) {
        ++report.skipped_bad;
        continue;
      }
      done.insert(e.key);
      if (read_entry(dest.get(), e.key, OwnerRule::self).status == EntryRead::Status::good) {
        ++report.skipped_present;
        continue;
      }
      // Exports are meant to be shipped and read by others: world-readable.
      ::unlinkat(dest.get(), metadata_name(e.key).c_str(), 0);
      int err = write_atomic_at(dest.get(), wgsl_name(e.key), read.wgsl, nullptr, 0644);
      if (err == 0) err = write_atomic_at(dest.get(), metadata_name(e.key), encode_metadata(read.meta), nullptr, 0644);
      if (err != 0)
        throw Error(ErrorKind::io, "cannot write into " + destination.string() + ": " + std::strerror(err));
      ++report.copied;
    }
  }
  return report;
}

TransferReport Cache::import_from(const std::filesystem::path& source) {
  CacheDirectory& dir = impl_->require_writable();
  std::string problem;
  auto from = CacheDirectory::open_readonly(source, problem);
  if (!from) throw Error(ErrorKind::io, "cannot import: " + problem);
  TransferReport report;
  Counters delta;
  DirectoryScan scan = scan_directory(from->fd(), from->owner_rule());
  for (const auto& e : scan.entries) {
    if (!e.complete()) continue;
    EntryRead read = read_entry(from->fd(), e.key, from->owner_rule());
    if (read.status != EntryRead::Status::good) {
      ++report.skipped_bad;
      continue;
    }
    PublishResult published = publish_entry(dir, read.meta, read.wgsl);
    switch (published.outcome) {
      case PublishResult::Outcome::written:
        ++report.copied;
        ++delta.writes;
        delta.bytes_written += published.bytes;
        impl_->record_growth(static_cast<int64_t>(published.bytes), 1);
        break;
      case PublishResult::Outcome::present: ++report.skipped_present; break;
      case PublishResult::Outcome::skipped: ++report.skipped_bad; break;
      case PublishResult::Outcome::failed:
        impl_->count(delta);
        throw Error(ErrorKind::io, "cannot import: " + published.problem);
    }
  }
  impl_->count(delta);
  impl_->flush_pending();
  return report;
}

Explanation Cache::explain(const KeyParts& parts) const {
  Explanation x;
  auto component = [&](std::string name, std::string value) {
    x.components.push_back({std::move(name), value, sha256_hex(value)});
  };
  component("program digest", parts.program_digest);
  component("shaping", parts.shaping);
  component("lowering version", std::to_string(parts.lowering_version));
  component("vyre version", parts.vyre_version);
  component("fingerprint", parts.fingerprint);
  x.spec_hash = parts.spec_hash();
  x.key = parts.key();

  for (CacheDirectory* layer : impl_->layers()) {
    EntryRead read = read_entry(layer->fd(), x.key, layer->owner_rule());
    if (read.status == EntryRead::Status::good) {
      x.hit = true;
      x.found_in = layer->path();
      break;
    }
    if ((read.status == EntryRead::Status::bad || read.status == EntryRead::Status::other_format) && !x.found_in) {
      x.found_in = layer->path();
      x.problem = read.problem;
    }
  }

  auto quoted = [](const std::string& s) { return "\"" + s + "\""; };
  for (CacheDirectory* layer : impl_->layers()) {
    DirectoryScan scan = scan_directory(layer->fd(), layer->owner_rule());
    for (const auto& e : scan.entries) {
      if (e.key == x.key || !e.metadata.safe()) continue;
      EntryRead read = read_entry(layer->fd(), e.key, layer->owner_rule(), false);
      if (read.status != EntryRead::Status::good || read.meta.parts.program_digest != parts.program_digest) continue;
      Explanation::Neighbour n{e.key, layer->path(), {}};
      const KeyParts& cached = read.meta.parts;
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
