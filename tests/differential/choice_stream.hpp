// The source of every random decision the program generator makes.
//
// Recording: decisions come from a seeded generator and are kept. Replay: the
// decisions are read back from a list, which the shrinker edits (deletes,
// zeroes, lowers); a missing decision reads as 0. The generator is written
// so that 0 is always the simplest choice (no more statements, a literal
// leaf, the smallest size), which makes every edited list describe a simpler
// program that the generator itself built, hence again valid and race-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace vyre::differential {

class ChoiceStream {
 public:
  static ChoiceStream from_seed(uint64_t seed);
  static ChoiceStream replay(std::vector<uint32_t> choices);

  // A decision in [0, n); n >= 1.
  uint32_t below(uint32_t n);
  // True with about `percent` % probability; a zero decision is false.
  bool coin(uint32_t percent);
  // An index drawn with the given weights; a zero decision is index 0.
  size_t weighted(std::initializer_list<uint32_t> weights);
  // A value in [lo, hi]; a zero decision is lo.
  uint32_t range(uint32_t lo, uint32_t hi) { return lo + below(hi - lo + 1); }

  // Decisions the shrinker tries first, because lowering them removes the
  // most: how many statements or buffers to make (`count`), and whether an
  // expression is a leaf (`shape`, with the leaf at index 0).
  uint32_t count(uint32_t n);
  size_t shape(std::initializer_list<uint32_t> weights);

  // Every decision taken so far, as the values returned.
  const std::vector<uint32_t>& decisions() const { return taken_; }
  const std::vector<size_t>& count_positions() const { return counts_; }
  const std::vector<size_t>& shape_positions() const { return shapes_; }

 private:
  ChoiceStream() = default;
  uint64_t next_random();

  bool replaying_ = false;
  uint64_t state_ = 0;
  std::vector<uint32_t> script_;
  size_t position_ = 0;
  std::vector<uint32_t> taken_;
  std::vector<size_t> counts_;
  std::vector<size_t> shapes_;
};

}  // namespace vyre::differential
