// What the figure programs print: one JSON object per line,
// {"name": ..., "value": ..., "unit": ...}, and the median they report.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace vyre::bench {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

inline void emit(const std::string& name, double value, const std::string& unit) {
  std::printf("{\"name\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"}\n", name.c_str(), value, unit.c_str());
  std::fflush(stdout);
}

inline void emit_text(const std::string& name, const std::string& value) {
  std::printf("{\"name\": \"%s\", \"value\": \"%s\", \"unit\": \"\"}\n", name.c_str(), value.c_str());
  std::fflush(stdout);
}

}  // namespace vyre::bench
