#include "aot/local/directory_tier.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "aot/local/scan.hpp"

namespace vyre::aot {
namespace {

// Why a scanned name is unsafe, when it is.
std::optional<std::string> unsafe_problem(const ScannedEntry& e) {
  auto describe = [&](const sys::FileFacts& f, const std::string& name) -> std::optional<std::string> {
    if (!f.exists || f.safe()) return std::nullopt;
    return name + (f.regular ? " is owned by another user" : " is not a regular file (link, FIFO or device)");
  };
  if (auto p = describe(e.metadata, metadata_name(e.key))) return p;
  if (auto p = describe(e.packed, packed_name(e.key))) return p;
  return describe(e.wgsl, wgsl_name(e.key));
}

EntryState state_of(const sys::Result<Entry>& read) {
  if (read) return EntryState::ok;
  if (is_miss(read.failure())) return EntryState::incomplete;
  if (read.failure().kind == sys::Fault::unsupported) return EntryState::other_format;
  return EntryState::bad;  // bad entries and unreadable ones
}

// Reads an entry found by a scan and classifies it, unsafe names included.
EntryInfo inspect(const CacheDirectory& layer, const ScannedEntry& scanned, bool verify_content) {
  EntryInspection read = inspect_entry(layer.fd(), scanned.key, layer.owner_rule(), verify_content);
  EntryInfo info;
  info.state = state_of(read.entry);
  // The record as far as it was read, when it was (a bad entry shows what it claims).
  if (read.entry || is_bad_entry(read.entry.failure())) static_cast<EntryRecord&>(info) = read.seen;
  info.format = read.seen.format;
  info.key = scanned.key;
  info.directory = layer.path();
  info.readonly_layer = !layer.writable();
  info.metadata_bytes = scanned.metadata.exists ? scanned.metadata.size : 0;
  info.wgsl_bytes = scanned.wgsl.exists ? scanned.wgsl.size : 0;
  if (scanned.is_packed()) {
    // One file: the content as its metadata says, the rest (metadata and frame header) as metadata.
    info.wgsl_bytes = read.entry ? read.entry->meta.wgsl_bytes : 0;
    info.metadata_bytes = scanned.packed.size - std::min<uint64_t>(info.wgsl_bytes, scanned.packed.size);
  }
  info.last_used_unix_ms = scanned.last_used_ms();
  if (!read.entry) info.problem = read.entry.failure().message;
  if (info.state == EntryState::incomplete)
    info.problem = scanned.metadata.exists ? "WGSL file missing" : "metadata missing (not committed)";
  if (auto problem = unsafe_problem(scanned)) {
    info.state = EntryState::bad;
    info.problem = *problem;
  }
  return info;
}

sys::Failure cannot_read(const std::filesystem::path& dir, sys::Failure why) {
  why.message = "cannot read " + dir.string() + ": " + why.message;
  return why;
}

sys::Failure refused(const std::filesystem::path& where) {
  return sys::failure(sys::Fault::read_only,
                      where.string() + " is a read-only layer; write to the cache directory (VYRE_AOT_CACHE_DIR)");
}

ScannedEntry scan_one(const CacheDirectory& layer, const std::string& key) {
  return ScannedEntry{key, sys::file_facts_at(layer.fd(), wgsl_name(key), layer.owner_rule()),
                      sys::file_facts_at(layer.fd(), metadata_name(key), layer.owner_rule()),
                      sys::file_facts_at(layer.fd(), packed_name(key), layer.owner_rule())};
}

}  // namespace

sys::Result<void> DirectoryTier::check_signature(const Metadata& meta) const {
  if (!directory_->signed_only()) return {};
  if (!trusted_) return sys::failure(sys::Fault::untrusted, "signed-only directory and no trusted keys");
  return trusted_->verify(meta);
}

sys::Result<Entry> DirectoryTier::do_get(const std::string& key, Use use) {
  auto entry = read_entry(directory_->fd(), key, directory_->owner_rule());
  if (entry)
    if (auto signed_ok = check_signature(entry->meta); !signed_ok) return signed_ok.failure();
  // Recency lives in the writable directory only; refresh it only now and
  // then, so that hits rarely write.
  if (entry && writable() && use == Use::serve &&
      sys::now_unix_ms() - entry->metadata_mtime_ms >= options_.recency_granularity.count())
    if (::utimensat(directory_->fd(), metadata_name(key).c_str(), nullptr, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
      ::utimensat(directory_->fd(), packed_name(key).c_str(), nullptr, AT_SYMLINK_NOFOLLOW);  // the one-file form
  return entry;
}

sys::Result<Stored> DirectoryTier::do_put(const Metadata& meta, std::string_view wgsl) {
  if (!writable()) return refused(location());
  const ExistingCheck signed_ok = [this](const Metadata& existing) { return check_signature(existing).ok(); };
  const mode_t mode = directory_->entry_mode();
  if (directory_->shared_file_system())
    return publish_packed(*directory_, meta, wgsl, options_.on_publish_step, mode, signed_ok);
  return publish_entry(*directory_, meta, wgsl, options_.on_publish_step, mode, signed_ok);
}

sys::Result<bool> DirectoryTier::do_remove(const std::string& key, bool only_if_bad) {
  if (!writable()) return refused(location());
  auto stripe = directory_->stripe_lock(key, sys::FileLock::Mode::wait);
  if (!stripe) return stripe.failure();
  if (only_if_bad) {
    // A writer may have replaced it since it was found bad.
    auto now = list(ListQuery{true, key});
    if (!now || now->empty() || now->front().state != EntryState::bad) return false;
  }
  if (auto removed = remove_entry_files(directory_->fd(), key, directory_->owner_rule()); !removed) return removed.failure();
  return true;
}

sys::Result<std::vector<EntryInfo>> DirectoryTier::do_list(const ListQuery& query) const {
  std::vector<EntryInfo> out;
  if (query.key) {
    ScannedEntry scanned = scan_one(*directory_, *query.key);
    if (scanned.wgsl.exists || scanned.metadata.exists || scanned.packed.exists) out.push_back(inspect(*directory_, scanned, query.verify_content));
  } else {
    auto scan = scan_directory(directory_->fd(), directory_->owner_rule());
    if (!scan) return cannot_read(directory_->path(), scan.failure());
    for (const auto& e : scan->entries) out.push_back(inspect(*directory_, e, query.verify_content));
  }
  // A signed-only directory's unsigned entries are bad for every tool too.
  for (auto& info : out)
    if (info.state == EntryState::ok)
      if (auto signed_ok = check_signature(info); !signed_ok) {
        info.state = EntryState::bad;
        info.problem = signed_ok.failure().message;
      }
  return out;
}

sys::Result<TierStats> DirectoryTier::do_stats() const {
  auto scan = scan_directory(directory_->fd(), directory_->owner_rule());
  if (!scan) return cannot_read(directory_->path(), scan.failure());
  TierStats s;
  for (const auto& e : scan->entries) {
    if (!e.complete()) continue;
    ++s.entries;
    s.bytes += e.bytes();
  }
  return s;
}

}  // namespace vyre::aot
