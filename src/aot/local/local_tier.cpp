#include "aot/local/local_tier.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include "aot/local/scan.hpp"

namespace vyre::aot {

sys::Result<Entry> LocalDirectoryTier::get(const std::string& key, Use use) {
  auto entry = DirectoryTier::get(key, use);
  // Refresh recency only now and then, so that hits rarely write.
  if (entry && use == Use::serve && sys::now_unix_ms() - entry->metadata_mtime_ms >= options_.recency_granularity.count())
    ::utimensat(directory().fd(), metadata_name(key).c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
  return entry;
}

sys::Result<Stored> LocalDirectoryTier::put(const Metadata& meta, std::string_view wgsl) {
  return publish_entry(directory(), meta, wgsl, options_.on_publish_step);
}

sys::Result<bool> LocalDirectoryTier::remove(const std::string& key, bool only_if_bad) {
  CacheDirectory& dir = directory();
  auto stripe = dir.stripe_lock(key, sys::FileLock::Mode::wait);
  if (!stripe) return stripe.failure();
  if (only_if_bad) {
    // A writer may have replaced it since it was found bad.
    auto now = list(ListQuery{true, key});
    if (!now || now->empty() || now->front().state != EntryState::bad) return false;
  }
  if (auto removed = remove_entry_files(dir.fd(), key); !removed) return removed.failure();
  return true;
}

}  // namespace vyre::aot
