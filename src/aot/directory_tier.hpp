// A cache directory as a storage tier: what the writable directory and the
// read-only layers share (reading, listing, sizing). The two differ only in
// whether they are written: LocalDirectoryTier, ReadOnlyDirectoryTier.
#pragma once

#include <memory>

#include "aot/directory.hpp"
#include "aot/storage_tier.hpp"

namespace vyre::aot {

class DirectoryTier : public StorageTier {
 public:
  explicit DirectoryTier(std::unique_ptr<CacheDirectory> directory) : directory_(std::move(directory)) {}

  const std::filesystem::path& location() const override { return directory_->path(); }
  sys::Result<Entry> get(const std::string& key, Use use) override;
  sys::Result<std::vector<EntryInfo>> list(const ListQuery& query) const override;
  sys::Result<TierStats> stats() const override;

  CacheDirectory& directory() const { return *directory_; }

 private:
  std::unique_ptr<CacheDirectory> directory_;
};

}  // namespace vyre::aot
