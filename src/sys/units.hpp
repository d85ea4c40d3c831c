// Sizes ("64M", "1GiB", "500000") and durations ("30d", "12h", "90s") as
// settings and command-line options write them.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sys/result.hpp"

namespace vyre::sys {

// A byte count: digits with an optional suffix K, M, G, T (powers of 1024,
// also written KiB, MiB, GiB, TiB) or KB, MB, GB, TB (powers of 1000).
// Each parse fails with malformed, its message saying what is accepted.
Result<uint64_t> parse_size(std::string_view text);
// A plain non-negative integer.
Result<uint64_t> parse_count(std::string_view text);
// Digits with a unit: s, m, h, d, w. A duration longer than
// kLongestDuration, however many digits it has, is kLongestDuration: no
// wait reaches it, and every clock and conversion can hold it.
Result<std::chrono::seconds> parse_duration(std::string_view text);
inline constexpr std::chrono::seconds kLongestDuration{int64_t{36525} * 86400};  // 100 years

std::string format_size(uint64_t bytes);       // "1.5 MiB"
std::string format_age(int64_t milliseconds);  // "3h", "2d"

}  // namespace vyre::sys
