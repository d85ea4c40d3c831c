// A cache directory as a storage tier: the writable directory or a
// read-only layer (VYRE_AOT_CACHE_READONLY_DIRS), as the directory was opened
// (CacheDirectory::writable()). Both read, list and size alike. The writable
// one publishes under the key's write stripe, metadata last (publish.hpp),
// removes under the same stripe, and has its recency refreshed now and then
// by hits (cleanup evicts the least recently used). A read-only layer, a
// cache shipped with an application, is never written: a bad entry there is
// skipped, not replaced.
#pragma once

#include <chrono>
#include <memory>

#include "aot/entry/entry_signature.hpp"
#include "aot/entry/storage_tier.hpp"
#include "aot/local/directory.hpp"
#include "aot/local/publish.hpp"

namespace vyre::aot {

// What only the writable directory uses.
struct DirectoryTierOptions {
  // A hit refreshes recency only when it is older than this.
  std::chrono::milliseconds recency_granularity{600'000};
  PublishStep on_publish_step;  // CacheOptions::on_publish_step
};

class DirectoryTier final : public StorageTier {
 public:
  explicit DirectoryTier(std::unique_ptr<CacheDirectory> directory, DirectoryTierOptions options = {})
      : directory_(std::move(directory)), options_(std::move(options)) {}

  bool writable() const override { return directory_->writable(); }
  const std::filesystem::path& location() const override { return directory_->path(); }

  CacheDirectory& directory() const { return *directory_; }
  // The keys that must have signed an entry of a signed-only directory
  // (CacheDirectory::signed_only()); without them such a directory serves
  // nothing.
  void set_trusted_keys(std::shared_ptr<const TrustedKeys> keys) { trusted_ = std::move(keys); }

 private:
  sys::Result<Entry> do_get(const std::string& key, Use use) override;
  // A read-only layer refuses both (read_only).
  sys::Result<Stored> do_put(const Metadata& meta, std::string_view wgsl) override;
  sys::Result<bool> do_remove(const std::string& key, bool only_if_bad) override;
  sys::Result<std::vector<EntryInfo>> do_list(const ListQuery& query) const override;
  sys::Result<TierStats> do_stats() const override;
  sys::Result<void> check_signature(const Metadata& meta) const;
  std::unique_ptr<CacheDirectory> directory_;
  DirectoryTierOptions options_;
  std::shared_ptr<const TrustedKeys> trusted_;
};

}  // namespace vyre::aot
