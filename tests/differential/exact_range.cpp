#include "differential/exact_range.hpp"

#include <algorithm>
#include <cmath>

namespace vyre::differential {
namespace {

// 24 significand bits; magnitudes far from the limits of the exponent.
constexpr double kMaxRatio = 16777216.0;  // 2^24
constexpr double kMaxMagnitude = 1099511627776.0;  // 2^40
constexpr double kMinQuantum = 1.0 / 1099511627776.0;  // 2^-40

std::optional<ExactRange> checked(ExactRange r) {
  if (!r.representable()) return std::nullopt;
  return r;
}

}  // namespace

double ExactRange::magnitude() const { return std::max(std::fabs(lo), std::fabs(hi)); }

bool ExactRange::representable() const {
  return lo <= hi && quantum >= kMinQuantum && magnitude() <= kMaxMagnitude && magnitude() / quantum <= kMaxRatio;
}

bool ExactRange::within(const ExactRange& outer) const {
  return lo >= outer.lo && hi <= outer.hi && quantum >= outer.quantum;
}

std::optional<ExactRange> exact_value(float v) {
  if (!std::isfinite(v)) return std::nullopt;
  if (v == 0.0f) return ExactRange{0, 0, 1};
  // The largest power of two dividing v: its lowest set significand bit.
  int exponent = 0;
  double m = std::frexp(static_cast<double>(v), &exponent);  // v = m * 2^exponent, 0.5 <= |m| < 1
  int shift = 0;
  while (m != std::trunc(m)) {
    m *= 2;
    ++shift;
  }
  const double quantum = std::ldexp(1.0, exponent - shift);
  return checked(ExactRange{v, v, quantum});
}

ExactRange integer_range(double lo, double hi) { return ExactRange{lo, hi, 1}; }

std::optional<ExactRange> exact_add(const ExactRange& a, const ExactRange& b) {
  return checked({a.lo + b.lo, a.hi + b.hi, std::min(a.quantum, b.quantum)});
}

std::optional<ExactRange> exact_sub(const ExactRange& a, const ExactRange& b) {
  return checked({a.lo - b.hi, a.hi - b.lo, std::min(a.quantum, b.quantum)});
}

std::optional<ExactRange> exact_mul(const ExactRange& a, const ExactRange& b) {
  const double p[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  return checked({*std::min_element(p, p + 4), *std::max_element(p, p + 4), a.quantum * b.quantum});
}

std::optional<ExactRange> exact_fma(const ExactRange& a, const ExactRange& b, const ExactRange& c) {
  auto product = exact_mul(a, b);
  if (!product) return std::nullopt;
  return exact_add(*product, c);
}

ExactRange exact_neg(const ExactRange& a) { return {-a.hi, -a.lo, a.quantum}; }

ExactRange exact_abs(const ExactRange& a) {
  if (a.contains_zero()) return {0, a.magnitude(), a.quantum};
  return {std::min(std::fabs(a.lo), std::fabs(a.hi)), a.magnitude(), a.quantum};
}

ExactRange exact_min(const ExactRange& a, const ExactRange& b) {
  return {std::min(a.lo, b.lo), std::min(a.hi, b.hi), std::min(a.quantum, b.quantum)};
}

ExactRange exact_max(const ExactRange& a, const ExactRange& b) {
  return {std::max(a.lo, b.lo), std::max(a.hi, b.hi), std::min(a.quantum, b.quantum)};
}

ExactRange exact_hull(const ExactRange& a, const ExactRange& b) {
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi), std::min(a.quantum, b.quantum)};
}

ExactRange exact_to_integer(const ExactRange& a) {
  // Rounding is monotone: the results lie between floor(lo) and ceil(hi).
  return {std::floor(a.lo), std::ceil(a.hi), std::max(a.quantum, 1.0)};
}

std::optional<ExactRange> exact_fract(const ExactRange& a) {
  if (a.quantum >= 1) return ExactRange{0, 0, 1};
  if (1.0 / a.quantum > kMaxRatio) return std::nullopt;
  return checked({0, 1 - a.quantum, a.quantum});
}

std::optional<ExactRange> exact_scale(const ExactRange& a, int k) {
  return checked({std::ldexp(a.lo, k), std::ldexp(a.hi, k), std::ldexp(a.quantum, k)});
}

}  // namespace vyre::differential
