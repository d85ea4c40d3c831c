// Comparing the outputs of the reference interpreter and the GPU, buffer by
// buffer, with each buffer's CompareRule.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "differential/generated_case.hpp"
#include "vyre/dispatch.hpp"
#include "vyre/program.hpp"

namespace vyre::differential {

struct Difference {
  std::string buffer;
  size_t index = 0;
  uint32_t reference = 0;  // element bits
  uint32_t gpu = 0;
  std::string text;  // one line a person can read
};

// True when one element agrees under the rule.
bool element_agrees(ScalarType type, const CompareRule& rule, uint32_t reference, uint32_t gpu);

// Every element that disagrees (and every buffer missing or of another
// length), in buffer and index order.
std::vector<Difference> compare_outputs(const Program& program, const std::map<std::string, CompareRule>& rules,
                                        const Outputs& reference, const Outputs& gpu);

// An element as text: "7", "-3", "1.5 (0x3fc00000)".
std::string format_element(ScalarType type, uint32_t bits);

}  // namespace vyre::differential
