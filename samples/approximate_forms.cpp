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

// An interval that may contain zero: each sign walked on its own, half of
// the points each.
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

std::vector<float> form_sample(const lowering::ApproximateForm& form, size_t n) {
  const bool two = form.has_gap();
  std::vector<float> out = interval_sample(form.first, two ? n / 2 : n);
  if (two) {
    const std::vector<float> more = interval_sample(form.second, n - n / 2);
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

std::vector<float> gap_sample(const lowering::ApproximateForm& form, size_t n) {
  if (!form.has_gap()) return {};
  return interval_sample({form.first.hi, form.second.lo}, n);
}

double exact_value(Op op, double x) {
  switch (op) {
    case Op::Exp: return std::exp(x);
    case Op::Exp2: return std::exp2(x);
    case Op::Log: return std::log(x);
    case Op::Log2: return std::log2(x);
    case Op::Sin: return std::sin(x);
    case Op::Cos: return std::cos(x);
    case Op::Tanh: return std::tanh(x);
    case Op::InverseSqrt: return 1.0 / std::sqrt(x);
    case Op::Sqrt: return std::sqrt(x);
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

double max_ulp_error(Op op, const std::vector<float>& operands, const std::vector<float>& results) {
  double worst = 0;
  for (size_t i = 0; i < operands.size() && i < results.size(); ++i)
    worst = std::max(worst, ulp_error(results[i], exact_value(op, operands[i])));
  return worst;
}

double max_abs_error(Op op, const std::vector<float>& operands, const std::vector<float>& results) {
  double worst = 0;
  for (size_t i = 0; i < operands.size() && i < results.size(); ++i) {
    const double e = std::fabs(static_cast<double>(results[i]) - exact_value(op, operands[i]));
    worst = std::max(worst, std::isnan(e) ? std::numeric_limits<double>::infinity() : e);
  }
  return worst;
}

CheckedProgram operator_program(Op op) {
  ProgramBuilder b(std::string("operator_") + std::string(op_info(op).json));
  return b.workgroup_size(64)
      .input("x", 0, ScalarType::F32)
      .output("out", 1, ScalarType::F32)
      .body({let("i", gid(Axis::X)),
             if_(lt(var("i"), len("out")), {store("out", var("i"), unary(op, load("x", var("i"))))})})
      .build();
}

CheckedProgram operator_throughput_program(Op op) {
  ProgramBuilder b(std::string("operator_throughput_") + std::string(op_info(op).json));
  b.workgroup_size(256).input("x", 0, ScalarType::F32).output("out", 1, ScalarType::F32);
  // Each step scales the operand by c = 1 - 2^-10, so that no two calls
  // share an operand and the compiler must compute every one.
  std::vector<Stmt> step = {assign("acc", add(var("acc"), unary(op, var("v")))),
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
