#include "support/conformance_cases.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>

#include "ir/scalar_ops.hpp"
#include "support/f32_compare.hpp"
#include "vyre/builder.hpp"

namespace vyre::test::conformance {

using namespace vyre::build;

namespace {

using vyre::test::flush_subnormal;
using vyre::test::is_nan_bits;
using vyre::test::same_f32;
using vyre::test::ulp_distance;


uint32_t fb(float f) { return std::bit_cast<uint32_t>(f); }
float bf(uint32_t b) { return std::bit_cast<float>(b); }
uint32_t ib(int32_t v) { return static_cast<uint32_t>(v); }

// ---- operand values -------------------------------------------------------------

const Tuple kU32 = {0u, 1u, 2u, 3u, 7u, 31u, 32u, 33u, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu, 12345678u};
const Tuple kI32 = {ib(0),  ib(1),        ib(-1),       ib(2),         ib(-2),       ib(7),        ib(-7),
                    ib(31), ib(32),       ib(33),       ib(INT32_MAX), ib(INT32_MIN), ib(INT32_MIN + 1), ib(-12345678)};
const Tuple kF32 = {fb(0.0f),   fb(-0.0f),     fb(1.0f),      fb(-1.0f),           fb(0.5f),
                    fb(-2.5f),  fb(3.0f),      fb(1e-3f),     fb(123.456f),        fb(1e30f),
                    fb(-1e30f), fb(3.4e38f),   fb(1.17549435e-38f), 0x00000001u /* smallest subnormal */,
                    0x7f800000u /* inf */,     0xff800000u /* -inf */, 0x7fc00000u /* nan */};
const Tuple kBool = {0u, 1u};

const Tuple& values_of(ScalarType t) {
  switch (t) {
    case ScalarType::U32: return kU32;
    case ScalarType::I32: return kI32;
    case ScalarType::F32: return kF32;
    default: return kBool;
  }
}

std::vector<Tuple> all_pairs(const Tuple& a, const Tuple& b) {
  std::vector<Tuple> out;
  for (uint32_t x : a)
    for (uint32_t y : b) out.push_back({x, y});
  return out;
}

std::vector<Tuple> singles(const Tuple& a) {
  std::vector<Tuple> out;
  for (uint32_t x : a) out.push_back({x});
  return out;
}

std::vector<Tuple> singles(std::initializer_list<float> a) {
  std::vector<Tuple> out;
  for (float x : a) out.push_back({fb(x)});
  return out;
}

// ---- the operation and its acceptable results ----------------------------------


// The reference's scalar semantics, applied to operands.
uint32_t evaluate_impl(const Case& c, const Tuple& in) {
  switch (op_info(c.op).cls) {
    case OpClass::Binary:
      if (c.op == Op::LAnd) return (in[0] && in[1]) ? 1 : 0;
      if (c.op == Op::LOr) return (in[0] || in[1]) ? 1 : 0;
      return scalar::apply_binary(c.op, c.operands[0], in[0], in[1]);
    case OpClass::Unary: return scalar::apply_unary(c.op, c.operands[0], in[0]);
    case OpClass::Ternary:
      if (c.op == Op::Select) return in[0] ? in[1] : in[2];
      return scalar::apply_ternary(c.op, c.operands[0], in[0], in[1], in[2]);
    case OpClass::Conversion:
      return c.op == Op::Bitcast ? in[0] : scalar::apply_cast(c.operands[0], static_cast<ScalarType>(c.imm), in[0]);
    default: break;
  }
  return 0;
}

// Results a GPU may give for an exactly rounded operation: the reference's,
// and the same with subnormal operands and results flushed to zero.
std::vector<uint32_t> exact_candidates(const Case& c, const Tuple& in, uint32_t ref) {
  std::vector<uint32_t> out{ref};
  Tuple flushed = in;
  for (size_t i = 0; i < in.size(); ++i)
    if (c.operands[i] == ScalarType::F32) flushed[i] = flush_subnormal(in[i]);
  out.push_back(evaluate_impl(c, flushed));
  if (c.result == ScalarType::F32) {
    out.push_back(flush_subnormal(out[0]));
    out.push_back(flush_subnormal(out[1]));
  }
  return out;
}

// WGSL lets implementations ignore the sign of a zero.
bool matches(const Case& c, uint32_t want, uint32_t got) {
  if (c.result != ScalarType::F32) return want == got;
  return same_f32(want, got) || (bf(want) == 0.0f && bf(got) == 0.0f);
}

Accept exact(const Case* c) {
  return [c](const Tuple& in, uint32_t ref, uint32_t gpu) {
    for (uint32_t want : exact_candidates(*c, in, ref))
      if (matches(*c, want, gpu)) return true;
    return false;
  };
}

Accept within_ulps(const Case* c, std::function<double(const Tuple&)> ulps) {
  return [c, ulps](const Tuple& in, uint32_t ref, uint32_t gpu) {
    for (uint32_t want : exact_candidates(*c, in, ref))
      if (matches(*c, want, gpu) || ulp_distance(want, gpu) <= static_cast<int64_t>(ulps(in))) return true;
    return false;
  };
}

Accept within_abs(const Case* c, std::function<double(const Tuple&, uint32_t ref)> tolerance) {
  return [c, tolerance](const Tuple& in, uint32_t ref, uint32_t gpu) {
    for (uint32_t want : exact_candidates(*c, in, ref)) {
      if (same_f32(want, gpu)) return true;
      if (std::fabs(double(bf(want)) - double(bf(gpu))) <= tolerance(in, ref)) return true;
    }
    return false;
  };
}

// WGSL leaves the result unspecified outside `domain`; inside, `inside` decides.
Accept only_where(std::function<bool(const Tuple&)> domain, Accept inside) {
  return [domain, inside](const Tuple& in, uint32_t ref, uint32_t gpu) { return !domain(in) || inside(in, ref, gpu); };
}

bool finite(uint32_t b) { return std::isfinite(bf(b)); }

// WGSL lets implementations assume that no NaN or infinity occurs: where an
// f32 operand, or the exact result, is one, the GPU's answer is unspecified
// (lavapipe folds 0 * x to 0 and x != NaN to false, for example).
Accept unless_nan_or_inf(const Case* c, Accept inside) {
  return [c, inside](const Tuple& in, uint32_t ref, uint32_t gpu) {
    for (size_t i = 0; i < in.size(); ++i)
      if (c->operands[i] == ScalarType::F32 && !finite(in[i])) return true;
    if (c->result == ScalarType::F32 && !finite(ref)) return true;
    return inside(in, ref, gpu);
  };
}

// min and max: with a NaN operand WGSL may return either operand; zeros of
// either sign compare equal.
Accept min_max(const Case* c) {
  Accept base = exact(c);
  return [c, base](const Tuple& in, uint32_t ref, uint32_t gpu) {
    if (base(in, ref, gpu)) return true;
    if (c->result != ScalarType::F32) return false;
    for (uint32_t x : in)
      if (is_nan_bits(x) && (is_nan_bits(gpu) || std::find(in.begin(), in.end(), gpu) != in.end())) return true;
    return bf(gpu) == 0.0f && bf(ref) == 0.0f;
  };
}

// ---- the cases --------------------------------------------------------------------

std::vector<std::unique_ptr<Case>> make_cases() {
  std::vector<std::unique_ptr<Case>> cases;
  auto add = [&](std::string name, Op op, std::vector<ScalarType> operands, ScalarType result, std::vector<Tuple> tuples,
                 std::function<Accept(const Case*)> rule, uint32_t imm = 0) {
    auto c = std::make_unique<Case>();
    c->name = std::move(name);
    c->op = op;
    c->imm = imm;
    c->operands = std::move(operands);
    c->result = result;
    c->tuples = std::move(tuples);
    c->accept = rule(c.get());
    const bool float_arithmetic = op_info(op).cls != OpClass::Conversion && op != Op::Select &&
                                  std::find(c->operands.begin(), c->operands.end(), ScalarType::F32) != c->operands.end();
    if (float_arithmetic) c->accept = unless_nan_or_inf(c.get(), c->accept);
    cases.push_back(std::move(c));
  };
  const auto U = ScalarType::U32, I = ScalarType::I32, F = ScalarType::F32, B = ScalarType::Bool;

  // Integer arithmetic, bitwise operators, comparisons: exact, every pair of edge values.
  for (ScalarType t : {U, I}) {
    const std::string tn(to_string(t));
    for (Op op : {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Rem, Op::Min, Op::Max, Op::And, Op::Or, Op::Xor})
      add(std::string(op_info(op).json) + "_" + tn, op, {t, t}, t, all_pairs(values_of(t), values_of(t)), exact);
    for (Op op : {Op::Shl, Op::Shr})
      add(std::string(op_info(op).json) + "_" + tn, op, {t, U}, t, all_pairs(values_of(t), kU32), exact);
    for (Op op : {Op::Eq, Op::Ne, Op::Lt, Op::Le, Op::Gt, Op::Ge})
      add(std::string(op_info(op).json) + "_" + tn, op, {t, t}, B, all_pairs(values_of(t), values_of(t)), exact);
    for (Op op : {Op::Abs, Op::BitNot, Op::Popcount, Op::Clz, Op::Ctz, Op::ReverseBits})
      add(std::string(op_info(op).json) + "_" + tn, op, {t}, t, singles(values_of(t)), exact);
    std::vector<Tuple> clamps;
    for (auto& p : all_pairs(values_of(t), values_of(t))) clamps.push_back({p[0], values_of(t)[3], p[1]});
    add("clamp_" + tn, Op::Clamp, {t, t, t}, t, clamps, exact);  // lo > hi included
  }
  add("neg_i32", Op::Neg, {I}, I, singles(kI32), exact);
  for (Op op : {Op::Eq, Op::Ne, Op::LAnd, Op::LOr}) add(std::string(op_info(op).json) + "_bool", op, {B, B}, B, all_pairs(kBool, kBool), exact);
  add("not_bool", Op::Not, {B}, B, singles(kBool), exact);

  // f32: exactly rounded operations, every pair of edge values.
  for (Op op : {Op::Add, Op::Sub, Op::Mul})
    add(std::string(op_info(op).json) + "_f32", op, {F, F}, F, all_pairs(kF32, kF32), exact);
  for (Op op : {Op::Min, Op::Max}) add(std::string(op_info(op).json) + "_f32", op, {F, F}, F, all_pairs(kF32, kF32), min_max);
  for (Op op : {Op::Eq, Op::Ne, Op::Lt, Op::Le, Op::Gt, Op::Ge})
    add(std::string(op_info(op).json) + "_f32", op, {F, F}, B, all_pairs(kF32, kF32), exact);
  for (Op op : {Op::Neg, Op::Abs, Op::Floor, Op::Ceil, Op::Round, Op::Trunc})
    add(std::string(op_info(op).json) + "_f32", op, {F}, F, singles(kF32), exact);
  add("round_f32_ties", Op::Round, {F}, F, singles({0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.49999976f}), exact);
  // fract is x - floor(x): exact where finite.
  add("fract_f32", Op::Fract, {F}, F, singles(kF32), [](const Case* c) {
    return only_where([](const Tuple& in) { return finite(in[0]); }, exact(c));
  });
  // Division: 2.5 ULP for divisors of magnitude 2^-126 to 2^126; unspecified elsewhere (x/0 included).
  add("div_f32", Op::Div, {F, F}, F, all_pairs(kF32, kF32), [](const Case* c) {
    return only_where(
        [](const Tuple& in) {
          const float y = std::fabs(bf(in[1]));
          return finite(in[0]) && y >= std::ldexp(1.0f, -126) && y <= std::ldexp(1.0f, 126);
        },
        within_ulps(c, [](const Tuple&) { return 3.0; }));
  });
  // Remainder: x - y * trunc(x / y), inheriting the division's error, or a
  // device's fmod; unspecified where the quotient is near an integer.
  add("rem_f32", Op::Rem, {F, F}, F, all_pairs(kF32, kF32), [](const Case* c) {
    Accept base = exact(c);
    return only_where(
        [](const Tuple& in) {
          const float x = bf(in[0]), y = bf(in[1]);
          if (!finite(in[0]) || !std::isnormal(y) || std::fabs(y) > std::ldexp(1.0f, 126)) return false;
          const float q = x / y;
          return std::isfinite(q) && std::fabs(q) < 1e6f && std::fabs(q - std::nearbyint(q)) > std::fabs(q) * 1e-6f;
        },
        [base](const Tuple& in, uint32_t ref, uint32_t gpu) {
          return base(in, ref, gpu) || same_f32(fb(std::fmod(bf(in[0]), bf(in[1]))), gpu);
        });
  });
  // fma may be fused or not.
  {
    std::vector<Tuple> t;
    for (float a : {1.5f, -2.0f, 1e-3f, 3e38f, 1.0f + 1.0f / 4096})
      for (float b : {2.0f, -0.5f, 1.0f - 1.0f / 4096})
        for (float cc : {0.25f, -3.0f, -1.0f}) t.push_back({fb(a), fb(b), fb(cc)});
    add("fma_f32", Op::Fma, {F, F, F}, F, t, [](const Case* c) {
      Accept fused = exact(c);
      return [fused](const Tuple& in, uint32_t ref, uint32_t gpu) {
        const float unfused = bf(in[0]) * bf(in[1]) + bf(in[2]);
        return fused(in, ref, gpu) || same_f32(fb(unfused), gpu) || same_f32(flush_subnormal(fb(unfused)), gpu);
      };
    });
  }
  {
    std::vector<Tuple> t;
    for (auto& p : all_pairs(kF32, kF32)) t.push_back({p[0], fb(-1.0f), p[1]});
    add("clamp_f32", Op::Clamp, {F, F, F}, F, t, min_max);
  }
  for (ScalarType t : {U, I, F, B}) {
    std::vector<Tuple> s;
    for (uint32_t cond : {0u, 1u})
      for (auto& p : all_pairs(values_of(t), values_of(t))) s.push_back({cond, p[0], p[1]});
    add("select_" + std::string(to_string(t)), Op::Select, {B, t, t}, t, s, exact);
  }

  // Transcendentals, within WGSL's error bounds where WGSL gives one.
  const double kTwoPow11 = std::ldexp(1.0, -11), kTwoPow21 = std::ldexp(1.0, -21);
  auto in_pi = [](const Tuple& in) { return std::fabs(bf(in[0])) <= std::numbers::pi_v<float>; };
  add("sin_f32", Op::Sin, {F}, F, singles({0.0f, 0.5f, -1.0f, 1.5707964f, 3.0f, -3.1f, 10.0f, 1e30f}), [&](const Case* c) {
    return only_where(in_pi, within_abs(c, [=](const Tuple&, uint32_t) { return kTwoPow11; }));
  });
  add("cos_f32", Op::Cos, {F}, F, singles({0.0f, 0.5f, -1.0f, 1.5707964f, 3.0f, -3.1f, 10.0f, 1e30f}), [&](const Case* c) {
    return only_where(in_pi, within_abs(c, [=](const Tuple&, uint32_t) { return kTwoPow11; }));
  });
  // tan inherits sin(x) / cos(x): its error bound follows from theirs.
  add("tan_f32", Op::Tan, {F}, F, singles({0.0f, 0.5f, -1.0f, 1.2f, -1.2f, 1.5707964f}), [&](const Case* c) {
    return only_where([](const Tuple& in) { return std::fabs(bf(in[0])) <= 1.2f; },
                      within_abs(c, [=](const Tuple& in, uint32_t) {
                        const double x = bf(in[0]), s = std::fabs(std::sin(x)), co = std::cos(x);
                        return kTwoPow11 * (s + std::fabs(co)) / (co * co) * 1.5 + 1e-6;
                      }));
  });
  for (Op op : {Op::Exp, Op::Exp2}) {
    add(std::string(op_info(op).json) + "_f32", op, {F}, F,
        singles({0.0f, 0.5f, -1.0f, 1.0f, 10.0f, -10.0f, 20.0f, 100.0f, -100.0f, 0.001f}), [](const Case* c) {
          return only_where(
              [](const Tuple& in) { return std::fabs(bf(in[0])) <= 80.0f; },
              within_ulps(c, [](const Tuple& in) { return 3.0 + 2.0 * std::fabs(bf(in[0])); }));
        });
  }
  for (Op op : {Op::Log, Op::Log2}) {
    add(std::string(op_info(op).json) + "_f32", op, {F}, F,
        singles({1e-3f, 0.5f, 0.75f, 1.0f, 1.5f, 2.0f, 10.0f, 1e10f, 3e38f, 0.0f, -1.0f}), [&](const Case* c) {
          Accept far = within_ulps(c, [](const Tuple&) { return 3.0; });
          Accept near = within_abs(c, [=](const Tuple&, uint32_t) { return kTwoPow21; });
          return only_where([](const Tuple& in) { return std::isnormal(bf(in[0])) && bf(in[0]) > 0; },
                            [far, near](const Tuple& in, uint32_t ref, uint32_t gpu) {
                              const float x = bf(in[0]);
                              return (x >= 0.5f && x <= 2.0f) ? near(in, ref, gpu) : far(in, ref, gpu);
                            });
        });
  }
  add("inverse_sqrt_f32", Op::InverseSqrt, {F}, F, singles({1e-3f, 0.25f, 1.0f, 2.0f, 1e10f, 3e38f, 0.0f, -1.0f}),
      [](const Case* c) {
        return only_where([](const Tuple& in) { return std::isnormal(bf(in[0])) && bf(in[0]) > 0; },
                          within_ulps(c, [](const Tuple&) { return 2.0; }));
      });
  // sqrt inherits 1 / inverseSqrt(x): 2 ULP, then a division's 2.5.
  add("sqrt_f32", Op::Sqrt, {F}, F, singles({1e-3f, 0.25f, 1.0f, 2.0f, 1e10f, 3e38f, -1.0f}), [](const Case* c) {
    return only_where([](const Tuple& in) { return std::isnormal(bf(in[0])) && bf(in[0]) > 0; },
                      within_ulps(c, [](const Tuple&) { return 5.0; }));
  });
  // tanh inherits sinh(x) / cosh(x), built from exp: a small absolute error near 0.
  add("tanh_f32", Op::Tanh, {F}, F, singles({0.0f, 1e-3f, 0.5f, -1.0f, 3.0f, -10.0f}), [](const Case* c) {
    return within_abs(c, [](const Tuple&, uint32_t ref) { return 1e-6 + 1e-5 * std::fabs(double(bf(ref))); });
  });
  // pow inherits exp2(y * log2(x)).
  add("pow_f32", Op::Pow, {F, F}, F, all_pairs({fb(0.5f), fb(2.0f), fb(10.0f), fb(-2.0f)}, {fb(-2.0f), fb(0.5f), fb(3.0f)}),
      [](const Case* c) {
        return only_where([](const Tuple& in) { return bf(in[0]) > 0; },
                          within_abs(c, [](const Tuple&, uint32_t ref) { return std::ldexp(std::fabs(double(bf(ref))), -14); }));
      });
  add("atan2_f32", Op::Atan2, {F, F}, F, all_pairs({fb(-1.0f), fb(0.5f), fb(2.0f), fb(0.0f)}, {fb(-1.0f), fb(0.5f), fb(2.0f)}),
      [](const Case* c) { return within_ulps(c, [](const Tuple&) { return 4096.0; }); });

  // Conversions: every pair of types.
  for (ScalarType from : {U, I, F, B})
    for (ScalarType to : {U, I, F, B}) {
      const std::string name = "cast_" + std::string(to_string(from)) + "_to_" + std::string(to_string(to));
      Tuple values = values_of(from);
      if (from == F)
        for (float f : {0.5f, -0.5f, 0.999f, -0.999f, 4294967040.0f, 4294967296.0f, 2147483520.0f, 2147483648.0f,
                        -2147483648.0f, -2147483904.0f, 1e20f, -1e20f})
          values.push_back(fb(f));
      const bool rounding = (from == U || from == I) && to == F;  // the GPU may take the adjacent f32
      add(name, Op::Cast, {from}, to, singles(values),
          rounding ? std::function<Accept(const Case*)>([](const Case* c) { return within_ulps(c, [](const Tuple&) { return 1.0; }); })
                   : std::function<Accept(const Case*)>(exact),
          static_cast<uint32_t>(to));
    }
  for (ScalarType from : {U, I, F})
    for (ScalarType to : {U, I, F}) {
      const std::string name = "bitcast_" + std::string(to_string(from)) + "_to_" + std::string(to_string(to));
      add(name, Op::Bitcast, {from}, to, singles(values_of(from)), [](const Case* c) {
        Accept base = exact(c);
        // A NaN may lose its payload on the way through an f32 register.
        return [base](const Tuple& in, uint32_t ref, uint32_t gpu) { return base(in, ref, gpu) || (is_nan_bits(in[0]) && is_nan_bits(gpu)); };
      }, static_cast<uint32_t>(to));
    }
  return cases;
}

// ---- the programs ---------------------------------------------------------------------

Expr operation(const Case& c, std::vector<Expr> args) {
  Expr e;
  e.op = c.op;
  e.imm = c.imm;
  e.args = std::move(args);
  return e;
}

std::string buffer_of(size_t i) { return "in" + std::to_string(i); }

// out[i] = op(in0[i], in1[i], ...) with the operands loaded from buffers.
Program loaded_program_impl(const Case& c) {
  ProgramBuilder b("conformance_" + c.name + "_loaded");
  b.workgroup_size(64);
  for (size_t i = 0; i < c.operands.size(); ++i) {
    // bool has no buffer type: carry it as u32 and convert.
    b.input(buffer_of(i), static_cast<uint32_t>(i), c.operands[i] == ScalarType::Bool ? ScalarType::U32 : c.operands[i]);
  }
  const ScalarType out_type = c.result == ScalarType::Bool ? ScalarType::U32 : c.result;
  b.output("out", 10, out_type);
  std::vector<Expr> args;
  for (size_t i = 0; i < c.operands.size(); ++i) {
    Expr v = load(buffer_of(i), var("i"));
    args.push_back(c.operands[i] == ScalarType::Bool ? ne(std::move(v), u32(0)) : std::move(v));
  }
  Expr value = operation(c, std::move(args));
  if (c.result == ScalarType::Bool) value = select(std::move(value), u32(1), u32(0));
  b.body({let("i", gid()), if_(lt(var("i"), len("out")), {store("out", var("i"), std::move(value))})});
  return b.build();
}

Expr literal(ScalarType t, uint32_t bits) {
  switch (t) {
    case ScalarType::U32: return u32(bits);
    case ScalarType::I32: return i32(static_cast<int32_t>(bits));
    case ScalarType::F32: return f32_bits(bits);
    default: return boolean(bits != 0);
  }
}

// out[k] = op(literal, literal, ...) for every tuple k, in one invocation.
Program literal_program_impl(const Case& c) {
  ProgramBuilder b("conformance_" + c.name + "_literal");
  const ScalarType out_type = c.result == ScalarType::Bool ? ScalarType::U32 : c.result;
  b.output("out", 0, out_type);
  std::vector<Stmt> body;
  for (size_t k = 0; k < c.tuples.size(); ++k) {
    std::vector<Expr> args;
    for (size_t i = 0; i < c.operands.size(); ++i) args.push_back(literal(c.operands[i], c.tuples[k][i]));
    Expr value = operation(c, std::move(args));
    if (c.result == ScalarType::Bool) value = select(std::move(value), u32(1), u32(0));
    body.push_back(store("out", u32(static_cast<uint32_t>(k)), std::move(value)));
  }
  b.body(std::move(body));
  return b.build();
}

Inputs loaded_inputs_impl(const Case& c) {
  Inputs in;
  for (size_t i = 0; i < c.operands.size(); ++i) {
    std::vector<uint32_t> column;
    for (const auto& t : c.tuples) column.push_back(t[i]);
    in.set<uint32_t>(buffer_of(i), column);
  }
  in.size("out", static_cast<uint32_t>(c.tuples.size()));
  return in;
}

std::string describe_impl(const Case& c, const Tuple& in) {
  std::string s = c.name + "(";
  for (size_t i = 0; i < in.size(); ++i) {
    char buf[48];
    if (c.operands[i] == ScalarType::F32)
      std::snprintf(buf, sizeof buf, "%s%.9g [0x%08x]", i ? ", " : "", bf(in[i]), in[i]);
    else
      std::snprintf(buf, sizeof buf, "%s0x%08x", i ? ", " : "", in[i]);
    s += buf;
  }
  return s + ")";
}

}  // namespace

const std::vector<std::unique_ptr<Case>>& all_cases() {
  static const auto cases = make_cases();
  return cases;
}
uint32_t evaluate(const Case& c, const Tuple& in) { return evaluate_impl(c, in); }
Program loaded_program(const Case& c) { return loaded_program_impl(c); }
Inputs loaded_inputs(const Case& c) { return loaded_inputs_impl(c); }
Program literal_program(const Case& c) { return literal_program_impl(c); }
Inputs literal_inputs(const Case& c) {
  Inputs in;
  in.size("out", static_cast<uint32_t>(c.tuples.size()));
  return in;
}
std::string describe(const Case& c, const Tuple& in) { return describe_impl(c, in); }


// ---- whole constructs -----------------------------------------------------------------

namespace {

Scenario invocation_builtins() {
  // Each invocation writes its ids at its own slot: 13 values each.
  std::vector<Stmt> body = {
      let("flat", add(add(gid(Axis::X), mul(gid(Axis::Y), mul(nwg(Axis::X), u32(4)))),
                      mul(gid(Axis::Z), mul(mul(nwg(Axis::X), u32(4)), mul(nwg(Axis::Y), u32(2)))))),
      let("base", mul(var("flat"), u32(13)))};
  Expr values[] = {gid(Axis::X), gid(Axis::Y), gid(Axis::Z), lid(Axis::X), lid(Axis::Y), lid(Axis::Z), lid_flat(),
                   wid(Axis::X), wid(Axis::Y), wid(Axis::Z), nwg(Axis::X), nwg(Axis::Y), nwg(Axis::Z)};
  for (uint32_t k = 0; k < 13; ++k) body.push_back(store("out", add(var("base"), u32(k)), values[k]));
  const Program p = ProgramBuilder("builtins").workgroup_size(4, 2, 2).output("out", 0, ScalarType::U32).body(body).build();
  Inputs in;
  in.size("out", 3 * 4 * 2 * 2 * 2 * 2 * 13);
  return {"builtins", p, in, {}, Dim3{3, 2, 2}};
}

Scenario workgroup_memory_zeroed() {
  // Read before any write, then dirty it: the next workgroup must see zeros again.
  const Program p = ProgramBuilder("workgroup_zero")
                        .workgroup_size(32)
                        .output("out", 0, ScalarType::U32)
                        .workgroup_buffer("w", ScalarType::U32, 48)
                        .workgroup_buffer("wi", ScalarType::I32, 5)
                        .body({store("out", gid(), add(load("w", lid()), bitcast(ScalarType::U32, load("wi", rem(lid(), u32(5)))))),
                               barrier(), store("w", lid(), u32(0xdead)), store("wi", rem(lid(), u32(5)), i32(-1))})
                        .build();
  Inputs in;
  in.size("out", 32 * 8);
  return {"workgroup_zero", p, in, {}, Dim3{8, 1, 1}};
}

Scenario atomics_of_every_kind() {
  // Shared counters take commutative operations from every invocation;
  // exchange and compare_exchange act on each invocation's own element.
  const uint32_t n = 256;
  std::vector<Stmt> body = {
      let("i", gid()),
      eval(atomic(AtomicOp::Add, "shared", u32(0), var("i"))),
      eval(atomic(AtomicOp::Sub, "shared", u32(1), var("i"))),
      eval(atomic(AtomicOp::Min, "shared", u32(2), add(var("i"), u32(5)))),
      eval(atomic(AtomicOp::Max, "shared", u32(3), var("i"))),
      eval(atomic(AtomicOp::And, "shared", u32(4), bit_not(shl(u32(1), rem(var("i"), u32(32)))))),
      eval(atomic(AtomicOp::Or, "shared", u32(5), shl(u32(1), rem(var("i"), u32(32))))),
      eval(atomic(AtomicOp::Xor, "shared", u32(6), var("i"))),
      eval(atomic(AtomicOp::Min, "signed", u32(0), sub(i32(100), cast(ScalarType::I32, var("i"))))),
      eval(atomic(AtomicOp::Max, "signed", u32(1), sub(cast(ScalarType::I32, var("i")), i32(1000)))),
      eval(atomic(AtomicOp::Add, "signed", u32(2), i32(-3))),
      // Own elements: old values are deterministic.
      store("old", mul(var("i"), u32(4)), atomic(AtomicOp::Exchange, "own", var("i"), mul(var("i"), u32(3)))),
      store("old", add(mul(var("i"), u32(4)), u32(1)), atomic_compare_exchange("own", var("i"), mul(var("i"), u32(3)), u32(7))),
      store("old", add(mul(var("i"), u32(4)), u32(2)), atomic_compare_exchange("own", var("i"), u32(12345), u32(9))),
      store("old", add(mul(var("i"), u32(4)), u32(3)), atomic_load("own", var("i"))),
      // Workgroup atomics, merged after a barrier.
      eval(atomic(AtomicOp::Add, "local", rem(var("i"), u32(4)), u32(1))),
      barrier(),
      if_(lt(lid(), u32(4)), {eval(atomic(AtomicOp::Add, "shared", add(u32(8), lid()), atomic_load("local", lid())))}),
  };
  const Program p = ProgramBuilder("atomics")
                        .workgroup_size(64)
                        .output("shared", 0, ScalarType::U32, 12)
                        .output("signed", 1, ScalarType::I32, 3)
                        .output("own", 2, ScalarType::U32)
                        .output("old", 3, ScalarType::U32)
                        .workgroup_buffer("local", ScalarType::U32, 4)
                        .body(body)
                        .build();
  Inputs in;
  std::vector<uint32_t> shared(12, 0);
  shared[2] = 0xffffffffu;
  shared[4] = 0xffffffffu;
  in.set<uint32_t>("shared", shared).set<int32_t>("signed", {0, 0, 0}).size("own", n).size("old", n * 4);
  return {"atomics", p, in, {}, Dim3{n / 64, 1, 1}};
}

Scenario control_flow_of_every_kind() {
  // Integer-only, so results compare exactly: loops with continue and break,
  // a while, if/else, an early return, reads of every buffer kind.
  const Program p =
      ProgramBuilder("control_flow")
          .workgroup_size(16)
          .input("x", 0, ScalarType::I32)
          .uniform("k", 1, ScalarType::U32, 6)
          .output("out", 2, ScalarType::I32)
          .storage("scratch", 3, ScalarType::U32, 4)
          .body({let("i", gid()),
                 if_(ge(var("i"), len("out")), {return_()}),
                 let("acc", load("x", var("i"))),
                 loop("j", u32(0), load("k", rem(var("i"), u32(6))),
                      {if_(eq(rem(var("j"), u32(3)), u32(1)), {continue_()}),
                       assign("acc", add(var("acc"), cast(ScalarType::I32, var("j")))),
                       if_(gt(var("j"), u32(7)), {break_()})}),
                 let("n", cast(ScalarType::U32, bit_and(var("acc"), i32(63)))),
                 let("steps", i32(0)),
                 while_(gt(var("n"), u32(1)),
                        {if_(eq(rem(var("n"), u32(2)), u32(0)), {assign("n", shr(var("n"), u32(1)))},
                             {assign("n", add(mul(var("n"), u32(3)), u32(1)))}),
                         assign("steps", add(var("steps"), i32(1)))}),
                 loop("m", i32(-3), i32(3), {if_(eq(var("m"), i32(1)), {break_()}), assign("steps", sub(var("steps"), var("m")))}),
                 store("out", var("i"), add(mul(var("acc"), i32(1000)), var("steps"))),
                 if_(lt(var("i"), len("scratch")), {store("scratch", var("i"), len("x"))})})
          .build();
  Inputs in;
  std::vector<int32_t> x;
  for (int v = -40; v < 60; ++v) x.push_back(v * 7);
  in.set<int32_t>("x", x).set<uint32_t>("k", {0, 1, 5, 9, 12, 3}).size("out", 100);
  return {"control_flow", p, in, {}, std::nullopt};  // the default grid
}


// Format version 4's packed elements, in two programs (WebGPU promises 8
// storage buffers a stage). 61 elements: the last word of every byte buffer
// is partly padding, and a workgroup of 6 splits the word of elements 4..7
// between two workgroups.
std::vector<uint8_t> narrow_a(size_t n) {
  std::vector<uint8_t> a(n);
  for (size_t k = 0; k < n; ++k) a[k] = static_cast<uint8_t>(k * 37 + 200);
  return a;
}

Scenario narrow_loads() {
  // Loads zero- or sign-extend.
  const size_t n = 61;
  const Program p =
      ProgramBuilder("narrow_loads")
          .workgroup_size(6)
          .input("a", 0, ScalarType::U8)
          .input("b", 1, ScalarType::I8)
          .input("c", 2, ScalarType::U16)
          .input("d", 3, ScalarType::I16)
          .input("m", 4, ScalarType::Bool)
          .output("sum", 5, ScalarType::I32)
          .body({let("i", gid()),
                 if_(ge(var("i"), len("sum")), {return_()}),
                 store("sum", var("i"),
                       add(add(add(cast(ScalarType::I32, load("a", var("i"))), load("b", var("i"))),
                               add(cast(ScalarType::I32, load("c", var("i"))), load("d", var("i")))),
                           select(load("m", var("i")), i32(1000), i32(0))))})
          .build();
  std::vector<uint8_t> m(n);
  std::vector<int8_t> b(n);
  std::vector<uint16_t> c(n);
  std::vector<int16_t> d(n);
  for (size_t k = 0; k < n; ++k) {
    b[k] = static_cast<int8_t>(static_cast<int>(k * 11) - 128);
    c[k] = static_cast<uint16_t>(k * 4099 + 65000);
    d[k] = static_cast<int16_t>(static_cast<int>(k * 1301) - 32768);
    m[k] = k % 3 == 0;
  }
  Inputs in;
  in.set<uint8_t>("a", narrow_a(n)).set<int8_t>("b", b).set<uint16_t>("c", c).set<int16_t>("d", d);
  in.bytes("m", m).size("sum", n);  // one byte per bool, 0 or 1
  return {"narrow_loads", p, in, {}, Dim3{(n + 5) / 6, 1, 1}};
}

Scenario narrow_stores() {
  // Stores keep the low bits, and neighbouring invocations (of one
  // workgroup and of two) store neighbouring elements of one word.
  const size_t n = 61;
  const Program p =
      ProgramBuilder("narrow_stores")
          .workgroup_size(6)
          .input("a", 0, ScalarType::U8)
          .output("a3", 1, ScalarType::U8)
          .output("bneg", 2, ScalarType::I8)
          .output("cmix", 3, ScalarType::U16)
          .output("dtriple", 4, ScalarType::I16)
          .output("flip", 5, ScalarType::Bool)
          .output("reversed", 6, ScalarType::U8)
          .body({let("i", gid()),
                 if_(ge(var("i"), len("a3")), {return_()}),
                 let("x", load("a", var("i"))),
                 let("y", sub(cast(ScalarType::I32, var("x")), i32(128))),
                 store("a3", var("i"), add(mul(var("x"), u32(3)), u32(7))),
                 store("bneg", var("i"), mul(var("y"), i32(-3))),
                 store("cmix", var("i"), add(mul(var("x"), u32(300)), var("i"))),
                 store("dtriple", var("i"), mul(var("y"), i32(300))),
                 store("flip", var("i"), ne(eq(rem(var("i"), u32(3)), u32(0)), gt(var("x"), u32(128)))),
                 store("reversed", sub(sub(len("a3"), u32(1)), var("i")), var("x"))})
          .build();
  Inputs in;
  in.set<uint8_t>("a", narrow_a(n));
  for (const char* o : {"a3", "bneg", "cmix", "dtriple", "flip", "reversed"}) in.size(o, n);
  return {"narrow_stores", p, in, {}, Dim3{(n + 5) / 6, 1, 1}};
}

// Format version 4's loop steps: up by 3 with continue and break, down by
// -2, a bound the body moves, and loops whose next step would pass the end
// of u32 or i32 (they end there, never wrap). Six results per invocation.
Scenario stepped_loops() {
  const uint32_t n = 40;
  auto at = [](uint32_t k) { return add(mul(var("i"), u32(6)), u32(k)); };
  const Program p =
      ProgramBuilder("stepped_loops")
          .workgroup_size(8)
          .output("out", 0, ScalarType::U32, 6 * n)
          .body({let("i", gid()),
                 if_(ge(var("i"), u32(n)), {return_()}),
                 let("up", u32(0)),
                 loop("j", var("i"), add(mul(var("i"), u32(3)), u32(10)), u32(3),
                      {if_(eq(rem(var("j"), u32(4)), u32(1)), {continue_()}),
                       if_(gt(var("j"), u32(50)), {break_()}),
                       assign("up", add(var("up"), var("j")))}),
                 store("out", at(0), var("up")),
                 let("down", i32(0)),
                 loop("m", cast(ScalarType::I32, var("i")), i32(-20), i32(-2),
                      {assign("down", add(mul(var("down"), i32(3)), var("m")))}),
                 store("out", at(1), bitcast(ScalarType::U32, var("down"))),
                 let("lim", u32(30)),
                 let("moved", u32(0)),
                 loop("k", rem(var("i"), u32(5)), var("lim"), u32(2),
                      {assign("lim", sub(var("lim"), u32(1))), assign("moved", add(var("moved"), u32(1)))}),
                 store("out", at(2), var("moved")),
                 let("t", u32(0)),
                 loop("a", add(u32(0xfffffff0u), rem(var("i"), u32(8))), u32(0xffffffffu), u32(7),
                      {assign("t", add(var("t"), u32(1)))}),
                 loop("b", add(u32(1), rem(var("i"), u32(3))), u32(0xffffffffu), u32(0x80000000u),
                      {assign("t", add(var("t"), u32(100)))}),
                 store("out", at(3), var("t")),
                 let("s", u32(0)),
                 loop("c", add(i32(INT32_MIN), cast(ScalarType::I32, rem(var("i"), u32(8)))), i32(INT32_MIN), i32(-4),
                      {assign("s", add(var("s"), u32(1)))}),
                 loop("d", sub(i32(INT32_MAX), cast(ScalarType::I32, rem(var("i"), u32(12)))), i32(INT32_MAX), i32(5),
                      {assign("s", add(var("s"), u32(100)))}),
                 // Literal bounds counting down: the passes must not take it for an empty loop.
                 loop("g", i32(6), i32(-1), i32(-2), {assign("s", add(var("s"), u32(10000)))}),
                 store("out", at(4), var("s")),
                 let("e", u32(0)),
                 loop("f", i32(5), cast(ScalarType::I32, rem(var("i"), u32(9))), i32(-3),
                      {assign("e", add(mul(var("e"), u32(10)), bitcast(ScalarType::U32, var("f"))))}),
                 store("out", at(5), var("e"))})
          .build();
  return {"stepped_loops", p, Inputs{}, {}, Dim3{n / 8, 1, 1}};
}

// Format version 4's private arrays, as kernels use them: a register tile
// (four dot products kept in an f32 array), a sliding window, a sort
// network on an i32 array, an array declared in a loop's body (zeroed each
// trip), and indices out of range, u32 and negative i32 (the last element).
Scenario private_arrays() {
  const uint32_t n = 48, depth = 8;
  auto row = [] { return mul(var("i"), u32(4)); };  // the invocation's four elements of tile and sorted
  std::vector<Stmt> body{
      let("i", gid()),
      if_(ge(var("i"), u32(n)), {return_()}),
      // out_tile[i*4 + c] = sum_k a[i*depth + k] * b[k*4 + c]
      array("acc", ScalarType::F32, 4),
      loop("k", u32(0), u32(depth),
           {let("ak", load("a", add(mul(var("i"), u32(depth)), var("k")))),
            loop("c", u32(0), u32(4),
                 {store("acc", var("c"),
                        fma(var("ak"), load("b", add(mul(var("k"), u32(4)), var("c"))), load("acc", var("c"))))})}),
      loop("c", u32(0), u32(4), {store("tile", add(row(), var("c")), load("acc", var("c")))}),
      // out_window[i] = a[i] + 2 a[i+1] + 3 a[i+2] (a window of three kept in an array)
      array("w", ScalarType::F32, 3),
      loop("k", u32(0), u32(3), {store("w", var("k"), load("a", add(var("i"), var("k"))))}),
      store("window", var("i"),
            add(add(load("w", u32(0)), mul(f32(2), load("w", u32(1)))), mul(f32(3), load("w", u32(2))))),
      // sorted[i*4 ..] = x[i*4 ..] ascending (a compare-exchange network on a private array)
      array("v", ScalarType::I32, 4),
      loop("k", u32(0), u32(4), {store("v", var("k"), load("x", add(row(), var("k"))))}),
      loop("sweep", u32(0), u32(3),
           {loop("k", u32(0), u32(3),
                 {let("lo", load("v", var("k"))), let("hi", load("v", add(var("k"), u32(1)))),
                  if_(gt(var("lo"), var("hi")),
                      {store("v", var("k"), var("hi")), store("v", add(var("k"), u32(1)), var("lo"))})})}),
      loop("k", u32(0), u32(4), {store("sorted", add(row(), var("k")), load("v", var("k")))}),
      // A declaration in a loop's body is a new zeroed array each trip: 1 + 2 + 3 = 6 (10 if kept).
      let("trips", u32(0)),
      loop("r", u32(0), u32(3),
           {array("z", ScalarType::U32, 3), store("z", var("r"), add(load("z", var("r")), add(var("r"), u32(1)))),
            assign("trips", add(var("trips"), add(add(load("z", u32(0)), load("z", u32(1))), load("z", u32(2)))))}),
      store("misc", mul(var("i"), u32(3)), var("trips")),
      // Out of range: the last element, for a u32 index past the end and a negative i32 one.
      array("c4", ScalarType::U32, 4),
      store("c4", rem(var("i"), u32(7)), add(var("i"), u32(10))),
      store("misc", add(mul(var("i"), u32(3)), u32(1)),
            add(mul(load("c4", u32(3)), u32(1000)), load("c4", rem(var("i"), u32(4))))),
      store("c4", sub(cast(ScalarType::I32, rem(var("i"), u32(2))), i32(1)), u32(77)),
      store("misc", add(mul(var("i"), u32(3)), u32(2)), load("c4", sub(i32(0), cast(ScalarType::I32, rem(var("i"), u32(3))))))};
  const Program p = ProgramBuilder("private_arrays")
                        .workgroup_size(16)
                        .input("a", 0, ScalarType::F32)
                        .input("b", 1, ScalarType::F32)
                        .input("x", 2, ScalarType::I32)
                        .output("tile", 3, ScalarType::F32, 4 * n)
                        .output("window", 4, ScalarType::F32, n)
                        .output("sorted", 5, ScalarType::I32, 4 * n)
                        .output("misc", 6, ScalarType::U32, 3 * n)
                        .body(std::move(body))
                        .build();
  std::vector<float> a(n * depth + 2), b(depth * 4);
  for (size_t k = 0; k < a.size(); ++k) a[k] = static_cast<float>(static_cast<int>(k * 7 % 11) - 5);
  for (size_t k = 0; k < b.size(); ++k) b[k] = static_cast<float>(static_cast<int>(k * 5 % 9) - 4);
  std::vector<int32_t> x(4 * n);
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<int32_t>((k * 2654435761u) % 2001) - 1000;
  Inputs in;
  in.set<float>("a", a).set<float>("b", b).set<int32_t>("x", x);
  return {"private_arrays", p, in, {}, Dim3{n / 16, 1, 1}};
}

}  // namespace

std::vector<Scenario> construct_scenarios() {
  return {invocation_builtins(), workgroup_memory_zeroed(), atomics_of_every_kind(), control_flow_of_every_kind(),
          narrow_loads(), narrow_stores(), stepped_loops(), private_arrays()};
}

}  // namespace vyre::test::conformance
