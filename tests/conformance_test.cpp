// Conformance: every operator and every edge case the format names, run on
// the GPU and on the reference interpreter and compared, integers exactly and
// f32 within WGSL's accuracy (docs/conformance.md). Each case runs three
// times on the GPU: with its operands loaded from buffers, and with the same
// operands as literals, with the lowering's passes (which fold what they
// can) and without them, which proves the lowering never leaves a constant
// expression for WGSL to reject at shader creation. An operator with a
// faster form (the ULP budget's) runs a fourth time with it.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numbers>

#include "lower/approximate_forms.hpp"
#include "samples/approximate_forms.hpp"
#include "support/lowering_backend.hpp"
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

// The contents a scenario gives buffer `name`, as T.
template <typename T>
std::vector<T> input_values(const Inputs& inputs, const std::string& name) {
  for (const auto& e : inputs.entries()) {
    if (e.buffer != BufferRef(name)) continue;
    const auto bytes = e.contents();
    std::vector<T> out(bytes.size() / sizeof(T));
    std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
  }
  ADD_FAILURE() << "no input " << name;
  return {};
}

gpu::Backend& backend() { return vyre::test::lowering_backend(); }

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
  for (const auto& [name, bytes] : ref.all()) EXPECT_EQ(got.bytes(name), bytes) << p.name() << ": output " << name;
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

// Against values computed here in C++, independently of the reference.
TEST(ConformanceConstructs, NarrowElementsExtendOnLoad) {
  const Scenario& s = scenario("narrow_loads");
  expect_gpu_equals_reference(s.program, s.inputs, s.options, s.grid);
  const auto sum = backend().compile(s.program, s.options).dispatch(s.inputs, s.grid).get<int32_t>("sum");
  ASSERT_EQ(sum.size(), 61u);
  for (size_t k = 0; k < sum.size(); ++k) {
    const int32_t a = static_cast<uint8_t>(k * 37 + 200);
    const int32_t b = static_cast<int8_t>(static_cast<int>(k * 11) - 128);
    const int32_t c = static_cast<uint16_t>(k * 4099 + 65000);
    const int32_t d = static_cast<int16_t>(static_cast<int>(k * 1301) - 32768);
    EXPECT_EQ(sum[k], a + b + c + d + (k % 3 == 0 ? 1000 : 0)) << k;
  }
}

TEST(ConformanceConstructs, NarrowElementsKeepTheirLowBitsOnStoreAndTheirNeighbours) {
  const Scenario& s = scenario("narrow_stores");
  expect_gpu_equals_reference(s.program, s.inputs, s.options, s.grid);
  const Outputs got = backend().compile(s.program, s.options).dispatch(s.inputs, s.grid);
  const auto a3 = got.get<uint8_t>("a3");
  const auto bneg = got.get<int8_t>("bneg");
  const auto cmix = got.get<uint16_t>("cmix");
  const auto dtriple = got.get<int16_t>("dtriple");
  const auto flip = got.get<uint8_t>("flip");
  const auto reversed = got.get<uint8_t>("reversed");
  const size_t n = 61;
  ASSERT_EQ(a3.size(), n);
  ASSERT_EQ(got.bytes("a3").size(), n);
  ASSERT_EQ(got.bytes("cmix").size(), 2 * n);
  for (size_t k = 0; k < n; ++k) {
    const uint32_t x = static_cast<uint8_t>(k * 37 + 200);
    const int32_t y = static_cast<int32_t>(x) - 128;
    EXPECT_EQ(a3[k], static_cast<uint8_t>(x * 3 + 7)) << k;
    EXPECT_EQ(bneg[k], static_cast<int8_t>(y * -3)) << k;
    EXPECT_EQ(cmix[k], static_cast<uint16_t>(x * 300 + k)) << k;
    EXPECT_EQ(dtriple[k], static_cast<int16_t>(y * 300)) << k;
    EXPECT_EQ(flip[k], ((k % 3 == 0) != (x > 128)) ? 1 : 0) << k;
    EXPECT_EQ(reversed[n - 1 - k], x) << k;
  }
}

// Racing stores of different values to one packed element leave one of the
// values, as with a 4-byte element, never a mix of their bits; the other
// elements of the word, stored by one invocation each, are kept.
TEST(ConformanceConstructs, RacingStoresToOneByteLeaveOneOfTheStoredValues) {
  const Program p = ProgramBuilder("byte_race")
                        .workgroup_size(64)
                        .output("out", 0, ScalarType::U8, 4)
                        .body({let("i", gid()),
                               // 0x0f, 0xf0, 0x33, 0xcc...: any two OR to a value nobody stored.
                               store("out", u32(0), select(eq(bit_and(var("i"), u32(1)), u32(0)),
                                                           select(lt(var("i"), u32(128)), u32(0x0f), u32(0x33)),
                                                           select(lt(var("i"), u32(128)), u32(0xf0), u32(0xcc)))),
                               if_(lt(var("i"), u32(3)), {store("out", add(var("i"), u32(1)), add(var("i"), u32(7)))})})
                        .build();
  auto pipeline = backend().compile(p);
  for (int rep = 0; rep < 20; ++rep) {
    const auto out = pipeline.dispatch(Inputs{}, Dim3{4, 1, 1}).get<uint8_t>("out");
    ASSERT_EQ(out.size(), 4u);
    EXPECT_TRUE(out[0] == 0x0f || out[0] == 0xf0 || out[0] == 0x33 || out[0] == 0xcc) << int{out[0]};
    EXPECT_EQ(out[1], 7);
    EXPECT_EQ(out[2], 8);
    EXPECT_EQ(out[3], 9);
  }
}

