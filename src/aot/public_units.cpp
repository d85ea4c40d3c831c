// vyre::aot::units: the cache's own units and clock, for tools (vyre cache)
// that take and print them as the cache does.
#include "aot/safe_file.hpp"
#include "aot/units.hpp"
#include "vyre/aot.hpp"

namespace vyre::aot::units {

std::optional<uint64_t> parse_size(std::string_view text) { return aot::parse_size(text); }
std::optional<uint64_t> parse_count(std::string_view text) { return aot::parse_count(text); }
std::optional<std::chrono::seconds> parse_duration(std::string_view text) { return aot::parse_duration(text); }
std::string format_size(uint64_t bytes) { return aot::format_size(bytes); }
std::string format_age(int64_t milliseconds) { return aot::format_age(milliseconds); }
int64_t now_unix_ms() { return aot::now_unix_ms(); }

}  // namespace vyre::aot::units
