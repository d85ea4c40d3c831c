#pragma once

#include <string_view>

#include "ir/limits.hpp"

namespace vyre {

// [A-Za-z_][A-Za-z0-9_]*, at most kMaxIdentifierLength characters.
inline bool is_identifier(std::string_view s) {
  if (s.empty() || s.size() > kMaxIdentifierLength) return false;
  auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!alpha(s[0])) return false;
  for (char c : s)
    if (!alpha(c) && !digit(c)) return false;
  return true;
}

}  // namespace vyre
