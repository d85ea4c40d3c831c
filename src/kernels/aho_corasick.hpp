// The Aho-Corasick automaton of a set of byte strings, built on the host as a
// dense DFA over byte classes, in the flat arrays a GPU pass reads
// (docs/lib.md, "find").
//
// Reading text byte by byte from state 0, the state reached after each byte
// is the longest suffix of the text read so far that begins some string, and
// that state's list names every string that ends there: its own and those of
// its failure links' states.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vyre::lib::detail {

// The bit of a transition that says its state ends some string; the states
// are fewer than 2^31 (AutomatonLimits).
constexpr uint32_t kEndsSome = 1u << 31;
constexpr uint32_t kStateBits = kEndsSome - 1;

struct ByteAutomaton {
  // Bytes that no string tells apart share a class: each byte that occurs in
  // some string has a class of its own, every other byte shares one more.
  std::array<uint32_t, 256> byte_class{};
  uint32_t classes = 0;
  uint32_t states = 0;            // state 0 is the root: nothing read yet
  // next[state * classes + class]: the state after a byte, with kEndsSome
  // set when that state's list is not empty (a scan then skips the list's
  // bounds at the many states that end nothing).
  std::vector<uint32_t> next;
  std::vector<uint32_t> starts;   // states + 1: state s ends the strings list[starts[s] .. starts[s + 1])
  std::vector<uint32_t> list;     // string indices, ascending within each state
  uint32_t most_per_state = 0;    // the longest of the states' lists
  uint32_t longest = 0;           // the longest string's bytes
};

// The limits a build refuses to pass: transitions (states x classes) and
// entries of the flattened lists.
struct AutomatonLimits {
  uint64_t transitions = 0;
  uint64_t list_entries = 0;
};

// Throws Error(invalid_input), its message beginning with `caller`, when the
// automaton would pass `limits`. Duplicates are each listed; an empty
// string would end at the root.
ByteAutomaton build_byte_automaton(const std::vector<std::string_view>& strings, const AutomatonLimits& limits,
                                   std::string_view caller);

}  // namespace vyre::lib::detail
