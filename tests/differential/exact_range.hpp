// The exact f32 domain: a set of values that every f32 operation the
// generator applies to them computes without rounding, so that any WGSL
// implementation must give the same bits (up to the sign of zero, which WGSL
// lets an implementation ignore).
//
// An ExactRange holds multiples of `quantum` (a power of two) in [lo, hi].
// When max(|lo|, |hi|) / quantum <= 2^24 every such value, and every partial
// sum or product of a polynomial over such values, is representable: the
// result of +, -, *, min, max, floor... is then the one WGSL allows for a
// "correctly rounded" operation, also after reassociation or fusion. Bounds
// keep every nonzero value normal (no flushing to zero) and finite.
#pragma once

#include <optional>

namespace vyre::differential {

struct ExactRange {
  double lo = 0;
  double hi = 0;
  double quantum = 1;

  bool contains_zero() const { return lo <= 0 && hi >= 0; }
  double magnitude() const;  // max(|lo|, |hi|)
  bool representable() const;
  bool within(const ExactRange& outer) const;  // a subset whose values are multiples of outer.quantum
};

// The range of one value (a literal); nullopt if the value is not in the domain.
std::optional<ExactRange> exact_value(float v);
// Integers in [lo, hi].
ExactRange integer_range(double lo, double hi);

// The result ranges; nullopt when the result can leave the exact domain.
std::optional<ExactRange> exact_add(const ExactRange& a, const ExactRange& b);
std::optional<ExactRange> exact_sub(const ExactRange& a, const ExactRange& b);
std::optional<ExactRange> exact_mul(const ExactRange& a, const ExactRange& b);
std::optional<ExactRange> exact_fma(const ExactRange& a, const ExactRange& b, const ExactRange& c);
ExactRange exact_neg(const ExactRange& a);
ExactRange exact_abs(const ExactRange& a);
ExactRange exact_min(const ExactRange& a, const ExactRange& b);
ExactRange exact_max(const ExactRange& a, const ExactRange& b);
ExactRange exact_hull(const ExactRange& a, const ExactRange& b);  // select
// floor, ceil, round, trunc: integers
ExactRange exact_to_integer(const ExactRange& a);
// fract(x) = x - floor(x); nullopt when 1 - quantum is not representable.
std::optional<ExactRange> exact_fract(const ExactRange& a);
// x * 2^k, exact while it stays in bounds.
std::optional<ExactRange> exact_scale(const ExactRange& a, int k);

}  // namespace vyre::differential
