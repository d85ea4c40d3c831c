#include "lower/approximate_forms.hpp"

#include <array>
#include <bit>
#include <cstdint>
#include <cmath>
#include <string>

namespace vyre::lowering {
namespace {

constexpr double kMinNormal = 1.1754943508222875e-38;
constexpr double kMaxFinite = 3.4028234663852886e38;

// tanh(x) = 1 - 2 / (2^(2x log2 e) + 1): one exp2 and one division, where
// a driver's tanh guards both ends and the neighbourhood of zero. Near zero
// the subtraction cancels, so the bound in ULP is stated for |x| >= 0.25;
// below that the error stays under 2^-22 absolute, within what WGSL allows
// tanh there (it inherits sinh/cosh's accuracy).
float tanh_mirror(float x) { return 1.0f - 2.0f / (std::exp2(2.88539008f * x) + 1.0f); }

// sqrt(x) = x inverseSqrt(x), where WGSL's own sqrt inherits the accuracy
// of 1 / inverseSqrt(x), a division more. Where the product would be 0 inf,
// decided on the bits (WGSL lets a compiler assume no infinity in float
// comparisons): +inf gives itself, and zeros and subnormals (which a GPU
// may flush) give a zero of their sign.
float sqrt_mirror(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  if (bits == 0x7f800000u) return x;
  if ((bits & 0x7fffffffu) < 0x00800000u) return x * 0.0f;
  return x * (1.0f / std::sqrt(x));
}

constexpr ValueRange kNone{};

// Bounds: the largest error measured on the reference, lavapipe, Dawn
// (SwiftShader) and the H200, rounded up, plus one ULP for the points
// between samples (docs/lowering.md, "ULP-budgeted forms", has the table).
const std::array kForms{
    ApproximateForm{Op::Sqrt, "vyre_fast_sqrt",
                    "fn vyre_fast_sqrt(x: f32) -> f32 {\n"
                    "  let bits = bitcast<u32>(x);\n"
                    "  let product = select(x * inverseSqrt(x), x * 0.0, (bits & 0x7fffffffu) < 0x00800000u);\n"
                    "  return select(product, x, bits == 0x7f800000u);\n"
                    "}\n",
                    255, {kMinNormal, kMaxFinite}, kNone, sqrt_mirror},
    ApproximateForm{Op::Tanh, "vyre_fast_tanh",
                    "fn vyre_fast_tanh(x: f32) -> f32 {\n"
                    "  return 1.0 - 2.0 / (exp2(2.88539008 * x) + 1.0);\n"
                    "}\n",
                    255, {-10.0, -0.25}, {0.25, 10.0}, tanh_mirror},
};

}  // namespace

std::span<const ApproximateForm> approximate_forms() { return kForms; }

const ApproximateForm* chosen_form(Op op, const ShaderOptions& options) {
  if (!options.ulp_budget || *options.ulp_budget == 0) return nullptr;
  for (const ApproximateForm& f : kForms)
    if (f.op == op && f.max_ulp <= *options.ulp_budget) return &f;
  return nullptr;
}

std::string chosen_forms_text(const CheckedProgram& program, const ShaderOptions& options) {
  std::string out;
  for (const ApproximateForm& f : kForms)
    if (program.uses(f.op) && chosen_form(f.op, options))
      out += (out.empty() ? "" : ",") + std::string(op_info(f.op).json);
  return out;
}

}  // namespace vyre::lowering
