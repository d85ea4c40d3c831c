#include "lower/approximate_forms.hpp"

#include <array>
#include <cmath>
#include <string>

namespace vyre::lowering {
namespace {

constexpr double kMinNormal = 1.1754943508222875e-38;
constexpr double kMaxFinite = 3.4028234663852886e38;

// exp(x) = 2^(x log2 e). One rounding of the product moves the result by
// up to |x| 2^-24 relative, about |x| ULP at worst, on top of exp2's own error.
float exp_mirror(float x, float) { return std::exp2(x * 1.44269504f); }

// log(x) = log2(x) ln 2.
float log_mirror(float x, float) { return std::log2(x) * 0.693147181f; }

// pow(x, y) = 2^(y log2 x): WGSL defines pow's accuracy as inherited from
// this very expression; the form leaves out the special cases a driver adds.
float pow_mirror(float x, float y) { return std::exp2(y * std::log2(x)); }

// tanh(x) = (1 - t) / (1 + t) with t = 2^(-2|x| log2 e), the sign restored.
// For |x| < 0.25, where 1 - t cancels, the Taylor series to x^9 (its next
// term is below 0.15 ULP there).
float tanh_mirror(float x, float) {
  const float a = std::fabs(x);
  const float t = std::exp2(-2.88539008f * a);
  const float large = (1.0f - t) / (1.0f + t);
  const float s = x * x;
  const float small = x + x * s * (-0.333333343f + s * (0.133333340f + s * (-0.0539682540f + s * 0.0218694885f)));
  return a < 0.25f ? small : (x >= 0.0f ? large : -large);
}

// sin and cos: x = k pi/2 + r with pi/2 in three parts whose first two make
// exact products for |k| < 2^13 (Cody and Waite), then sin or cos of r in
// [-pi/4, pi/4] by a short polynomial, picked and signed by the quadrant.
float sincos_mirror(float x, uint32_t shift) {
  const float k = std::nearbyint(x * 0.636619772f);
  float r = std::fma(k, -1.5703125f, x);
  r = std::fma(k, -4.83751297e-4f, r);
  r = std::fma(k, -7.54978995e-8f, r);
  const uint32_t q = static_cast<uint32_t>(static_cast<int32_t>(k)) + shift;
  const float s = r * r;
  const float sin_r = r + r * s * (-0.166666546f + s * (0.00833216087f + s * -0.000195152959f));
  const float cos_r = 1.0f - 0.5f * s + s * s * (0.0416666642f + s * (-0.00138873165f + s * 2.44331568e-5f));
  const float v = (q & 1u) != 0 ? cos_r : sin_r;
  return (q & 2u) != 0 ? -v : v;
}
float sin_mirror(float x, float) { return sincos_mirror(x, 0); }
float cos_mirror(float x, float) { return sincos_mirror(x, 1); }

constexpr std::string_view kSinCosName = "vyre_fast_sincos";
constexpr std::string_view kSinCos =
    "fn vyre_fast_sincos(x: f32, shift: u32) -> f32 {\n"
    "  let k = round(x * 0.636619772);\n"
    "  var r = fma(k, -1.5703125, x);\n"
    "  r = fma(k, -4.83751297e-4, r);\n"
    "  r = fma(k, -7.54978995e-8, r);\n"
    "  let q = bitcast<u32>(i32(k)) + shift;\n"
    "  let s = r * r;\n"
    "  let sin_r = r + r * s * (-0.166666546 + s * (0.00833216087 + s * -0.000195152959));\n"
    "  let cos_r = 1.0 - 0.5 * s + s * s * (0.0416666642 + s * (-0.00138873165 + s * 2.44331568e-5));\n"
    "  let v = select(sin_r, cos_r, (q & 1u) != 0u);\n"
    "  return select(v, -v, (q & 2u) != 0u);\n"
    "}\n";

constexpr ValueRange kNone{};

// Bounds: the largest error measured on the reference, lavapipe, Dawn
// (SwiftShader) and the H200, rounded up (docs/lowering.md has the table).
const std::array kForms{
    ApproximateForm{Op::Exp, "vyre_fast_exp",
                    "fn vyre_fast_exp(x: f32) -> f32 {\n  return exp2(x * 1.44269504);\n}\n", "", "", 255,
                    {-87.0, 88.0}, kNone, kNone, exp_mirror},
    ApproximateForm{Op::Log, "vyre_fast_log",
                    "fn vyre_fast_log(x: f32) -> f32 {\n  return log2(x) * 0.693147181;\n}\n", "", "", 255,
                    {kMinNormal, 0.5}, {2.0, kMaxFinite}, kNone, log_mirror},
    ApproximateForm{Op::Sin, "vyre_fast_sin", "fn vyre_fast_sin(x: f32) -> f32 {\n  return vyre_fast_sincos(x, 0u);\n}\n",
                    kSinCosName, kSinCos, 255, {-3.14159274, 3.14159274}, kNone, kNone, sin_mirror},
    ApproximateForm{Op::Cos, "vyre_fast_cos", "fn vyre_fast_cos(x: f32) -> f32 {\n  return vyre_fast_sincos(x, 1u);\n}\n",
                    kSinCosName, kSinCos, 255, {-3.14159274, 3.14159274}, kNone, kNone, cos_mirror},
    ApproximateForm{Op::Tanh, "vyre_fast_tanh",
                    "fn vyre_fast_tanh(x: f32) -> f32 {\n"
                    "  let a = abs(x);\n"
                    "  let t = exp2(-2.88539008 * a);\n"
                    "  let large = (1.0 - t) / (1.0 + t);\n"
                    "  let s = x * x;\n"
                    "  let small = x + x * s * (-0.333333343 + s * (0.133333340 + s * (-0.0539682540 + s * "
                    "0.0218694885)));\n"
                    "  return select(select(-large, large, x >= 0.0), small, a < 0.25);\n"
                    "}\n",
                    "", "", 255, {-10.0, 10.0}, kNone, kNone, tanh_mirror},
    ApproximateForm{Op::Pow, "vyre_fast_pow",
                    "fn vyre_fast_pow(x: f32, y: f32) -> f32 {\n  return exp2(y * log2(x));\n}\n", "", "", 255,
                    {1.0 / 1024, 1024.0}, kNone, {-4.0, 4.0}, pow_mirror},
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