// Against loops written here in C++ over 64-bit integers: the sequence
// from, from+step, ... while below (above, for a negative step) the bound.
TEST(ConformanceConstructs, SteppedLoopsCountEitherWayAndNeverWrap) {
  const Scenario& s = scenario("stepped_loops");
  expect_gpu_equals_reference(s.program, s.inputs, s.options, s.grid);
  const auto out = backend().compile(s.program, s.options).dispatch(s.inputs, s.grid).get<uint32_t>("out");
  ASSERT_EQ(out.size(), 240u);
  for (int64_t i = 0; i < 40; ++i) {
    uint32_t up = 0;
    for (int64_t j = i; j < 3 * i + 10; j += 3) {
      if (j % 4 == 1) continue;
      if (j > 50) break;
      up += static_cast<uint32_t>(j);
    }
    int32_t down = 0;
    for (int64_t m = i; m > -20; m -= 2) down = static_cast<int32_t>(static_cast<uint32_t>(down) * 3u + static_cast<uint32_t>(m));
    uint32_t lim = 30, moved = 0;
    for (int64_t k = i % 5; k < lim; k += 2) --lim, ++moved;
    uint32_t t = 0;
    for (int64_t a = 0xfffffff0LL + i % 8; a < 0xffffffffLL; a += 7) t += 1;
    for (int64_t b = 1 + i % 3; b < 0xffffffffLL; b += 0x80000000LL) t += 100;
    uint32_t sc = 0;
    for (int64_t c = int64_t{INT32_MIN} + i % 8; c > INT32_MIN; c -= 4) sc += 1;
    for (int64_t d = int64_t{INT32_MAX} - i % 12; d < INT32_MAX; d += 5) sc += 100;
    for (int64_t g = 6; g > -1; g -= 2) sc += 10000;
    uint32_t e = 0;
    for (int64_t f = 5; f > i % 9; f -= 3) e = e * 10 + static_cast<uint32_t>(f);
    const uint32_t* got = &out[static_cast<size_t>(i) * 6];
    EXPECT_EQ(got[0], up) << i;
    EXPECT_EQ(got[1], static_cast<uint32_t>(down)) << i;
    EXPECT_EQ(got[2], moved) << i;
    EXPECT_EQ(got[3], t) << i;
    EXPECT_EQ(got[4], sc) << i;
    EXPECT_EQ(got[5], e) << i;
  }
}

// Against the same computations written here in C++ on plain arrays.
TEST(ConformanceConstructs, PrivateArraysHoldTilesWindowsAndSortNetworks) {
  const Scenario& s = scenario("private_arrays");
  expect_gpu_equals_reference(s.program, s.inputs, s.options, s.grid);
  const auto run = backend().compile(s.program, s.options).dispatch(s.inputs, s.grid);
  const auto a = input_values<float>(s.inputs, "a");
  const auto b = input_values<float>(s.inputs, "b");
  const auto x = input_values<int32_t>(s.inputs, "x");
  const auto tile = run.get<float>("tile");
  const auto window = run.get<float>("window");
  const auto sorted = run.get<int32_t>("sorted");
  const auto misc = run.get<uint32_t>("misc");
  const size_t n = window.size(), depth = 8;
  ASSERT_EQ(n, 48u);
  for (size_t i = 0; i < n; ++i) {
    for (size_t c = 0; c < 4; ++c) {
      float acc = 0;  // small integers: every sum is exact, in any order
      for (size_t k = 0; k < depth; ++k) acc += a[i * depth + k] * b[k * 4 + c];
      EXPECT_EQ(tile[i * 4 + c], acc) << i << "," << c;
    }
    EXPECT_EQ(window[i], a[i] + 2 * a[i + 1] + 3 * a[i + 2]) << i;
    std::vector<int32_t> v(x.begin() + static_cast<std::ptrdiff_t>(i * 4), x.begin() + static_cast<std::ptrdiff_t>(i * 4 + 4));
    std::sort(v.begin(), v.end());
    for (size_t k = 0; k < 4; ++k) EXPECT_EQ(sorted[i * 4 + k], v[k]) << i;
    EXPECT_EQ(misc[i * 3], 6u) << i;
    uint32_t c4[4] = {0, 0, 0, 0};
    c4[std::min<size_t>(i % 7, 3)] = static_cast<uint32_t>(i + 10);
    EXPECT_EQ(misc[i * 3 + 1], c4[3] * 1000 + c4[i % 4]) << i;
    // A store at -1 or 0, then a load at 0, -1 or -2: index -k means the last element.
    if (i % 2 == 0) c4[3] = 77; else c4[0] = 77;
    const size_t read = i % 3 == 0 ? 0 : 3;
    EXPECT_EQ(misc[i * 3 + 2], c4[read]) << i;
  }
}

TEST(ConformanceConstructs, ControlFlowOfEveryKind) {
  const Scenario& s = scenario("control_flow");
  expect_gpu_equals_reference(s.program, s.inputs, s.options, s.grid);
}

}  // namespace
