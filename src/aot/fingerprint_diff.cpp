#include "aot/fingerprint_diff.hpp"

#include <map>

namespace vyre::aot {

std::optional<std::vector<std::pair<std::string, std::string>>> fingerprint_parts(std::string_view fingerprint) {
  std::vector<std::pair<std::string, std::string>> parts;
  while (!fingerprint.empty()) {
    size_t end = fingerprint.find(';');
    std::string_view item = fingerprint.substr(0, end);
    fingerprint = end == std::string_view::npos ? std::string_view{} : fingerprint.substr(end + 1);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) return std::nullopt;
    parts.emplace_back(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
  }
  if (parts.empty()) return std::nullopt;
  return parts;
}

std::vector<std::string> fingerprint_differences(std::string_view cached, std::string_view now) {
  std::vector<std::string> out;
  if (cached == now) return out;
  auto quoted = [](std::string_view s) { return "\"" + std::string(s) + "\""; };
  auto a = fingerprint_parts(cached);
  auto b = fingerprint_parts(now);
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
