// concat(a, b, ...): one string from pieces (literals, strings, string
// views), sized once and appended in order.
//
// The library builds `"s" + std::to_string(n)` this way: that expression is
// operator+(const char*, std::string&&), which inserts at the front of the
// right-hand string, and GCC 12 at -O3 reads the insertion as a copy between
// overlapping ranges, a false -Wrestrict that fails a -Werror build
// (docs/ci.md, "The build types a user picks").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace vyre {

template <typename... Pieces>
std::string concat(const Pieces&... pieces) {
  const std::string_view views[] = {std::string_view(pieces)...};
  std::size_t size = 0;
  for (const std::string_view v : views) size += v.size();
  std::string out;
  out.reserve(size);
  for (const std::string_view v : views) out.append(v);
  return out;
}

// A name and its number, as "key3": the kernels' unrolled variables.
inline std::string numbered(std::string_view prefix, uint32_t k) { return concat(prefix, std::to_string(k)); }

}  // namespace vyre
