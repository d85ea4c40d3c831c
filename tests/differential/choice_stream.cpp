#include "differential/choice_stream.hpp"

namespace vyre::differential {

ChoiceStream ChoiceStream::from_seed(uint64_t seed) {
  ChoiceStream s;
  s.state_ = seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
  return s;
}

ChoiceStream ChoiceStream::replay(std::vector<uint32_t> choices) {
  ChoiceStream s;
  s.replaying_ = true;
  s.script_ = std::move(choices);
  return s;
}

// splitmix64: small, fast and good enough for test generation.
uint64_t ChoiceStream::next_random() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint32_t ChoiceStream::below(uint32_t n) {
  if (n <= 1) return 0;  // no decision: nothing to record or replay
  uint32_t v = 0;
  if (replaying_) {
    v = position_ < script_.size() ? script_[position_] : 0;
    ++position_;
    if (v >= n) v %= n;
  } else {
    v = static_cast<uint32_t>(next_random() % n);
  }
  taken_.push_back(v);
  return v;
}

bool ChoiceStream::coin(uint32_t percent) { return below(100) >= 100 - percent; }

size_t ChoiceStream::weighted(std::initializer_list<uint32_t> weights) {
  uint32_t total = 0;
  for (uint32_t w : weights) total += w;
  uint32_t v = below(total);
  size_t i = 0;
  for (uint32_t w : weights) {
    if (v < w) return i;
    v -= w;
    ++i;
  }
  return weights.size() - 1;
}

uint32_t ChoiceStream::count(uint32_t n) {
  const size_t position = taken_.size();
  const uint32_t v = below(n);
  if (taken_.size() > position) counts_.push_back(position);
  return v;
}

size_t ChoiceStream::shape(std::initializer_list<uint32_t> weights) {
  const size_t position = taken_.size();
  const size_t v = weighted(weights);
  if (taken_.size() > position) shapes_.push_back(position);
  return v;
}

}  // namespace vyre::differential
