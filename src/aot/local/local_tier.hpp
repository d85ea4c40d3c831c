// The writable cache directory as a storage tier: publication under the
// key's write stripe, metadata last (publish.hpp), removal under the same
// stripe, and recency refreshed now and then by hits (cleanup evicts the
// least recently used).
#pragma once

#include <chrono>

#include "aot/local/directory_tier.hpp"
#include "aot/local/publish.hpp"

namespace vyre::aot {

struct LocalTierOptions {
  // A hit refreshes recency only when it is older than this.
  std::chrono::milliseconds recency_granularity{600'000};
  PublishStep on_publish_step;  // CacheOptions::on_publish_step
};

class LocalDirectoryTier final : public DirectoryTier {
 public:
  LocalDirectoryTier(std::unique_ptr<CacheDirectory> directory, LocalTierOptions options)
      : DirectoryTier(std::move(directory)), options_(std::move(options)) {}

  bool writable() const override { return true; }
  sys::Result<Entry> get(const std::string& key, Use use) override;
  sys::Result<Stored> put(const Metadata& meta, std::string_view wgsl) override;
  sys::Result<bool> remove(const std::string& key, bool only_if_bad) override;

 private:
  LocalTierOptions options_;
};

}  // namespace vyre::aot
