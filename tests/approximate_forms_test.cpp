// The ULP-budgeted forms (src/lower/approximate_forms.hpp) on the CPU: each
// form's C++ mirror measured against double precision over a dense sample
// of its domain, and how a budget shapes the text and the cache key. The
// same measurement on the GPU is gpu_approximate_forms_test.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "lower/approximate_forms.hpp"
#include "samples/approximate_forms.hpp"
#include "vyre/aot.hpp"
#include "vyre/builder.hpp"
#include "vyre/lower.hpp"

using namespace vyre;
using namespace vyre::build;
using lowering::ApproximateForm;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

ShaderOptions budget(uint8_t ulp) {
  ShaderOptions o;
  o.ulp_budget = ulp;
  return o;
}

std::string name_of(const ApproximateForm& f) { return std::string(op_info(f.op).json); }

TEST(ApproximateForms, EachMirrorStaysWithinItsBoundOverItsDomain) {
  for (const ApproximateForm& form : lowering::approximate_forms()) {
    const std::vector<float> sample = samples::form_sample(form, 1u << 20);
    ASSERT_GT(sample.size(), 500000u) << name_of(form);
    std::vector<float> results(sample.size());
    for (size_t i = 0; i < sample.size(); ++i) results[i] = form.mirror(sample[i]);
    const double worst = samples::max_ulp_error(form.op, sample, results);
    EXPECT_LE(worst, form.max_ulp) << name_of(form) << " on the reference";
    // Every sample lies in the domain the bound is stated for.
    for (size_t i = 0; i < sample.size(); i += 997) ASSERT_TRUE(form.in_domain(sample[i])) << name_of(form);
    // Between the intervals: within the absolute bound.
    const std::vector<float> gap = samples::gap_sample(form, 1u << 18);
    std::vector<float> gap_results(gap.size());
    for (size_t i = 0; i < gap.size(); ++i) gap_results[i] = form.mirror(gap[i]);
    EXPECT_LE(samples::max_abs_error(form.op, gap, gap_results), form.gap_max_abs) << name_of(form);
    for (size_t i = 0; i < gap.size(); i += 997) ASSERT_FALSE(form.in_domain(gap[i])) << name_of(form) << " " << gap[i];
  }
}

TEST(ApproximateForms, TheErrorMeasureCountsUnitsInTheLastPlace) {
  EXPECT_EQ(samples::ulp_error(1.0f, 1.0), 0.0);
  EXPECT_DOUBLE_EQ(samples::ulp_error(std::nextafter(1.0f, 2.0f), 1.0), 1.0);
  EXPECT_DOUBLE_EQ(samples::ulp_error(1.0f, 1.0 + 3 * 0x1p-23), 3.0);
  EXPECT_DOUBLE_EQ(samples::ulp_error(-0.75f, -0.75 - 0x1p-24), 1.0);  // spacing 2^-24 in [0.5, 1)
  EXPECT_TRUE(std::isinf(samples::ulp_error(std::numeric_limits<float>::quiet_NaN(), 2.0)));
}

TEST(ApproximateForms, ABudgetAtTheBoundReplacesTheBuiltinAndOneBelowDoesNot) {
  for (const ApproximateForm& form : lowering::approximate_forms()) {
    const Program p = samples::operator_program(form.op).program();
    const std::string builtin = lower_to_wgsl(p);
    EXPECT_FALSE(contains(builtin, std::string(form.helper))) << builtin;
    EXPECT_EQ(lower_to_wgsl(p, budget(0)), builtin) << "a budget of 0 means WGSL's builtins";
    const std::string fast = lower_to_wgsl(p, budget(form.max_ulp));
    EXPECT_TRUE(contains(fast, std::string(form.helper) + "(")) << fast;
    if (form.max_ulp > 1) {
      EXPECT_EQ(lower_to_wgsl(p, budget(form.max_ulp - 1)), builtin) << name_of(form);
    }
  }
}

TEST(ApproximateForms, AFormUsedTwiceIsDefinedOnce) {
  const Program p = ProgramBuilder("twice")
                        .input("x", 0, ScalarType::F32)
                        .output("out", 1, ScalarType::F32)
                        .body({store("out", gid(), add(unary(Op::Tanh, load("x", gid())), unary(Op::Tanh, f32(0.5f))))})
                        .build();
  const std::string wgsl = lower_to_wgsl(p, budget(255));
  const size_t first = wgsl.find("fn vyre_fast_tanh(");
  ASSERT_NE(first, std::string::npos) << wgsl;
  EXPECT_EQ(wgsl.find("fn vyre_fast_tanh(", first + 1), std::string::npos) << wgsl;
}

TEST(ApproximateForms, TheBudgetIsInTheKeyExactlyWhenItChangesTheText) {
  const CheckedProgram with_tanh = samples::operator_program(Op::Tanh);
  const CheckedProgram with_exp = samples::operator_program(Op::Exp);  // no form
  const ApproximateForm* tanh_form = lowering::chosen_form(Op::Tanh, budget(255));
  ASSERT_NE(tanh_form, nullptr);

  const auto key = [](const CheckedProgram& p, const ShaderOptions& o) { return aot::key_parts(p, "fp", o).key(); };
  // No form for the program's operators: the same text, the same key.
  EXPECT_EQ(lower_to_wgsl(with_exp, budget(255)), lower_to_wgsl(with_exp));
  EXPECT_EQ(key(with_exp, budget(255)), key(with_exp, {}));
  EXPECT_EQ(shaping_signature(with_exp, budget(255)), "");
  // A form chosen: the signature names it, and budgets choosing the same
  // forms share one key.
  EXPECT_EQ(shaping_signature(with_tanh, budget(255)), "approximate=tanh");
  EXPECT_NE(key(with_tanh, budget(255)), key(with_tanh, {}));
  EXPECT_EQ(key(with_tanh, budget(tanh_form->max_ulp)), key(with_tanh, budget(255)));
  if (tanh_form->max_ulp > 1) {
    EXPECT_EQ(key(with_tanh, budget(tanh_form->max_ulp - 1)), key(with_tanh, {}));
  }
}

}  // namespace
