// The counters of a tier by name: the one list that TierCounters' sum and
// emptiness, the stats shards (stats_store) and the reports go through.
#pragma once

#include <cstdint>

#include "vyre/aot.hpp"

namespace vyre::aot {

struct TierCounterField {
  const char* name;
  uint64_t TierCounters::*member;
};

inline constexpr TierCounterField kTierCounterFields[] = {
    {"hits", &TierCounters::hits},     {"misses", &TierCounters::misses},     {"writes", &TierCounters::writes},
    {"errors", &TierCounters::errors}, {"timeouts", &TierCounters::timeouts}, {"rejected", &TierCounters::rejected},
};

}  // namespace vyre::aot
