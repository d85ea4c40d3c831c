#include "aot/tier_lookup.hpp"

#include <exception>

namespace vyre::aot {

std::optional<TierHit> find_in_tiers(const std::vector<StorageTier*>& tiers, const std::string& key, Use use,
                                     const TierTrouble& on_trouble) {
  for (StorageTier* tier : tiers) {
    try {
      auto entry = tier->get(key, use);
      if (entry) return TierHit{std::move(*entry), tier};
      if (!is_miss(entry.failure()) && on_trouble) on_trouble(*tier, entry.failure());
    } catch (const std::exception& e) {
      // Whatever went wrong in one tier, the lookup goes on in the next.
      if (on_trouble) on_trouble(*tier, sys::failure(sys::Fault::io, e.what()));
    }
  }
  return std::nullopt;
}

}  // namespace vyre::aot
