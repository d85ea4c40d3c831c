// vyre::lib::find: every occurrence of many literal byte patterns in a byte
// haystack, on the GPU (docs/lib.md, "find"): what a secret scanner does.
//
//   vyre::lib::Matches m = vyre::lib::find(backend, haystack, {"AKIA", "ghp_", "-----BEGIN"});
//   // m.pattern[k] occurs at byte m.position[k], ordered by position, then pattern
//
// An Aho-Corasick automaton of the reversed patterns is built on the host as
// a dense DFA over byte classes and uploaded. Each invocation reads its
// chunk of the haystack backwards, from (longest - 1) bytes past its end, and
// reports the matches that START in its chunk, so every match is found once
// and in order. A count pass, an exclusive scan and a read back of the total
// size the result; then a write pass and an expand pass fill it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vyre/export.hpp"
#include "vyre/gpu.hpp"
#include "vyre/lib/options.hpp"
#include "vyre/program.hpp"

namespace vyre::lib {

// What one call takes: patterns, one pattern's bytes (so that an
// invocation's scan, chunk + longest - 1 bytes, stays far below lavapipe's
// 65,535 loop iterations), and all patterns' bytes together.
constexpr uint32_t kFindMaxPatterns = 65536;
constexpr uint32_t kFindMaxPatternBytes = 32768;
constexpr uint32_t kFindMaxTotalBytes = 1u << 24;
// The automaton's bounds: transitions (states x byte classes, 4 bytes each:
// 128 MiB) and (state, pattern) pairs of its flattened lists.
constexpr uint32_t kFindMaxTransitions = 1u << 25;
constexpr uint32_t kFindMaxListEntries = 1u << 25;

// Each invocation takes `chunk` consecutive haystack bytes (16 to 4096),
// reading longest - 1 more past them; `workgroup` invocations a workgroup (a
// power of two from 1 to 256).
struct VYRE_API FindShape {
  uint32_t workgroup = 64;
  uint32_t chunk = 256;

  friend bool operator==(const FindShape&, const FindShape&) = default;
};

// The shape find runs on `backend` when given none and not tuned: the device
// class's default (docs/lib.md, "find").
VYRE_API FindShape default_find_shape(const gpu::Backend& backend);

// Every (pattern, position) pair where patterns[pattern] occurs starting at
// byte `position`, overlapping occurrences included and duplicate patterns
// each reported, ordered by position, then pattern.
struct VYRE_API Matches {
  std::vector<uint32_t> pattern;
  std::vector<uint32_t> position;

  size_t size() const { return pattern.size(); }
  friend bool operator==(const Matches&, const Matches&) = default;
};

// The same, as two u32 buffers on the GPU, of one element per match.
struct VYRE_API MatchBuffers {
  std::shared_ptr<gpu::DeviceBuffer> pattern;
  std::shared_ptr<gpu::DeviceBuffer> position;
};

// The passes' programs. Buffers: `haystack` (u8), `byte_class` (256 u32),
// `next` (states x classes u32), `starts` (states + 1 u32), `params` (u32:
// the longest pattern's bytes, the classes). One invocation per chunk, the
// invocation i = (wid.x + wid.y * nwg.x) * workgroup + lid.x.
//   count:  to `counts` (2 x chunks u32): counts[i] the positions of chunk i
//           where a match starts, counts[chunks + i] its matches;
//   write:  from `counts` and `offsets` (their exclusive scan), to
//           `event_position`, `event_first` (its first match's index) and
//           `event_from` (its state's list's first entry in `list`), one per
//           position where a match starts, in order;
//   expand: one invocation per match m (m = (wid.x + wid.y * nwg.x) *
//           workgroup + lid.x): the position whose `event_first` is the last
//           at or below m, and the pattern list[event_from + m - event_first],
//           to `pattern` and `position`.
VYRE_API Program find_count_pass(const FindShape& shape = {});
VYRE_API Program find_write_pass(const FindShape& shape = {});
VYRE_API Program find_expand_pass(uint32_t workgroup = FindShape{}.workgroup);

// The matches in a u8 buffer already on the GPU, left there. Reads back
// two numbers (how many positions and matches) to size the result, so a
// call waits for the GPU twice. Throws Error(invalid_input) for an empty
// pattern, more patterns or bytes than the bounds above, a buffer of another
// type, or a shape out of range; Error(limit_exceeded) where the result
// would not fit the device's buffers.
VYRE_API MatchBuffers find(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& haystack,
                           const std::vector<std::string>& patterns,
                           const std::optional<FindShape>& shape = std::nullopt,
                           const Options& options = Options::from_environment());

// Host memory in and out.
VYRE_API Matches find(gpu::Backend& backend, std::span<const uint8_t> haystack,
                      const std::vector<std::string>& patterns, const std::optional<FindShape>& shape = std::nullopt,
                      const Options& options = Options::from_environment());

inline Matches find(gpu::Backend& backend, std::string_view haystack, const std::vector<std::string>& patterns,
                    const std::optional<FindShape>& shape = std::nullopt,
                    const Options& options = Options::from_environment()) {
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(haystack.data()), haystack.size());
  return find(backend, bytes, patterns, shape, options);
}

}  // namespace vyre::lib
