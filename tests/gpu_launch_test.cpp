// Launches (docs/gpu.md, "Launches"): the default grid only for a program
// proven element-wise over its first output, a launch domain (Inputs::dim)
// whose invocations beyond it have no effect on the GPU and on the reference
// alike, and messages in the caller's terms.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "support/gpu_test_support.hpp"
#include "support/test_support.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"
#include "vyre/lower.hpp"
#include "vyre/reference.hpp"

namespace vyre {
namespace {

using namespace vyre::build;
using vyre::test::contains;
using vyre::test::error_of;
using vyre::test::no_disk_cache;

gpu::Backend& backend() {
  static gpu::Backend b(no_disk_cache());
  return b;
}

// out[i] = x[i] * 2 under `i < len(guard)`.
CheckedProgram doubling(const std::string& guard) {
  return ProgramBuilder("double")
      .workgroup_size(64)
      .input("x", 0, ScalarType::U32)
      .output("out", 1, ScalarType::U32)
      .output("copy", 2, ScalarType::U32)
      .body({let("i", gid(Axis::X)),
             if_(lt(var("i"), len(guard)),
                 {store("out", var("i"), mul(load("x", var("i")), u32(2))), store("copy", var("i"), load("x", var("i")))})})
      .build();
}

// The newcomer's histogram: a one-dimensional workgroup over a 256-bin
// output, one invocation per byte wanted, no bounds check of its own.
CheckedProgram histogram() {
  return ProgramBuilder("histogram")
      .workgroup_size(64)
      .input("data", 0, ScalarType::U32)
      .output("bins", 1, ScalarType::U32, 256)
      .body({eval(atomic(AtomicOp::Add, "bins", bit_and(load("data", gid(Axis::X)), u32(255)), u32(1)))})
      .build();
}

// A 16x16 workgroup writing out[y * 37 + x] = y * 1000 + x with no check:
// an invocation past x = 36 would write into the next row.
CheckedProgram rows_of_37() {
  return ProgramBuilder("rows")
      .workgroup_size(16, 16)
      .output("out", 0, ScalarType::U32)
      .body({store("out", add(mul(gid(Axis::Y), u32(37)), gid(Axis::X)),
                   add(mul(gid(Axis::Y), u32(1000)), gid(Axis::X)))})
      .build();
}

std::vector<uint32_t> iota(uint32_t n) {
  std::vector<uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0u);
  return v;
}

TEST(Launch, AnElementWiseProgramKeepsTheDefaultGrid) {
  const CheckedProgram p = doubling("out");
  Inputs in;
  in.set<uint32_t>("x", iota(100)).size("out", 100).size("copy", 100);
  auto pipeline = backend().compile(p);
  gpu::DispatchReport report;
  const auto out = pipeline.dispatch(in, std::nullopt, &report).get<uint32_t>("out");
  EXPECT_EQ(report.grid, (Dim3{2, 1, 1}));
  for (uint32_t i = 0; i < 100; ++i) ASSERT_EQ(out[i], 2 * i);
  EXPECT_EQ(reference::run(p, in).get<uint32_t>("out"), out);
}

TEST(Launch, ADefaultGridThatStopsBeforeTheProgramsCheckIsRefused) {
  // The check runs to len(x) = 200, the first output has 100 elements: the
  // default grid would leave copy[100..199] undone.
  const CheckedProgram p = doubling("x");
  Inputs in;
  in.set<uint32_t>("x", iota(200)).size("out", 100).size("copy", 200);
  const std::string why = error_of(ErrorKind::invalid_input, [&] { backend().compile(p).dispatch(in); });
  EXPECT_TRUE(contains(why, "len(x)")) << why;
  EXPECT_TRUE(contains(why, "Inputs::dim")) << why;
  EXPECT_TRUE(contains(error_of(ErrorKind::invalid_input, [&] { reference::run(p, in); }), "Inputs::dim"));
  // With a domain it runs every invocation it needs.
  in.dim(200);
  const auto copy = backend().compile(p).dispatch(in).get<uint32_t>("copy");
  EXPECT_EQ(copy, iota(200));
}

TEST(Launch, TheNewcomersHistogramIsRefusedWithoutALaunchAndCountsEveryByteWithOne) {
  const CheckedProgram p = histogram();
  const uint32_t n = 1 << 20;
  std::vector<uint32_t> data(n);
  for (uint32_t i = 0; i < n; ++i) data[i] = i * 7919u;
  Inputs in;
  in.set<uint32_t>("data", data);
  const std::string why = error_of(ErrorKind::invalid_input, [&] { backend().compile(p).dispatch(in); });
  EXPECT_TRUE(contains(why, "does not start with `let i = gid.x`")) << why;
  EXPECT_TRUE(contains(why, "neither a launch domain nor a grid")) << why;

  // A domain that is not a multiple of the workgroup: the invocations past
  // it would read a clamped element and count it again without the guard.
  in.set<uint32_t>("data", std::vector<uint32_t>(data.begin(), data.begin() + 1000)).dim(1000);
  const auto bins = backend().compile(p).dispatch(in).get<uint32_t>("bins");
  EXPECT_EQ(std::accumulate(bins.begin(), bins.end(), 0u), 1000u);
  EXPECT_EQ(reference::run(p, in).get<uint32_t>("bins"), bins);
}

TEST(Launch, ATwoDimensionalDomainLeavesNoInvocationOutsideItAnEffect) {
  const CheckedProgram p = rows_of_37();
  Inputs in;
  in.set<uint32_t>("out", std::vector<uint32_t>(37 * 21, 7));
  EXPECT_TRUE(contains(error_of(ErrorKind::invalid_input, [&] { backend().compile(p).dispatch(in); }),
                       "not one-dimensional"));
  in.dim({37, 21, 1});
  gpu::DispatchReport report;
  const auto out = backend().compile(p).dispatch(in, std::nullopt, &report).get<uint32_t>("out");
  EXPECT_EQ(report.grid, (Dim3{3, 2, 1}));
  for (uint32_t y = 0; y < 21; ++y)
    for (uint32_t x = 0; x < 37; ++x) ASSERT_EQ(out[y * 37 + x], y * 1000 + x) << x << "," << y;
  EXPECT_EQ(reference::run(p, in).get<uint32_t>("out"), out);
}

TEST(Launch, TheGuardIsItsOwnShaderAndCacheEntry) {
  const CheckedProgram p = rows_of_37();
  ShaderOptions guarded;
  guarded.domain_guard = true;
  EXPECT_EQ(shaping_signature(p, guarded), "domain_guard");
  EXPECT_NE(lower_to_wgsl(p, guarded), lower_to_wgsl(p));
  EXPECT_TRUE(contains(lower_to_wgsl(p, guarded), "if (vyre_in_domain)"));
  guarded.vector_width = 4;
  EXPECT_THROW(shader_interface(p, guarded), Error);

  // One Pipeline takes dispatches with and without a domain: the other
  // shader is compiled at the first dispatch that needs it.
  auto pipeline = backend().compile(doubling("out"));
  Inputs in;
  in.set<uint32_t>("x", iota(10)).size("out", 10).size("copy", 10);
  EXPECT_EQ(pipeline.dispatch(in).get<uint32_t>("copy"), iota(10));
  EXPECT_EQ(pipeline.compile_reports().size(), 1u);
  in.dim(10);
  EXPECT_EQ(pipeline.dispatch(in).get<uint32_t>("copy"), iota(10));
  EXPECT_EQ(pipeline.compile_reports().size(), 2u);
}

TEST(Launch, ADomainAndAGridTogetherAreRefused) {
  Inputs in;
  in.set<uint32_t>("x", iota(10)).size("out", 10).size("copy", 10).dim(10);
  EXPECT_TRUE(contains(error_of(ErrorKind::invalid_input,
                                [&] { backend().compile(doubling("out")).dispatch(in, Dim3{1, 1, 1}); }),
                       "both a launch domain and a grid"));
}

TEST(Launch, MessagesNameWhatTheCallerCanGive) {
  const CheckedProgram p = histogram();
  Inputs in;
  in.set<uint32_t>("data", iota(10));
  auto message = [&] { return error_of(ErrorKind::invalid_input, [&] { reference::run(p, in); }); };
  EXPECT_TRUE(contains(message(), "Inputs::dim"));
  set_caller_language(CallerLanguage::python);
  EXPECT_TRUE(contains(message(), "dim= (the invocations to run"));
  set_caller_language(CallerLanguage::cli);
  EXPECT_TRUE(contains(message(), "--dim X[,Y,Z]"));
  set_caller_language(CallerLanguage::cpp);
}

}  // namespace
}  // namespace vyre
