// f32 values: the exact domain (exact_range.hpp), values that may be NaN,
// infinite or subnormal (only copied, converted to integers or cast to
// bool), and the imprecise operations whose results are compared within
// WGSL's accuracy bounds.
#include <bit>
#include <cmath>

#include "differential/program_generator.hpp"

namespace vyre::differential::detail {

using namespace vyre::build;

namespace {

constexpr float kExactLiterals[] = {0.0f, 1.0f,   -1.0f,  2.0f,   0.5f, -0.5f,  3.0f,  0.25f, 1.5f,
                                    10.0f, -7.0f, 100.0f, 0.125f, 1024.0f, -0.0f, 0.75f, -2.5f, 16.0f};

ExactRange domain(double lo, double hi, double quantum = std::ldexp(1.0, -40)) { return {lo, hi, quantum}; }

// An f32 operand domain of one sign, for divisors and atan2's arguments.
ExactRange signed_domain(ChoiceStream& choices, double lo, double hi) {
  return choices.coin(50) ? domain(-hi, -lo) : domain(lo, hi);
}

void widen(CompareRule& rule, double abs, double ulps, const char* why) {
  rule.abs = std::max(rule.abs, abs);
  rule.ulps = std::max(rule.ulps, ulps);
  if (rule.why.empty()) rule.why = why;
}

bool flags_allow(const F32Class& c, bool nan_inf, bool subnormal, bool zero) {
  if (c.kind == F32Class::Kind::exact) return zero || !c.range.contains_zero();
  if (c.kind != F32Class::Kind::special) return false;
  return (nan_inf || !c.special.nan_inf) && (subnormal || !c.special.subnormal) && (zero || !c.zero);
}

}  // namespace

Expr ProgramGenerator::f32_literal_exact(float v) { return f32(v); }

// ---- the exact domain ---------------------------------------------------------------

F32Value ProgramGenerator::exact_leaf(int depth) {
  switch (choices_.weighted({4, 3, 4, 2, 1, 1, 2})) {
    case 1: {
      auto candidates = locals_where([](const Local& l) {
        return l.type == ScalarType::F32 && l.f32.kind == F32Class::Kind::exact;
      });
      if (auto* l = pick(candidates)) return {var(l->name), l->f32.range};
      break;
    }
    case 2: {
      auto candidates = buffers_where([&](const BufferInfo& b) {
        return b.decl.type == ScalarType::F32 && b.f32.kind == F32Class::Kind::exact && readable(b);
      });
      if (BufferInfo* b = pick(candidates)) return {load(b->decl.name, read_index(*b, depth)), b->f32.range};
      break;
    }
    case 3: {
      // Integers of at most 24 bits convert exactly.
      if (choices_.coin(50)) {
        const uint32_t bits = choices_.range(1, 16);
        const uint32_t mask = (1u << bits) - 1;
        return {cast(ScalarType::F32, bit_and(int_expr(ScalarType::U32, depth - 1), u32(mask))),
                integer_range(0, mask)};
      }
      const uint32_t shift = choices_.range(8, 31);
      const double half = std::ldexp(1.0, 31 - static_cast<int>(shift));
      return {cast(ScalarType::F32, shr(int_expr(ScalarType::I32, depth - 1), u32(shift))),
              integer_range(-half, half - 1)};
    }
    case 4: return {cast(ScalarType::F32, bool_expr(depth - 1)), integer_range(0, 1)};
    case 5: {
      auto counters = locals_where([](const Local& l) { return l.small.has_value(); });
      if (auto* l = pick(counters))
        return {cast(ScalarType::F32, var(l->name)),
                integer_range(static_cast<double>(l->small->first), static_cast<double>(l->small->second))};
      break;
    }
    case 6:
      if (const PrivateArray* a = pick_array([](const PrivateArray& a) { return a.type == ScalarType::F32; })) {
        const PrivateArray copy = *a;
        return {load(copy.name, array_index(copy, depth)), copy.range};
      }
      break;
    default: break;
  }
  const float v = kExactLiterals[choices_.below(std::size(kExactLiterals))];
  return {f32_literal_exact(v), exact_value(v)};
}

F32Value ProgramGenerator::exact_expr(int depth) {
  if (depth <= 0) return exact_leaf(0);
  const size_t kind = choices_.shape({3, 4, 2, 1, 1, 1, 1, 2, 1, 1});
  if (kind == 0) return exact_leaf(depth);
  F32Value a = exact_expr(depth - 1);
  const ExactRange& ra = *a.exact;
  switch (kind) {
    case 1: {
      F32Value b = exact_expr(depth - 1);
      const bool plus = choices_.coin(50);
      if (auto r = plus ? exact_add(ra, *b.exact) : exact_sub(ra, *b.exact))
        return {plus ? add(std::move(a.expr), std::move(b.expr)) : sub(std::move(a.expr), std::move(b.expr)), *r};
      break;
    }
    case 2: {
      F32Value b = exact_expr(depth - 1);
      if (auto r = exact_mul(ra, *b.exact)) return {mul(std::move(a.expr), std::move(b.expr)), *r};
      break;
    }
    case 3:
      if (choices_.coin(50)) return {neg(std::move(a.expr)), exact_neg(ra)};
      return {abs(std::move(a.expr)), exact_abs(ra)};
    case 4: {
      F32Value b = exact_expr(depth - 1);
      if (choices_.coin(50)) return {min(std::move(a.expr), std::move(b.expr)), exact_min(ra, *b.exact)};
      return {max(std::move(a.expr), std::move(b.expr)), exact_max(ra, *b.exact)};
    }
    case 5: {
      F32Value lo = exact_expr(depth - 1);
      F32Value hi = exact_expr(depth - 1);
      const ExactRange r = exact_min(exact_max(ra, *lo.exact), *hi.exact);
      return {clamp(std::move(a.expr), std::move(lo.expr), std::move(hi.expr)), r};
    }
    case 6: {
      Expr c = bool_expr(depth - 1);
      F32Value b = exact_expr(depth - 1);
      const ExactRange r = exact_hull(ra, *b.exact);
      return {select(std::move(c), std::move(a.expr), std::move(b.expr)), r};
    }
    case 7: {
      static const Op kRounding[] = {Op::Floor, Op::Ceil, Op::Round, Op::Trunc};
      return {unary(kRounding[choices_.below(4)], std::move(a.expr)), exact_to_integer(ra)};
    }
    case 8:
      if (auto r = exact_fract(ra)) return {unary(Op::Fract, std::move(a.expr)), *r};
      break;
    case 9: {
      // fma may be fused or not: the same value when a*b and a*b+c are exact.
      F32Value b = exact_expr(depth - 1);
      F32Value c = exact_expr(depth - 1);
      if (auto r = exact_fma(ra, *b.exact, *c.exact))
        return {fma(std::move(a.expr), std::move(b.expr), std::move(c.expr)), *r};
      break;
    }
    default: break;
  }
  return a;  // the operation could leave the exact domain: keep its operand
}

F32Value ProgramGenerator::fit(F32Value v, const ExactRange& into) {
  if (v.exact->within(into)) return v;
  // Clamp into the range, then round down to a multiple of its quantum:
  // floor(x * 2^k) * 2^-k, every step exact.
  Expr e = clamp(std::move(v.expr), f32(static_cast<float>(into.lo)), f32(static_cast<float>(into.hi)));
  ExactRange r = exact_min(exact_max(*v.exact, {into.lo, into.lo, into.quantum}), {into.hi, into.hi, into.quantum});
  if (r.quantum < into.quantum) {
    int k = 0;
    std::frexp(into.quantum, &k);
    k -= 1;  // into.quantum = 2^k
    auto scaled = exact_scale(r, -k);
    if (!scaled) return {f32(static_cast<float>(into.contains_zero() ? 0.0 : into.lo)), exact_value(0)};
    e = mul(unary(Op::Floor, mul(std::move(e), f32(static_cast<float>(std::ldexp(1.0, -k))))),
            f32(static_cast<float>(into.quantum)));
    ExactRange floored = exact_to_integer(*scaled);
    r = {std::ldexp(floored.lo, k), std::ldexp(floored.hi, k), into.quantum};
    r.lo = std::max(r.lo, into.lo);
    r.hi = std::min(r.hi, into.hi);
  }
  if (!r.within(into) || !r.representable()) {
    const float fallback = static_cast<float>(into.contains_zero() ? 0.0 : into.lo);
    return {f32(fallback), ExactRange{fallback, fallback, into.quantum}};
  }
  return {std::move(e), r};
}

// ---- f32 values that may not be exact ------------------------------------------------

F32Value ProgramGenerator::f32_expr(int depth, bool nan_inf, bool subnormal, bool zero) {
  const bool any_bits = nan_inf && subnormal && zero;
  switch (choices_.weighted({5, 2, 1, 3, any_bits ? 1u : 0u, depth > 0 ? 1u : 0u})) {
    case 1: {
      uint32_t bits = pick_special_f32_bits(choices_, {nan_inf, subnormal});
      if (!zero && (bits & 0x7fffffffu) == 0) bits = pick_normal_f32_bits(choices_);
      F32Value v;
      v.expr = f32_bits(bits);
      v.nan_inf = nan_inf;
      v.subnormal = subnormal;
      v.zero = zero;
      return v;
    }
    case 2: {
      auto candidates = locals_where([&](const Local& l) {
        return l.type == ScalarType::F32 && l.f32.kind == F32Class::Kind::special &&
               flags_allow(l.f32, nan_inf, subnormal, zero);
      });
      if (auto* l = pick(candidates)) {
        F32Value v;
        v.expr = var(l->name);
        v.nan_inf = l->f32.special.nan_inf;
        v.subnormal = l->f32.special.subnormal;
        v.zero = l->f32.zero;
        return v;
      }
      break;
    }
    case 3: {
      auto candidates = buffers_where([&](const BufferInfo& b) {
        return b.decl.type == ScalarType::F32 && flags_allow(b.f32, nan_inf, subnormal, zero) && readable(b);
      });
      if (BufferInfo* b = pick(candidates)) {
        F32Value v;
        v.expr = load(b->decl.name, read_index(*b, depth));
        if (b->f32.kind == F32Class::Kind::exact) {
          v.exact = b->f32.range;
          v.zero = b->f32.range.contains_zero();
        } else {
          v.nan_inf = b->f32.special.nan_inf;
          v.subnormal = b->f32.special.subnormal;
          v.zero = b->f32.zero;
        }
        return v;
      }
      break;
    }
    case 4: {
      // Any bits at all.
      F32Value v;
      v.expr = bitcast(ScalarType::F32, int_expr(choices_.coin(50) ? ScalarType::I32 : ScalarType::U32, depth - 1));
      v.nan_inf = v.subnormal = v.zero = true;
      return v;
    }
    case 5: {
      Expr c = bool_expr(depth - 1);
      F32Value a = f32_expr(depth - 1, nan_inf, subnormal, zero);
      F32Value b = f32_expr(depth - 1, nan_inf, subnormal, zero);
      F32Value v;
      v.expr = select(std::move(c), std::move(a.expr), std::move(b.expr));
      v.nan_inf = a.nan_inf || b.nan_inf;
      v.subnormal = a.subnormal || b.subnormal;
      v.zero = a.zero || b.zero;
      return v;
    }
    default: break;
  }
  F32Value v = exact_expr(depth);
  if (!zero && v.exact->contains_zero()) {
    // Away from zero: max(|v|, 0.5) is exact and positive.
    auto r = exact_max(exact_abs(*v.exact), {0.5, 0.5, 0.5});
    if (r.representable()) return {max(abs(std::move(v.expr)), f32(0.5f)), r, false, false, false};
    return {f32(1.0f), exact_value(1.0f), false, false, false};
  }
  v.zero = v.exact->contains_zero();
  return v;
}

F32Value ProgramGenerator::fit_into_class(const F32Class& c, int depth) {
  if (c.kind == F32Class::Kind::exact) return fit(exact_expr(depth), c.range);
  return f32_expr(depth, c.special.nan_inf, c.special.subnormal, c.zero);
}

// ---- imprecise operations --------------------------------------------------------

F32Value ProgramGenerator::imprecise_value(BufferInfo& target, int depth) {
  CompareRule& rule = target.rule;
  auto operand = [&](const ExactRange& d) { return fit(exact_expr(depth - 1), d).expr; };
  auto positive = domain(std::ldexp(1.0, -10), std::ldexp(1.0, 20));
  F32Value out;
  switch (target.imprecise) {
    case Imprecise::div: {
      Expr a = exact_expr(depth - 1).expr;
      out.expr = div(std::move(a), operand(signed_domain(choices_, 0.25, 64)));
      widen(rule, 0, 3.5, "div: 2.5 ULP for divisors in [2^-126, 2^126]");
      break;
    }
    case Imprecise::rem: {
      // x - y * trunc(x / y) with every step exact except the quotient: a
      // 2.5-ULP quotient can move trunc by one, so the result may be off by |y|.
      Expr a = operand({-1024, 1024, 1.0 / 256});
      ExactRange d = signed_domain(choices_, 0.25, 64);
      d.quantum = 1.0 / 256;
      out.expr = rem(std::move(a), operand(d));
      widen(rule, 64, 1, "rem: inherited from x - y * trunc(x / y); off by |y| <= 64 when the quotient is");
      break;
    }
    case Imprecise::pow: {
      Expr a = operand(domain(0.5, 4));
      out.expr = pow(std::move(a), operand(domain(-4, 4)));
      widen(rule, 0, 100, "pow: inherited from exp2(y * log2(x)), x in [0.5, 4], y in [-4, 4]");
      break;
    }
    case Imprecise::atan2: {
      Expr y = operand(signed_domain(choices_, 0.25, 64));
      out.expr = atan2(std::move(y), operand(signed_domain(choices_, 0.25, 64)));
      widen(rule, 0, 4097, "atan2: 4096 ULP");
      break;
    }
    case Imprecise::sqrt:
      out.expr = unary(Op::Sqrt, operand(positive));
      widen(rule, 0, 10, "sqrt: inherited from 1 / inverseSqrt(x)");
      break;
    case Imprecise::inverse_sqrt:
      out.expr = unary(Op::InverseSqrt, operand(positive));
      widen(rule, 0, 3, "inverseSqrt: 2 ULP");
      break;
    case Imprecise::exp:
    case Imprecise::exp2:
      out.expr = unary(target.imprecise == Imprecise::exp ? Op::Exp : Op::Exp2, operand(domain(-20, 20)));
      widen(rule, 0, 44, "exp, exp2: 3 + 2|x| ULP, |x| <= 20");
      break;
    case Imprecise::log:
    case Imprecise::log2:
      out.expr = unary(target.imprecise == Imprecise::log ? Op::Log : Op::Log2, operand(positive));
      widen(rule, std::ldexp(1.0, -21), 4, "log, log2: 2^-21 absolute in [0.5, 2], else 3 ULP");
      break;
    case Imprecise::sin:
    case Imprecise::cos:
      out.expr = unary(target.imprecise == Imprecise::sin ? Op::Sin : Op::Cos, operand(domain(-3.140625, 3.140625)));
      widen(rule, std::ldexp(1.0, -11), 1, "sin, cos: 2^-11 absolute in [-pi, pi]");
      break;
    case Imprecise::tan:
      out.expr = unary(Op::Tan, operand(domain(-1, 1)));
      widen(rule, 0.0024, 1, "tan: inherited from sin(x) / cos(x), |x| <= 1");
      break;
    case Imprecise::tanh:
      out.expr = unary(Op::Tanh, operand(domain(-4, 4)));
      widen(rule, 1e-5, 1, "tanh: 1e-5 absolute (worse than inherited on [-4, 4])");
      break;
    case Imprecise::inexact_arithmetic: {
      static const Op kOps[] = {Op::Add, Op::Sub, Op::Mul};
      Expr a = exact_expr(depth - 1).expr;
      Expr b = exact_expr(depth - 1).expr;
      out.expr = binary(kOps[choices_.below(3)], std::move(a), std::move(b));
      widen(rule, 0, 2, "add, sub, mul: rounded up or down (WGSL fixes no rounding mode)");
      break;
    }
    case Imprecise::inexact_fma: {
      F32Value a = exact_expr(depth - 1);
      F32Value b = exact_expr(depth - 1);
      Expr c = exact_expr(depth - 1).expr;
      const double product = a.exact->magnitude() * b.exact->magnitude();
      out.expr = fma(std::move(a.expr), std::move(b.expr), std::move(c));
      widen(rule, std::ldexp(product, -22), 2, "fma: inherited from x * y + z (two roundings)");
      break;
    }
    case Imprecise::int_to_f32:
      out.expr = cast(ScalarType::F32, int_expr(choices_.coin(50) ? ScalarType::I32 : ScalarType::U32, depth - 1));
      widen(rule, 0, 1, "u32/i32 to f32: either neighbour of a value f32 cannot hold");
      break;
  }
  return out;
}

}  // namespace vyre::differential::detail
