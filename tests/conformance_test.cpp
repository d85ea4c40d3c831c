// Conformance: every operator and every edge case the format names, run on
// the GPU and on the reference interpreter and compared, integers exactly and
// f32 within WGSL's accuracy (docs/conformance.md). Each case runs three
// times on the GPU: with its operands loaded from buffers, and with the same
// operands as literals, with the lowering's passes (which fold what they
// can) and without them, which proves the lowering never leaves a constant
// expression for WGSL to reject at shader creation. An operator with a
// faster form (the ULP budget's) runs a fourth time with it.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numbers>

#include "lower/approximate_forms.hpp"
#include "samples/approximate_forms.hpp"
#include "support/fail_on_pass_bugs.hpp"
#include "support/conformance_cases.hpp"
#include "vyre/builder.hpp"
#include "vyre/gpu.hpp"
#include "vyre/reference.hpp"

using namespace vyre;
using namespace vyre::build;

namespace {

const ::testing::Environment* const kFailOnPassBugs =
    ::testing::AddGlobalTestEnvironment(new vyre::test::FailOnPassBugs);

using namespace vyre::test::conformance;

gpu::Backend& backend() {
  static gpu::Backend b = [] {
    gpu::BackendOptions options;
    options.cache = std::make_shared<aot::Cache>(aot::CacheOptions{});  // lower every time: test the lowering
    return gpu::Backend(options);
  }();
  return b;
}

class Conformance : public ::testing::TestWithParam<size_t> {};

ShaderOptions ulp_255() {
  ShaderOptions o;
  o.ulp_budget = 255;
  return o;
}

// Operands inside the form's domain, and a result within its bound of the
// exact value.
bool within_form(const lowering::ApproximateForm& form, const Tuple& in, uint32_t device) {
  const double x = std::bit_cast<float>(in[0]);
  return form.in_domain(x) &&
         samples::ulp_error(std::bit_cast<float>(device), samples::exact_value(form.op, x)) <= form.max_ulp;
}


TEST_P(Conformance, GpuAgreesWithTheReferenceOnLoadedAndLiteralOperands) {
  const Case& c = *all_cases()[GetParam()];
  const CheckedProgram loaded = loaded_program(c);
  const Inputs inputs = loaded_inputs(c);
  const auto ref = reference::run(loaded, inputs).get<uint32_t>("out");
  ASSERT_EQ(ref.size(), c.tuples.size());

  // The interpreter itself: each element is the scalar semantics' answer.
  for (size_t k = 0; k < c.tuples.size(); ++k) {
    const uint32_t want = evaluate(c, c.tuples[k]);
    EXPECT_EQ(ref[k], want) << describe(c, c.tuples[k]);
  }

  const auto on_gpu = backend().compile(loaded).dispatch(inputs).get<uint32_t>("out");
  const Inputs literals = literal_inputs(c);
  const Dim3 one{1, 1, 1};
  const CheckedProgram literal = literal_program(c);
  const auto on_gpu_literal = backend().compile(literal).dispatch(literals, one).get<uint32_t>("out");
  EXPECT_EQ(reference::run(literal, literals, {}, one).get<uint32_t>("out"), ref);
  // The literal operands again without the lowering's passes, which fold
  // what they can: then the shader computes every case itself.
  ShaderOptions no_passes;
  no_passes.passes = false;
  const auto unfolded = backend().compile(literal, no_passes).dispatch(literals, one).get<uint32_t>("out");
  // With the largest ULP budget, where the operator has a faster form: the
  // form must still be a valid builtin (WGSL's rule, c.accept), or, inside
  // its domain, within its measured bound (docs/lowering.md).
  const lowering::ApproximateForm* form = lowering::chosen_form(c.op, ulp_255());
  std::vector<uint32_t> approximated;
  if (form) approximated = backend().compile(loaded, ulp_255()).dispatch(inputs).get<uint32_t>("out");

  int reported = 0;
  for (size_t k = 0; k < c.tuples.size() && reported < 8; ++k) {
    if (!c.accept(c.tuples[k], ref[k], on_gpu[k])) {
      ADD_FAILURE() << describe(c, c.tuples[k]) << ": reference 0x" << std::hex << ref[k] << ", GPU 0x" << on_gpu[k]
                    << " (operands loaded)";
      ++reported;
    }
    if (!c.accept(c.tuples[k], ref[k], on_gpu_literal[k])) {
      ADD_FAILURE() << describe(c, c.tuples[k]) << ": reference 0x" << std::hex << ref[k] << ", GPU 0x"
                    << on_gpu_literal[k] << " (operands as literals)";
      ++reported;
    }
    if (!c.accept(c.tuples[k], ref[k], unfolded[k])) {
      ADD_FAILURE() << describe(c, c.tuples[k]) << ": reference 0x" << std::hex << ref[k] << ", GPU 0x" << unfolded[k]
                    << " (operands as literals, without the passes)";
      ++reported;
    }
    if (form && !c.accept(c.tuples[k], ref[k], approximated[k]) && !within_form(*form, c.tuples[k], approximated[k])) {
      ADD_FAILURE() << describe(c, c.tuples[k]) << ": reference 0x" << std::hex << ref[k] << ", GPU 0x"
                    << approximated[k] << " (the ULP budget's form)";
      ++reported;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Operators, Conformance, ::testing::Range<size_t>(0, all_cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) { return all_cases()[info.param]->name; });

// ---- constructs beyond single operators ------------------------------------------------

void expect_gpu_equals_reference(const CheckedProgram& p, const Inputs& in, const ShaderOptions& options = {},
                                 const std::optional<Dim3>& grid = std::nullopt) {
  const Outputs ref = reference::run(p, in, options, grid);
  const Outputs got = backend().compile(p, options).dispatch(in, grid);
  for (const auto& [name, bytes] : ref.all()) {
    std::vector<uint32_t> r(bytes.size() / 4), g(got.bytes(name).size() / 4);
    std::memcpy(r.data(), bytes.data(), bytes.size());
    std::memcpy(g.data(), got.bytes(name).data(), got.bytes(name).size());
    EXPECT_EQ(g, r) << p.name() << ": output " << name;
  }
}

const Scenario& scenario(const std::string& name) {
  static const std::vector<Scenario> all = construct_scenarios();
  for (const auto& s : all)
    if (s.name == name) return s;
  throw std::runtime_error("no scenario " + name);
}

TEST(ConformanceConstructs, InvocationBuiltinsInThreeDimensions) {
  const Scenario& s = scenario("builtins");
  expect_gpu_equals_reference(s.program, s.inputs, s.options, s.grid);
}

TEST(ConformanceConstructs, WorkgroupMemoryStartsZeroedInEveryWorkgroup) {
  const Scenario& s = scenario("workgroup_zero");
  const Outputs got = backend().compile(s.program, s.options).dispatch(s.inputs, s.grid);
  EXPECT_EQ(got.get<uint32_t>("out"), std::vector<uint32_t>(32 * 8, 0));
  expect_gpu_equals_reference(s.program, s.inputs, s.options, s.grid);
}

TEST(ConformanceConstructs, AtomicsOfEveryKind) {
  const Scenario& s = scenario("atomics");
  expect_gpu_equals_reference(s.program, s.inputs, s.options, s.grid);
  const uint32_t n = 256;
  const auto got = backend().compile(s.program, s.options).dispatch(s.inputs, s.grid).get<uint32_t>("shared");
  EXPECT_EQ(got[0], n * (n - 1) / 2);
  EXPECT_EQ(got[2], 5u);
  EXPECT_EQ(got[3], n - 1);
  EXPECT_EQ(got[8] + got[9] + got[10] + got[11], n);
}

TEST(ConformanceConstructs, ControlFlowOfEveryKind) {
  const Scenario& s = scenario("control_flow");
  expect_gpu_equals_reference(s.program, s.inputs, s.options, s.grid);
}

}  // namespace
