#include "sys/units.hpp"

#include <cctype>
#include <cstdio>

#include "util/concat.hpp"

namespace vyre::sys {
namespace {

// Digits at the start of `text`; the rest is left in `text`. A number
// beyond 64 bits is UINT64_MAX with `overflowed` set.
struct Number {
  uint64_t value = 0;
  bool overflowed = false;
};
std::optional<Number> leading_number(std::string_view& text) {
  Number n;
  size_t i = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (n.overflowed || n.value > (UINT64_MAX - digit) / 10) {
      n = Number{UINT64_MAX, true};
      continue;
    }
    n.value = n.value * 10 + digit;
  }
  if (i == 0) return std::nullopt;
  text.remove_prefix(i);
  return n;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Digits and the unit after them (trimmed, lower case; may be empty).
struct Amount {
  uint64_t number = 0;
  bool overflowed = false;
  std::string unit;
};
std::optional<Amount> amount(std::string_view text) {
  text = trim(text);
  auto number = leading_number(text);
  if (!number) return std::nullopt;
  return Amount{number->value, number->overflowed, lower(trim(text))};
}

Failure not_a(std::string_view what, std::string_view text, std::string_view accepted) {
  return failure(Fault::malformed, concat("`", text, "` is not ", what, ": ", accepted));
}

constexpr std::string_view kSizeForm = "write digits with an optional K, M, G or T (KiB ..., KB ...), e.g. 512M";
constexpr std::string_view kCountForm = "write a non-negative integer, e.g. 100000";
constexpr std::string_view kDurationForm = "write digits with s, m, h, d or w, e.g. 30d";

}  // namespace

Result<uint64_t> parse_size(std::string_view given) {
  auto parsed = amount(given);
  if (!parsed) return not_a("a size", given, kSizeForm);
  if (parsed->overflowed) return not_a("a size", given, "it is too large");
  const std::string& unit = parsed->unit;
  uint64_t multiplier = 1;
  if (unit.empty() || unit == "b") multiplier = 1;
  else if (unit == "k" || unit == "kib") multiplier = 1ull << 10;
  else if (unit == "m" || unit == "mib") multiplier = 1ull << 20;
  else if (unit == "g" || unit == "gib") multiplier = 1ull << 30;
  else if (unit == "t" || unit == "tib") multiplier = 1ull << 40;
  else if (unit == "kb") multiplier = 1000;
  else if (unit == "mb") multiplier = 1000'000;
  else if (unit == "gb") multiplier = 1000'000'000;
  else if (unit == "tb") multiplier = 1000'000'000'000;
  else return not_a("a size", given, kSizeForm);
  if (parsed->number > UINT64_MAX / multiplier) return not_a("a size", given, "it is too large");
  return parsed->number * multiplier;
}

Result<uint64_t> parse_count(std::string_view given) {
  auto parsed = amount(given);
  if (!parsed || !parsed->unit.empty()) return not_a("a count", given, kCountForm);
  if (parsed->overflowed) return not_a("a count", given, "it is too large");
  return parsed->number;
}

Result<std::chrono::seconds> parse_duration(std::string_view given) {
  auto parsed = amount(given);
  if (!parsed) return not_a("a duration", given, kDurationForm);
  const std::string& unit = parsed->unit;
  uint64_t seconds_per = 0;
  if (unit == "s") seconds_per = 1;
  else if (unit == "m" || unit == "min") seconds_per = 60;
  else if (unit == "h") seconds_per = 3600;
  else if (unit == "d") seconds_per = 86400;
  else if (unit == "w") seconds_per = uint64_t{7} * 86400;
  else return not_a("a duration", given, kDurationForm);
  const uint64_t longest = static_cast<uint64_t>(kLongestDuration.count());
  if (parsed->overflowed || parsed->number > longest / seconds_per) return kLongestDuration;
  return std::chrono::seconds(static_cast<int64_t>(parsed->number * seconds_per));
}

std::string format_size(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char buf[32];  // fits: 20 digits and a unit, or under 2^64 / 2^40 with one decimal
  if (unit == 0)
    (void)std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    (void)std::snprintf(buf, sizeof buf, "%.1f %s", value, kUnits[unit]);
  return buf;
}

std::string format_age(int64_t ms) {
  if (ms < 0) ms = 0;
  int64_t s = ms / 1000;
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "m";
  if (s < 86400) return std::to_string(s / 3600) + "h";
  return std::to_string(s / 86400) + "d";
}

}  // namespace vyre::sys
