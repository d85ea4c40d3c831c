#include "lower/approximate_forms.hpp"

#include <array>
#include <cmath>
#include <string>

namespace vyre::lowering {
namespace {

// tanh(x) = 1 - 2 / (2^(2x log2 e) + 1): one exp2 and one division, where
// a driver's tanh guards both ends and the neighbourhood of zero. Near zero
// the subtraction cancels, so the bound in ULP is stated for |x| >= 0.25;
// below that the error stays under 2^-22 absolute, within what WGSL allows
// tanh there (it inherits sinh/cosh's accuracy).
float tanh_mirror(float x) { return 1.0f - 2.0f / (std::exp2(2.88539008f * x) + 1.0f); }

// Bounds: the largest error measured on the reference, lavapipe, Dawn
// (SwiftShader) and the H200, rounded up, plus one ULP for the points
// between samples (docs/lowering.md, "ULP-budgeted forms", has the table).
const std::array kForms{
    ApproximateForm{Op::Tanh, "vyre_fast_tanh",
                    "fn vyre_fast_tanh(x: f32) -> f32 {\n"
                    "  return 1.0 - 2.0 / (exp2(2.88539008 * x) + 1.0);\n"
                    "}\n",
                    12, {-10.0, -0.25}, {0.25, 10.0}, 0x1p-21, tanh_mirror},
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
    if (program.uses(f.op) && chosen_form(f.op, options)) {
      if (!out.empty()) out += ',';
      out += op_info(f.op).json;
    }
  return out;
}

}  // namespace vyre::lowering
