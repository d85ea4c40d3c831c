#include "kernels/aho_corasick.hpp"

#include <algorithm>
#include <utility>

#include "vyre/error.hpp"

namespace vyre::lib::detail {
namespace {

constexpr uint32_t kNoState = UINT32_MAX;
constexpr uint32_t kByteValues = 256;

// Classes: one per byte some string holds, in byte order, then one for all
// the others (when there are any).
void classify(ByteAutomaton& a, const std::vector<std::string_view>& strings) {
  std::array<bool, kByteValues> used{};
  for (std::string_view s : strings)
    for (char c : s) used[static_cast<uint8_t>(c)] = true;
  uint32_t classes = 0;
  for (uint32_t b = 0; b < kByteValues; ++b)
    if (used[b]) a.byte_class[b] = classes++;
  if (classes < kByteValues) {
    for (uint32_t b = 0; b < kByteValues; ++b)
      if (!used[b]) a.byte_class[b] = classes;
    ++classes;
  }
  a.classes = classes;
}

std::string too_many_transitions(std::string_view caller, uint64_t states, const ByteAutomaton& a,
                                 const AutomatonLimits& limits) {
  return std::string(caller) + ": the patterns' automaton needs at least " + std::to_string(states) + " states x " +
         std::to_string(a.classes) + " byte classes, more than " + std::to_string(limits.transitions) +
         " transitions: give fewer or shorter patterns, or patterns of fewer distinct bytes, or split them into "
         "several calls";
}

// The trie: state 0 the root, each string's path from it; returns the state
// where each string ends.
std::vector<uint32_t> build_trie(ByteAutomaton& a, const std::vector<std::string_view>& strings,
                                 const AutomatonLimits& limits, std::string_view caller) {
  const uint32_t c = a.classes;
  a.next.assign(c, kNoState);
  a.states = 1;
  std::vector<uint32_t> ends;
  ends.reserve(strings.size());
  for (std::string_view s : strings) {
    uint32_t state = 0;
    for (char byte : s) {
      const size_t at = size_t{state} * c + a.byte_class[static_cast<uint8_t>(byte)];
      if (a.next[at] == kNoState) {
        if ((uint64_t{a.states} + 1) * c > limits.transitions || a.states >= kStateBits)
          throw Error(ErrorKind::invalid_input, too_many_transitions(caller, uint64_t{a.states} + 1, a, limits));
        a.next[at] = a.states++;
        a.next.resize(size_t{a.states} * c, kNoState);
      }
      state = a.next[at];
    }
    ends.push_back(state);
    a.longest = std::max(a.longest, static_cast<uint32_t>(s.size()));
  }
  return ends;
}

// Breadth first from the root: each state's failure link (the state of its
// longest proper suffix that is in the trie), and every missing transition
// taken from the failure link's. Returns the states in that order.
std::vector<uint32_t> link_failures(ByteAutomaton& a, std::vector<uint32_t>& failure) {
  const uint32_t c = a.classes;
  failure.assign(a.states, 0);
  std::vector<uint32_t> order;
  order.reserve(a.states);
  order.push_back(0);
  for (uint32_t k = 0; k < c; ++k) {
    uint32_t& t = a.next[k];
    if (t == kNoState) {
      t = 0;
    } else {
      order.push_back(t);  // failure 0
    }
  }
  for (size_t q = 1; q < order.size(); ++q) {
    const uint32_t s = order[q];
    const size_t row = size_t{s} * c;
    const size_t fallback = size_t{failure[s]} * c;  // complete already: a shallower state
    for (uint32_t k = 0; k < c; ++k) {
      uint32_t& t = a.next[row + k];
      if (t == kNoState) {
        t = a.next[fallback + k];
      } else {
        failure[t] = a.next[fallback + k];
        order.push_back(t);
      }
    }
  }
  return order;
}

// Each state's list: the strings ending at it, merged with its failure
// link's list (which holds every shorter suffix's), ascending.
void flatten_lists(ByteAutomaton& a, const std::vector<uint32_t>& ends, const std::vector<uint32_t>& failure,
                   const std::vector<uint32_t>& order, const AutomatonLimits& limits, std::string_view caller) {
  std::vector<uint32_t> own_starts(a.states + 1, 0);  // the strings ending at each state, grouped by state
  for (uint32_t state : ends) ++own_starts[state + 1];
  for (uint32_t s = 0; s < a.states; ++s) own_starts[s + 1] += own_starts[s];
  std::vector<uint32_t> own(ends.size());
  {
    std::vector<uint32_t> fill(own_starts.begin(), own_starts.end() - 1);
    for (uint32_t i = 0; i < ends.size(); ++i) own[fill[ends[i]]++] = i;  // ascending within a state
  }
  std::vector<uint64_t> count(a.states, 0);
  for (uint32_t s : order)
    count[s] = (own_starts[s + 1] - own_starts[s]) + (s == 0 ? 0 : count[failure[s]]);
  a.starts.assign(a.states + 1, 0);
  uint64_t total = 0;
  for (uint32_t s = 0; s < a.states; ++s) {
    a.starts[s] = static_cast<uint32_t>(total);
    total += count[s];
    if (total > limits.list_entries)
      throw Error(ErrorKind::invalid_input,
                  std::string(caller) + ": the patterns' automaton lists more than " +
                      std::to_string(limits.list_entries) +
                      " (state, pattern) pairs: too many patterns are suffixes of others (or duplicates); split "
                      "them into several calls");
    a.most_per_state = std::max(a.most_per_state, static_cast<uint32_t>(count[s]));
  }
  a.starts[a.states] = static_cast<uint32_t>(total);
  a.list.resize(total);
  for (uint32_t s : order) {
    const auto mine = a.list.begin() + a.starts[s];
    const auto own_first = own.begin() + own_starts[s];
    const auto own_last = own.begin() + own_starts[s + 1];
    if (s == 0) {
      std::copy(own_first, own_last, mine);
    } else {
      const auto linked = a.list.begin() + a.starts[failure[s]];
      std::merge(own_first, own_last, linked, linked + static_cast<std::ptrdiff_t>(count[failure[s]]), mine);
    }
  }
}

}  // namespace

ByteAutomaton build_byte_automaton(const std::vector<std::string_view>& strings, const AutomatonLimits& limits,
                                   std::string_view caller) {
  ByteAutomaton a;
  classify(a, strings);
  const std::vector<uint32_t> ends = build_trie(a, strings, limits, caller);
  std::vector<uint32_t> failure;
  const std::vector<uint32_t> order = link_failures(a, failure);
  flatten_lists(a, ends, failure, order, limits, caller);
  for (uint32_t& t : a.next)
    if (a.starts[t + 1] > a.starts[t]) t |= kEndsSome;
  return a;
}

}  // namespace vyre::lib::detail
