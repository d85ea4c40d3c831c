// Deadlines and conversions of durations that saturate instead of
// overflowing: a setting may be written as long as its owner likes
// ("300000000000h", milliseconds::max()), the clocks may not (the steady
// clock counts nanoseconds in 64 bits: 292 years).
#pragma once

#include <chrono>
#include <cstdint>

namespace vyre::sys {

// `d` in milliseconds, held at the representable extremes.
template <class Rep, class Period>
std::chrono::milliseconds saturating_millis(std::chrono::duration<Rep, Period> d) {
  const long double ms = std::chrono::duration<long double, std::milli>(d).count();
  if (ms >= static_cast<long double>(INT64_MAX)) return std::chrono::milliseconds::max();
  if (ms <= static_cast<long double>(INT64_MIN)) return std::chrono::milliseconds::min();
  return std::chrono::duration_cast<std::chrono::milliseconds>(d);
}

// `from` plus `wait` on the steady clock; the clock's last instant when
// that lies beyond it (a deadline that never comes), `from` when `wait` is
// not positive.
inline std::chrono::steady_clock::time_point deadline_after(std::chrono::steady_clock::time_point from,
                                                            std::chrono::milliseconds wait) {
  using Clock = std::chrono::steady_clock;
  if (wait.count() <= 0) return from;
  const auto room = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::time_point::max() - from);
  if (wait >= room) return Clock::time_point::max();
  return from + wait;
}

inline std::chrono::steady_clock::time_point deadline_after(std::chrono::milliseconds wait) {
  return deadline_after(std::chrono::steady_clock::now(), wait);
}

}  // namespace vyre::sys
