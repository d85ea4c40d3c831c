// The ULP-budgeted forms on the GPU: each form's largest error over a dense
// sample of its domain, against double precision, within the bound that
// lets a budget choose it (src/lower/approximate_forms.hpp); and a dispatch
// with a budget agrees with the reference wherever the program's operators
// have no form. approximate_forms_test measures the same on the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "lower/approximate_forms.hpp"
#include "samples/approximate_forms.hpp"
#include "support/gpu_test_support.hpp"
#include "vyre/builder.hpp"
#include "vyre/gpu.hpp"
#include "vyre/lower.hpp"
#include "vyre/reference.hpp"

namespace vyre {
namespace {

using namespace vyre::build;
using lowering::ApproximateForm;

gpu::Backend& backend() {
  static gpu::Backend b(test::no_disk_cache());
  return b;
}

ShaderOptions budget(uint8_t ulp) {
  ShaderOptions o;
  o.ulp_budget = ulp;
  return o;
}

Inputs sample_inputs(const std::vector<float>& x) {
  Inputs in;
  in.set("x", x).size("out", x.size());
  return in;
}

class FormOnGpu : public ::testing::TestWithParam<size_t> {};

TEST_P(FormOnGpu, StaysWithinItsBoundOverItsDomain) {
  const ApproximateForm& form = lowering::approximate_forms()[GetParam()];
  const std::vector<float> s = samples::form_sample(form, 1u << 20);
  const CheckedProgram p = samples::operator_program(form.op);
  gpu::Pipeline pipeline = backend().compile(p, budget(form.max_ulp));
  ASSERT_NE(pipeline.wgsl().find(std::string(form.helper)), std::string::npos) << "the form is not in the shader";
  const std::vector<float> got = pipeline.dispatch(sample_inputs(s)).get<float>("out");
  ASSERT_EQ(got.size(), s.size());
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = samples::ulp_error(got[i], samples::exact_value(form.op, s[i]));
    if (e > worst) worst = e, at = i;
  }
  EXPECT_LE(worst, form.max_ulp) << op_info(form.op).json << " at x = " << s[at] << ": got " << got[at];
  // Between the domain's intervals, the absolute bound.
  const std::vector<float> gap = samples::gap_sample(form, 1u << 18);
  if (!gap.empty()) {
    const std::vector<float> in_gap = pipeline.dispatch(sample_inputs(gap)).get<float>("out");
    EXPECT_LE(samples::max_abs_error(form.op, gap, in_gap), form.gap_max_abs) << op_info(form.op).json;
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, FormOnGpu, ::testing::Range<size_t>(0, lowering::approximate_forms().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return std::string(op_info(lowering::approximate_forms()[info.param].op).json);
                         });

TEST(FormsOnGpu, EveryFormInOneShaderStaysWithinItsBound) {
  std::vector<Stmt> body{let("i", gid())};
  uint32_t slot = 0;
  for (const ApproximateForm& form : lowering::approximate_forms()) {
    Expr x = load("x", var("i"));
    body.push_back(store("out", add(mul(var("i"), u32(8)), u32(slot++)), unary(form.op, std::move(x))));
  }
  const CheckedProgram p = ProgramBuilder("all_forms")
                               .workgroup_size(64)
                               .input("x", 0, ScalarType::F32)
                               .output("out", 1, ScalarType::F32)
                               .body(std::move(body))
                               .build();
  std::vector<float> x(256);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.05f + 0.0117f * static_cast<float>(i);  // 0.05 to 3.03
  Inputs in;
  in.set("x", x).size("out", x.size() * 8);
  const std::vector<float> together = backend().compile(p, budget(255)).dispatch(in, Dim3{4, 1, 1}).get<float>("out");
  for (size_t f = 0; f < lowering::approximate_forms().size(); ++f) {
    const ApproximateForm& form = lowering::approximate_forms()[f];
    for (size_t i = 0; i < x.size(); ++i) {
      if (!form.in_domain(x[i])) continue;  // tanh's leaves out (-0.25, 0.25)
      const float want = form.mirror(x[i]);
      const double exact = samples::exact_value(form.op, x[i]);
      EXPECT_LE(samples::ulp_error(together[i * 8 + f], exact), form.max_ulp)
          << op_info(form.op).json << "(" << x[i] << "): " << together[i * 8 + f] << ", the mirror " << want;
    }
  }
}

}  // namespace
}  // namespace vyre
