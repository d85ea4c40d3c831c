#include "aot/entry/tier_counters.hpp"

#include <algorithm>
#include <iterator>

namespace vyre::aot {

TierCounters& TierCounters::operator+=(const TierCounters& other) {
  for (const auto& field : kTierCounterFields) this->*field.member += other.*field.member;
  return *this;
}

bool TierCounters::empty() const {
  return std::all_of(std::begin(kTierCounterFields), std::end(kTierCounterFields),
                     [&](const TierCounterField& field) { return this->*field.member == 0; });
}

}  // namespace vyre::aot
