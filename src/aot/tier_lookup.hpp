// Looking a key up in tiers composed in order (memory if any, the local
// directory, read-only layers, a remote store): the first verified entry
// wins. A tier that answers with a bad entry or cannot be read is reported
// and the next tier is asked, so a torn or damaged entry in one tier costs a
// lookup in the next, never a wrong answer.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "aot/entry/storage_tier.hpp"

namespace vyre::aot {

struct TierHit {
  Entry entry;
  StorageTier* tier = nullptr;
};

// Told about each answer that is neither an entry nor a miss.
using TierTrouble = std::function<void(StorageTier& tier, const sys::Failure& failure)>;

std::optional<TierHit> find_in_tiers(const std::vector<StorageTier*>& tiers, const std::string& key, Use use,
                                     const TierTrouble& on_trouble);

}  // namespace vyre::aot
