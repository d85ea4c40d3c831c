// A cache directory as a storage tier: what the writable directory and the
// read-only layers share (reading, listing, sizing). The two differ only in
// whether they are written: LocalDirectoryTier, ReadOnlyDirectoryTier.
#pragma once

#include <memory>

#include "aot/local/directory.hpp"
#include "aot/entry/entry_signature.hpp"
#include "aot/entry/storage_tier.hpp"

namespace vyre::aot {

class DirectoryTier : public StorageTier {
 public:
  explicit DirectoryTier(std::unique_ptr<CacheDirectory> directory) : directory_(std::move(directory)) {}

  const std::filesystem::path& location() const override { return directory_->path(); }
  sys::Result<Entry> get(const std::string& key, Use use) override;
  sys::Result<std::vector<EntryInfo>> list(const ListQuery& query) const override;
  sys::Result<TierStats> stats() const override;

  CacheDirectory& directory() const { return *directory_; }
  // The keys that must have signed an entry of a signed-only directory
  // (CacheDirectory::signed_only()); without them such a directory serves
  // nothing.
  void set_trusted_keys(std::shared_ptr<const TrustedKeys> keys) { trusted_ = std::move(keys); }

 private:
  sys::Result<void> check_signature(const Metadata& meta) const;
  std::unique_ptr<CacheDirectory> directory_;
  std::shared_ptr<const TrustedKeys> trusted_;
};

}  // namespace vyre::aot
