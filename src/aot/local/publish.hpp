// Publishing an entry: under the key's write stripe, WGSL first, then the
// metadata (the commit record), each through a temporary file renamed into
// place. A crash at any point leaves either the old state, an uncommitted
// WGSL file (a miss, swept later), or the complete new entry.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "aot/entry/entry.hpp"
#include "aot/entry/storage_tier.hpp"
#include "aot/local/directory.hpp"

namespace vyre::aot {

using PublishStep = std::function<void(std::string_view step)>;
// Whether an entry found already there counts (in a signed-only directory:
// only when a trusted key signed it, so an unsigned plant is replaced).
using ExistingCheck = std::function<bool(const Metadata&)>;

// Fails with too_large when the entry is not cacheable (over a size bound),
// else with what the file system refused (the message names the file).
// Stored::bytes: WGSL plus metadata.
sys::Result<Stored> publish_entry(CacheDirectory& directory, const Metadata& meta, std::string_view wgsl,
                                     const PublishStep& on_step = {}, mode_t mode = 0600,
                                     const ExistingCheck& existing_ok = {});

// On a shared or network file system (CacheDirectory::shared_file_system):
// the whole entry as one file (packed_name, an entry frame) through one
// temporary file renamed into place, so that no reader on any machine sees
// part of it, with no reliance on working locks (the stripe is taken where
// the file system has them). Steps: "packed-temp", "packed-renamed".
sys::Result<Stored> publish_packed(CacheDirectory& directory, const Metadata& meta, std::string_view content,
                                   const PublishStep& on_step = {}, mode_t mode = 0600,
                                   const ExistingCheck& existing_ok = {});

// Removes an entry (metadata first, so that it is uncommitted before its
// WGSL goes, and its one file; a WGSL left when the metadata cannot go). A directory planted
// at either name is removed with its contents when it is the user's own
// (sys::remove_at). Fails with what the system refused, so that nothing is
// counted as removed that is still there. The caller holds the key's stripe.
sys::Result<void> remove_entry_files(int dirfd, const std::string& key, sys::OwnerRule rule = sys::OwnerRule::self);

}  // namespace vyre::aot
