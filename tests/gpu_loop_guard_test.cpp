// The loop guard: lavapipe ends an invocation's loops after 65,535
// iterations in all and returned wrong values silently (70,000 iterations
// gave 65,535). On such an adapter every program with loops runs guarded: a
// loop cut short fails the dispatch; loops that end by their condition, a
// break or a return give the reference's results. On other adapters the
// guard is off and the shader is the plain one.
#include <gtest/gtest.h>

#include "gpu/driver_defects.hpp"
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

// x counts the iterations of `loops` loops of `n` each, one after another.
CheckedProgram counting(uint32_t n, int loops = 1) {
  std::vector<Stmt> body = {let("x", u32(0))};
  for (int k = 0; k < loops; ++k)
    body.push_back(loop("k" + std::to_string(k), u32(0), u32(n), {assign("x", add(var("x"), u32(1)))}));
  body.push_back(store("out", u32(0), var("x")));
  return ProgramBuilder("counting").output("out", 0, ScalarType::U32, 1).body(body).build();
}

CheckedProgram nested(uint32_t outer, uint32_t inner) {
  return ProgramBuilder("nested")
      .output("out", 0, ScalarType::U32, 1)
      .body({let("x", u32(0)),
             loop("i", u32(0), u32(outer), {loop("j", u32(0), u32(inner), {assign("x", add(var("x"), u32(1)))})}),
             store("out", u32(0), var("x"))})
      .build();
}

// while (true) { x += 1; if (x == n) break; }
CheckedProgram until(uint32_t n) {
  return ProgramBuilder("until")
      .output("out", 0, ScalarType::U32, 1)
      .body({let("x", u32(0)),
             while_(boolean(true), {assign("x", add(var("x"), u32(1))), if_(eq(var("x"), u32(n)), {break_()})}),
             store("out", u32(0), var("x"))})
      .build();
}

bool guarded_here() { return gpu::stops_long_loops(backend().adapter()); }

uint32_t run_on_gpu(const CheckedProgram& p) { return backend().compile(p).dispatch(Inputs{}, Dim3{1, 1, 1}).get<uint32_t>("out")[0]; }

TEST(LoopGuard, LoopsThatEndThemselvesGiveTheReferencesResults) {
  for (const CheckedProgram& p : {counting(60'000), counting(20'000, 3), nested(200, 300), until(50'000), until(1)}) {
    const uint32_t want = reference::run(p, Inputs{}, {}, Dim3{1, 1, 1}).get<uint32_t>("out")[0];
    EXPECT_EQ(run_on_gpu(p), want);
  }
}

TEST(LoopGuard, ALoopTheDriverCutsShortFailsTheDispatchInsteadOfAWrongValue) {
  if (!guarded_here()) GTEST_SKIP() << "'" << backend().adapter().name << "' runs long loops to the end";
  for (const CheckedProgram& p : {counting(70'000), counting(30'000, 3), nested(300, 300), until(200'000)}) {
    SCOPED_TRACE(p.name());
    EXPECT_EQ(reference::run(p, Inputs{}, {}, Dim3{1, 1, 1}).get<uint32_t>("out")[0] > 65'535u, true);
    const std::string message = error_of(ErrorKind::limit_exceeded, [&] { run_on_gpu(p); });
    EXPECT_TRUE(contains(message, "ended a loop before its condition or a break did")) << message;
    EXPECT_TRUE(contains(message, backend().adapter().name)) << message;
  }
  // The pipeline stays usable.
  EXPECT_EQ(run_on_gpu(counting(1000)), 1000u);
}

TEST(LoopGuard, EveryDispatchFormChecksTheGuard) {
  if (!guarded_here()) GTEST_SKIP() << "'" << backend().adapter().name << "' runs long loops to the end";
  gpu::Pipeline pipeline = backend().compile(counting(70'000));
  std::vector<uint32_t> out(1);
  OutputViews views;
  views.view<uint32_t>("out", out);
  error_of(ErrorKind::limit_exceeded, [&] { pipeline.dispatch_into(Inputs{}, views, Dim3{1, 1, 1}); });
  error_of(ErrorKind::limit_exceeded, [&] { pipeline.dispatch_resident(Inputs{}, Dim3{1, 1, 1}); });
  gpu::Batch batch(backend());
  batch.dispatch_into(pipeline, Inputs{}, views, Dim3{1, 1, 1});
  error_of(ErrorKind::limit_exceeded, [&] { batch.run(); });
}

TEST(LoopGuard, OnlyProgramsWithLoopsOnAffectedAdaptersAreShapedByIt) {
  ShaderOptions guard;
  guard.loop_guard = true;
  const CheckedProgram loops = counting(10);
  const CheckedProgram straight = ProgramBuilder("straight").output("out", 0, ScalarType::U32, 1).body({store("out", u32(0), u32(1))}).build();
  EXPECT_EQ(shaping_signature(loops, guard), "loop_guard");
  EXPECT_EQ(shaping_signature(straight, guard), "");
  EXPECT_EQ(lower_to_wgsl(straight, guard), lower_to_wgsl(straight));
  const ShaderSpec spec = lower(loops, guard);
  EXPECT_TRUE(spec.interface.loop_guard);
  EXPECT_TRUE(contains(spec.wgsl, "@group(1) @binding(1) var<storage, read_write> vyre_loop_guard: array<atomic<u32>, 1>;"))
      << spec.wgsl;
  EXPECT_TRUE(contains(spec.wgsl, "if (!vyre_done_0) { atomicStore(&vyre_loop_guard[0], 1u); }")) << spec.wgsl;
  EXPECT_FALSE(contains(lower_to_wgsl(loops), "vyre_loop_guard"));
  // The Backend turns it on exactly for the adapters with the defect.
  const bool guarded = backend().compile(loops).interface().loop_guard;
  EXPECT_EQ(guarded, guarded_here());
  gpu::AdapterInfo other;
  other.name = "NVIDIA H200";
  EXPECT_FALSE(gpu::with_driver_workarounds({}, other).loop_guard);
  other.name = "llvmpipe (LLVM 15.0.6, 256 bits)";
  EXPECT_TRUE(gpu::with_driver_workarounds({}, other).loop_guard);
}

}  // namespace
}  // namespace vyre
