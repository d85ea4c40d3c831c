#include "util/fingerprint_fields.hpp"

namespace vyre {

std::string format_fingerprint(const FingerprintFields& fields) {
  std::string out;
  for (const auto& [name, value] : fields) {
    if (!out.empty()) out += ';';
    out += name;
    out += '=';
    out += value;
  }
  return out;
}

std::optional<FingerprintFields> fingerprint_fields(std::string_view fingerprint) {
  FingerprintFields fields;
  while (!fingerprint.empty()) {
    size_t end = fingerprint.find(';');
    std::string_view item = fingerprint.substr(0, end);
    fingerprint = end == std::string_view::npos ? std::string_view{} : fingerprint.substr(end + 1);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) return std::nullopt;
    fields.emplace_back(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
  }
  if (fields.empty()) return std::nullopt;
  return fields;
}

}  // namespace vyre
