#include "aot/tier_lookup.hpp"

namespace vyre::aot {

std::optional<TierHit> find_in_tiers(const std::vector<StorageTier*>& tiers, const std::string& key, Use use,
                                     const TierTrouble& on_trouble) {
  for (StorageTier* tier : tiers) {
    auto entry = tier->get(key, use);  // never throws: StorageTier's boundary
    if (entry) return TierHit{std::move(*entry), tier};
    if (!is_miss(entry.failure()) && on_trouble) on_trouble(*tier, entry.failure());
  }
  return std::nullopt;
}

}  // namespace vyre::aot
