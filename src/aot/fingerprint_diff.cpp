#include "aot/fingerprint_diff.hpp"

#include <map>

#include "util/fingerprint_fields.hpp"

namespace vyre::aot {

std::vector<std::string> fingerprint_differences(std::string_view cached, std::string_view now) {
  std::vector<std::string> out;
  if (cached == now) return out;
  // Built by appending: GCC 12 at -O3 misreads `"\"" + std::string(s)` as an overlapping copy (-Wrestrict).
  auto quoted = [](std::string_view s) {
    std::string q;
    q.reserve(s.size() + 2);
    q.append(1, '"').append(s).append(1, '"');
    return q;
  };
  auto a = fingerprint_fields(cached);
  auto b = fingerprint_fields(now);
  if (!a || !b) {
    out.push_back("fingerprint: cached " + quoted(cached) + ", now " + quoted(now));
    return out;
  }
  std::map<std::string, std::string> before(a->begin(), a->end());
  std::map<std::string, std::string> after(b->begin(), b->end());
  // In the order the current fingerprint names them, then parts only the cached one has.
  for (const auto& [key, value] : *b) {
    auto it = before.find(key);
    if (it == before.end())
      out.push_back("fingerprint." + key + ": not in the cached entry, now " + quoted(value));
    else if (it->second != value)
      out.push_back("fingerprint." + key + ": cached " + quoted(it->second) + ", now " + quoted(value));
  }
  for (const auto& [key, value] : *a)
    if (!after.count(key)) out.push_back("fingerprint." + key + ": cached " + quoted(value) + ", now absent");
  if (out.empty()) out.push_back("fingerprint: same parts in another order");
  return out;
}

}  // namespace vyre::aot
