// Milliseconds since a steady-clock instant: the unit of every report's timings.
#pragma once

#include <chrono>

namespace vyre {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace vyre
