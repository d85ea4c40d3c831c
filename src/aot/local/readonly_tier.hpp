// A read-only layer (VYRE_AOT_CACHE_READONLY_DIRS): a cache shipped with an
// application, searched after the writable directory and never written; a
// bad entry there is skipped, not replaced.
#pragma once

#include "aot/local/directory_tier.hpp"

namespace vyre::aot {

class ReadOnlyDirectoryTier final : public DirectoryTier {
 public:
  using DirectoryTier::DirectoryTier;

  bool writable() const override { return false; }
  sys::Result<Stored> put(const Metadata& meta, std::string_view wgsl) override;
  sys::Result<bool> remove(const std::string& key, bool only_if_bad) override;
};

}  // namespace vyre::aot
