// Faster forms of transcendental operators, for shaders whose ShaderOptions
// carry a ULP budget (docs/lowering.md, "ULP-budgeted forms"). Each form is
// a WGSL function the lowering calls instead of the builtin, with the same
// arithmetic written in C++ (`mirror`) so that its error can be measured on
// the CPU as well as on each GPU. A form is chosen when its bound, the
// largest error measured over its domain on the reference and on every GPU
// we test (tests/approximate_forms_test.cpp, tests/gpu_approximate_forms_test.cpp),
// is within the budget.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "vyre/checked.hpp"
#include "vyre/program.hpp"
#include "vyre/shader_options.hpp"

namespace vyre::lowering {

struct ValueRange {
  double lo = 0;
  double hi = 0;
  bool contains(double v) const { return v >= lo && v <= hi; }
};

struct ApproximateForm {
  Op op;
  std::string_view helper;       // the WGSL function the lowering calls
  std::string_view definition;   // its WGSL text
  // Largest error, in ULP of the exact result rounded to f32, over the domain.
  uint8_t max_ulp;
  // The domain, where the bound holds: operands in `first` or in `second`
  // (a second interval lets a domain leave out a neighbourhood, e.g. tanh's
  // of zero). Outside it a form must still meet WGSL's accuracy for the
  // builtin, which the conformance suite checks.
  ValueRange first;
  ValueRange second;
  // Between the two intervals, where the exact result is too small for a
  // bound in ULP: the largest absolute error measured there.
  double gap_max_abs;
  // The same arithmetic on the CPU: C++ float operations, with std::exp2f
  // where the WGSL calls exp2.
  float (*mirror)(float x);

  bool has_gap() const { return second.lo < second.hi; }
  bool in_domain(double x) const { return first.contains(x) || (has_gap() && second.contains(x)); }
};

// Every form, one per operator, in a fixed order.
std::span<const ApproximateForm> approximate_forms();

// The form of `op` within options.ulp_budget, or nullptr (no budget, a
// budget below the form's bound, or an operator without a form).
const ApproximateForm* chosen_form(Op op, const ShaderOptions& options);

// The operators of `program` that the budget replaces by their forms, as
// their format names joined by ','; "" when none is (the shader is then the
// same as without a budget).
std::string chosen_forms_text(const CheckedProgram& program, const ShaderOptions& options);

}  // namespace vyre::lowering
