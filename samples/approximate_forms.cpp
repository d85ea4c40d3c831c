#include "samples/approximate_forms.hpp"

#include <bit>
#include <cmath>
#include <limits>

#include "vyre/builder.hpp"

namespace vyre::samples {
namespace {

using namespace vyre::build;

constexpr float kMinNormal = std::numeric_limits<float>::min();

// Normal floats of [lo, hi] with the same sign, about n of them, evenly
// spaced in their bit patterns.
void walk(double lo, double hi, size_t n, std::vector<float>& out) {
  const bool negative = hi <= 0;
  float a = static_cast<float>(negative ? -hi : lo);
  float b = static_cast<float>(negative ? -lo : hi);
  a = std::max(a, kMinNormal);
  if (a > b || n == 0) return;
  const uint32_t first = std::bit_cast<uint32_t>(a);
  const uint32_t last = std::bit_cast<uint32_t>(b);
  const uint64_t span = uint64_t{last} - first;
  const uint64_t step = std::max<uint64_t>(1, span / n);
  for (uint64_t bits = first; bits <= last; bits += step) {
    const float v = std::bit_cast<float>(static_cast<uint32_t>(bits));
    out.push_back(negative ? -v : v);
  }
}

// An interval that may contain zero: each sign walked on its own, in
// proportion to the binades each side covers.
std::vector<float> interval_sample(const lowering::ValueRange& r, size_t n) {
  std::vector<float> out;
  if (r.lo < 0 && r.hi > 0) {
    walk(r.lo, -static_cast<double>(kMinNormal), n / 2, out);
    walk(kMinNormal, r.hi, n - n / 2, out);
  } else {
    walk(r.lo, r.hi, n, out);
  }
  return out;
}

}  // namespace

FormSample form_sample(const lowering::ApproximateForm& form, size_t n) {
  FormSample s;
  if (form.op != Op::Pow) {
    const bool two = form.first_alt.lo < form.first_alt.hi;
    s.x = interval_sample(form.first, two ? n / 2 : n);
    if (two) {
      const std::vector<float> more = interval_sample(form.first_alt, n - n / 2);
      s.x.insert(s.x.end(), more.begin(), more.end());
    }
    return s;
  }
  // pow: a grid of bases by exponents, the exponents evenly spaced.
  const size_t side = std::max<size_t>(2, static_cast<size_t>(std::sqrt(static_cast<double>(n))));
  const std::vector<float> bases = interval_sample(form.first, side);
  for (float x : bases)
    for (size_t j = 0; j < side; ++j) {
      const double t = static_cast<double>(j) / static_cast<double>(side - 1);
      s.x.push_back(x);
      s.y.push_back(static_cast<float>(form.second.lo + t * (form.second.hi - form.second.lo)));
    }
  return s;
}

double exact_value(Op op, double x, double y) {
  switch (op) {
    case Op::Exp: return std::exp(x);
    case Op::Exp2: return std::exp2(x);
    case Op::Log: return std::log(x);
    case Op::Log2: return std::log2(x);
    case Op::Sin: return std::sin(x);
    case Op::Cos: return std::cos(x);
    case Op::Tanh: return std::tanh(x);
    case Op::InverseSqrt: return 1.0 / std::sqrt(x);
    case Op::Pow: return std::pow(x, y);
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

double ulp_error(float got, double exact) {
  if (!std::isfinite(got)) return std::isfinite(exact) ? std::numeric_limits<double>::infinity() : 0.0;
  const double magnitude = std::max(std::fabs(exact), static_cast<double>(kMinNormal));
  int exponent = 0;
  (void)std::frexp(magnitude, &exponent);  // magnitude in [2^(exponent-1), 2^exponent)
  const double spacing = std::ldexp(1.0, exponent - 1 - 23);
  return std::fabs(static_cast<double>(got) - exact) / spacing;
}

double max_ulp_error(Op op, const FormSample& sample, const std::vector<float>& results) {
  double worst = 0;
  for (size_t i = 0; i < sample.x.size() && i < results.size(); ++i) {
    const double y = sample.y.empty() ? 0.0 : sample.y[i];
    worst = std::max(worst, ulp_error(results[i], exact_value(op, sample.x[i], y)));
  }
  return worst;
}

CheckedProgram operator_program(Op op) {
  ProgramBuilder b(std::string("operator_") + std::string(op_info(op).json));
  b.workgroup_size(64).input("x", 0, ScalarType::F32);
  if (op == Op::Pow) b.input("y", 1, ScalarType::F32);
  b.output("out", 2, ScalarType::F32);
  Expr value = op == Op::Pow ? binary(op, load("x", var("i")), load("y", var("i"))) : unary(op, load("x", var("i")));
  return b.body({let("i", gid(Axis::X)), if_(lt(var("i"), len("out")), {store("out", var("i"), std::move(value))})})
      .build();
}

CheckedProgram operator_throughput_program(Op op) {
  ProgramBuilder b(std::string("operator_throughput_") + std::string(op_info(op).json));
  b.workgroup_size(256).input("x", 0, ScalarType::F32);
  if (op == Op::Pow) b.input("y", 1, ScalarType::F32);
  b.output("out", 2, ScalarType::F32);
  // Each step scales the operand by c = 1 - 2^-10, so that no two calls
  // share an operand and the compiler must compute every one.
  Expr value = op == Op::Pow ? binary(op, var("v"), load("y", var("i"))) : unary(op, var("v"));
  std::vector<Stmt> step = {assign("acc", add(var("acc"), std::move(value))),
                            assign("v", mul(var("v"), f32(0.9990234375f)))};
  const Expr i = add(gid(Axis::X), mul(gid(Axis::Y), mul(nwg(Axis::X), u32(256))));
  return b
      .body({let("i", i),
             if_(lt(var("i"), len("out")),
                 {let("v", load("x", var("i"))), let("acc", f32(0.0f)),
                  loop("k", u32(0), u32(kOperatorRepeats), std::move(step)), store("out", var("i"), var("acc"))})})
      .build();
}

}  // namespace vyre::samples
