// vyre::aot::units: the cache's own units and clock, for tools (vyre cache)
// that take and print them as the cache does.
#include "sys/safe_file.hpp"
#include "sys/units.hpp"
#include "vyre/aot.hpp"

namespace vyre::aot::units {

std::optional<uint64_t> parse_size(std::string_view text) { return sys::parse_size(text); }
std::optional<uint64_t> parse_count(std::string_view text) { return sys::parse_count(text); }
std::optional<std::chrono::seconds> parse_duration(std::string_view text) { return sys::parse_duration(text); }
std::string format_size(uint64_t bytes) { return sys::format_size(bytes); }
std::string format_age(int64_t milliseconds) { return sys::format_age(milliseconds); }
int64_t now_unix_ms() { return sys::now_unix_ms(); }

}  // namespace vyre::aot::units
