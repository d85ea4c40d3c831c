// plan_dispatch: which inputs a dispatch accepts, the buffer sizes and the grid.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>
#include <string>
#include <vector>

#include "dispatch/plan.hpp"
#include "support/test_support.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"

namespace vyre {
namespace {

using namespace build;

// Bodies matter to planning only through the default grid, which an
// element-wise body (`let i = gid.x; if (i < len(out)) { out[i] = ... }`) may take.
std::vector<Stmt> element_wise(const std::string& out) {
  return {let("i", gid(Axis::X)), if_(lt(var("i"), len(out)), {store(out, var("i"), u32(1))})};
}

Program xor_program() {
  return ProgramBuilder("xor")
      .workgroup_size(64)
      .output("out", 2, ScalarType::U32)  // declared first, bound last
      .input("a", 0, ScalarType::U32)
      .input("b", 1, ScalarType::U32)
      .workgroup_buffer("tile", ScalarType::U32, 64)
      .body(element_wise("out"))
      .unchecked();
}

std::vector<uint8_t> words(std::initializer_list<uint32_t> values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.begin(), bytes.size());
  return bytes;
}

// Runs `f` and returns the invalid_input message it throws ("" and a failure otherwise).
template <class F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_input) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected Error(invalid_input)";
  return {};
}

using vyre::test::contains;

TEST(DispatchPlan, BuffersComeInBindingOrderWithTheirContentsAndWorkgroupBuffersLeftOut) {
  const CheckedProgram p = xor_program();
  Inputs in;
  in.set<uint32_t>("b", {4, 5, 6}).set<uint32_t>(0u, {1, 2, 3}).size("out", 3);
  const DispatchPlan plan = plan_dispatch(p, {}, in);
  ASSERT_EQ(plan.buffers.size(), 3u);
  EXPECT_EQ(plan.buffers[0].buffer->name, "a");
  EXPECT_EQ(plan.buffers[1].buffer->name, "b");
  EXPECT_EQ(plan.buffers[2].buffer->name, "out");
  for (const auto& b : plan.buffers) EXPECT_EQ(b.elements, 3u);
  EXPECT_EQ(std::vector<uint8_t>(plan.buffers[0].initial.begin(), plan.buffers[0].initial.end()), words({1, 2, 3}));
  EXPECT_TRUE(plan.buffers[2].initial.empty());  // zero-filled
  EXPECT_EQ(plan.workgroup_size, (Dim3{64, 1, 1}));
}

TEST(DispatchPlan, BorrowedContentsAreUsedInPlace) {
  const CheckedProgram p = xor_program();
  const std::vector<uint8_t> a = words({7, 8});
  Inputs in;
  in.view("a", a).set<uint32_t>("b", {1, 1}).size("out", 2);
  const DispatchPlan plan = plan_dispatch(p, {}, in);
  EXPECT_EQ(plan.buffers[0].initial.data(), a.data());
  EXPECT_EQ(plan.buffers[0].elements, 2u);
}

TEST(DispatchPlan, UnknownNameIsRefusedListingTheProgramsBuffers) {
  Inputs in;
  in.set<uint32_t>("c", {1});
  const std::string msg = refusal([&] { plan_dispatch(xor_program(), {}, in); });
  EXPECT_TRUE(contains(msg, "no buffer named 'c'")) << msg;
  EXPECT_TRUE(contains(msg, "'a' (binding 0, read u32)")) << msg;
  EXPECT_TRUE(contains(msg, "'out' (binding 2, read_write u32, output)")) << msg;
}

TEST(DispatchPlan, UnknownBindingIsRefused) {
  Inputs in;
  in.set<uint32_t>(7u, {1});
  EXPECT_TRUE(contains(refusal([&] { plan_dispatch(xor_program(), {}, in); }), "no buffer at binding 7"));
}

TEST(DispatchPlan, WorkgroupBufferTakesNoInput) {
  Inputs in;
  in.set<uint32_t>("tile", {1});
  EXPECT_TRUE(contains(refusal([&] { plan_dispatch(xor_program(), {}, in); }), "'tile' is a workgroup buffer"));
}

TEST(DispatchPlan, TheSameBufferByNameAndByBindingIsRefused) {
  Inputs in;
  in.set<uint32_t>("a", {1}).set<uint32_t>(0u, {2}).set<uint32_t>("b", {1}).size("out", 1);
  EXPECT_TRUE(contains(refusal([&] { plan_dispatch(xor_program(), {}, in); }), "given twice"));
}

TEST(DispatchPlan, ByteLengthMustBeAMultipleOfFour) {
  Inputs in;
  in.bytes("a", {1, 2, 3, 4, 5, 6}).set<uint32_t>("b", {1}).size("out", 1);
  const std::string msg = refusal([&] { plan_dispatch(xor_program(), {}, in); });
  EXPECT_TRUE(contains(msg, "'a'")) << msg;
  EXPECT_TRUE(contains(msg, "6 bytes")) << msg;
}

TEST(DispatchPlan, FixedCountBuffersTakeExactlyTheirCount) {
  const CheckedProgram p = ProgramBuilder("fixed")
                        .input("table", 0, ScalarType::F32, 4)
                        .output("out", 1, ScalarType::U32, 8)
                        .body(element_wise("out"))
                        .unchecked();
  Inputs short_table;
  short_table.set<float>("table", {1, 2, 3});
  EXPECT_TRUE(contains(refusal([&] { plan_dispatch(p, {}, short_table); }), "fixes 4"));

  Inputs wrong_size;
  wrong_size.set<float>("table", {1, 2, 3, 4}).size("out", 7);
  EXPECT_TRUE(contains(refusal([&] { plan_dispatch(p, {}, wrong_size); }), "fixes its count at 8"));

  Inputs right;
  right.set<float>("table", {1, 2, 3, 4});
  const DispatchPlan plan = plan_dispatch(p, {}, right);
  EXPECT_EQ(plan.buffers[0].elements, 4u);
  EXPECT_EQ(plan.buffers[1].elements, 8u);  // fixed read_write: zero-filled, no input needed
  EXPECT_TRUE(plan.buffers[1].initial.empty());
  EXPECT_EQ(plan.grid, (Dim3{8, 1, 1}));  // workgroup size 1

  Inputs matching_size;
  matching_size.set<float>("table", {1, 2, 3, 4}).size("out", 8);
  EXPECT_EQ(plan_dispatch(p, {}, matching_size).buffers[1].elements, 8u);
}

TEST(DispatchPlan, ReadAndUniformBuffersNeedContents) {
  const CheckedProgram p = ProgramBuilder("u")
                        .input("a", 0, ScalarType::U32)
                        .uniform("params", 1, ScalarType::F32, 2)
                        .output("out", 2, ScalarType::U32)
                        .unchecked();
  Inputs missing_a;
  missing_a.set<float>("params", {1, 2}).size("out", 1);
  EXPECT_TRUE(contains(refusal([&] { plan_dispatch(p, {}, missing_a); }), "missing input for 'a'"));

  Inputs sized_a;
  sized_a.size("a", 4).set<float>("params", {1, 2}).size("out", 1);
  EXPECT_TRUE(contains(refusal([&] { plan_dispatch(p, {}, sized_a); }), "a size alone is not enough for 'a'"));

  Inputs missing_uniform;
  missing_uniform.set<uint32_t>("a", {1}).size("out", 1);
  EXPECT_TRUE(contains(refusal([&] { plan_dispatch(p, {}, missing_uniform); }), "missing input for 'params'"));
}

TEST(DispatchPlan, RuntimeSizedReadWriteBufferNeedsALength) {
  Inputs in;
  in.set<uint32_t>("a", {1}).set<uint32_t>("b", {1});
  EXPECT_EQ(refusal([&] { plan_dispatch(xor_program(), {}, in); }),
            "runtime-sized output 'out' needs a length: give its contents or a size (Inputs::size(\"out\", n))");

  const Program scratch = ProgramBuilder("s").storage("tmp", 0, ScalarType::U32).unchecked();
  EXPECT_TRUE(contains(refusal([&] { plan_dispatch(scratch, {}, Inputs{}, Dim3{1, 1, 1}); }),
                       "runtime-sized buffer 'tmp' needs a length"));
}

TEST(DispatchPlan, OutputsMayStartFromGivenContents) {
  Inputs in;
  in.set<uint32_t>("a", {1, 2}).set<uint32_t>("b", {3, 4}).set<uint32_t>("out", {9, 9});
  const DispatchPlan plan = plan_dispatch(xor_program(), {}, in);
  EXPECT_EQ(plan.buffers[2].elements, 2u);
  EXPECT_EQ(plan.buffers[2].initial.size(), 8u);
}

TEST(DispatchPlan, MoreThanFourBillionElementsIsRefused) {
  // Address space only: the planner reads the length, never the bytes.
  const size_t bytes = (size_t{1} << 34) + 4;  // 2^32 + 1 elements
  void* region = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(region, MAP_FAILED);
  Inputs in;
  in.view("a", std::span<const uint8_t>(static_cast<const uint8_t*>(region), bytes))
      .set<uint32_t>("b", {1})
      .size("out", 1);
  const std::string msg = refusal([&] { plan_dispatch(xor_program(), {}, in); });
  munmap(region, bytes);
  EXPECT_TRUE(contains(msg, "4294967297 elements")) << msg;
}

TEST(DispatchPlan, GridComesFromTheLaunchThenTheFirstOutput) {
  Inputs in;
  in.set<uint32_t>("a", {1}).set<uint32_t>("b", {1}).size("out", 130);
  EXPECT_EQ(plan_dispatch(xor_program(), {}, in).grid, (Dim3{3, 1, 1}));  // ceil(130 / 64)
  ShaderOptions options;
  options.workgroup_override = Dim3{128, 1, 1};
  EXPECT_EQ(plan_dispatch(xor_program(), options, in).grid, (Dim3{2, 1, 1}));
  EXPECT_EQ(plan_dispatch(xor_program(), options, in).workgroup_size, (Dim3{128, 1, 1}));
  EXPECT_EQ(plan_dispatch(xor_program(), options, in, Dim3{5, 6, 7}).grid, (Dim3{5, 6, 7}));
  EXPECT_EQ(plan_dispatch(xor_program(), options, in, Dim3{1, 2, 3}).grid, (Dim3{1, 2, 3}));
}

TEST(DispatchPlan, GridFollowsTheFirstOutputByBindingNotByDeclaration) {
  const CheckedProgram p = ProgramBuilder("two")
                        .workgroup_size(4)
                        .output("late", 5, ScalarType::U32)
                        .output("early", 1, ScalarType::U32)
                        .body(element_wise("early"))
                        .unchecked();
  Inputs in;
  in.size("late", 100).size("early", 9);
  EXPECT_EQ(plan_dispatch(p, {}, in).grid, (Dim3{3, 1, 1}));
}

TEST(DispatchPlan, AnEmptyOutputGivesAnEmptyGrid) {
  Inputs in;
  in.set<uint32_t>("a", {}).set<uint32_t>("b", {}).size("out", 0);
  const DispatchPlan plan = plan_dispatch(xor_program(), {}, in);
  EXPECT_EQ(plan.grid, (Dim3{0, 1, 1}));
  EXPECT_EQ(plan.buffers[2].elements, 0u);
}

TEST(DispatchPlan, NoOutputAndNoGridAsksForAGrid) {
  const CheckedProgram p = ProgramBuilder("sink").input("a", 0, ScalarType::U32).unchecked();
  Inputs in;
  in.set<uint32_t>("a", {1});
  EXPECT_TRUE(contains(refusal([&] { plan_dispatch(p, {}, in); }), "no output buffer to size a default grid from"));
  EXPECT_EQ(plan_dispatch(p, {}, in, Dim3{2, 1, 1}).grid, (Dim3{2, 1, 1}));
}

TEST(DispatchPlan, ZeroWorkgroupOverrideIsRefused) {
  Inputs in;
  in.set<uint32_t>("a", {1}).set<uint32_t>("b", {1}).size("out", 1);
  ShaderOptions options;
  options.workgroup_override = Dim3{0, 1, 1};
  EXPECT_TRUE(contains(refusal([&] { plan_dispatch(xor_program(), options, in); }), "zero component"));
}

}  // namespace
}  // namespace vyre

namespace vyre {
namespace {

// lavapipe counts workgroups in 32 bits: 65535^3 gave [0] for max(wid.z).
TEST(DispatchPlan, AGridOfTwoToThe32WorkgroupsOrMoreIsRefused) {
  Inputs in;
  in.set<uint32_t>("a", {1}).set<uint32_t>("b", {1}).size("out", 1);
  const std::string message =
      refusal([&] { plan_dispatch(xor_program(), {}, in, Dim3{65535, 65535, 65535}); });
  EXPECT_TRUE(contains(message, "more than 4294967295 workgroups")) << message;
  EXPECT_TRUE(contains(refusal([&] { plan_dispatch(xor_program(), {}, in, Dim3{65536, 65536, 1}); }),
                       "more than 4294967295"));
  // Up to 2^32 - 1 they plan (no device here: the limits per axis are the GPU's to check).
  EXPECT_EQ(plan_dispatch(xor_program(), {}, in, Dim3{65535, 65537, 1}).grid, (Dim3{65535, 65537, 1}));
  EXPECT_EQ(plan_dispatch(xor_program(), {}, in, Dim3{0, 65535, 65535}).grid, (Dim3{0, 65535, 65535}));
}

// ---- launches: the default grid's proof, and the domain --------------------------

CheckedProgram with_body(std::vector<Stmt> body, uint32_t wg_x = 64, uint32_t wg_y = 1) {
  return ProgramBuilder("p")
      .workgroup_size(wg_x, wg_y)
      .input("a", 0, ScalarType::U32)
      .output("out", 1, ScalarType::U32)
      .storage("hist", 2, ScalarType::U32, 4)
      .body(std::move(body))
      .build();
}

std::string default_grid_refusal(const CheckedProgram& p) {
  Inputs in;
  in.set<uint32_t>("a", {1, 2, 3}).size("out", 3);
  return refusal([&] { plan_dispatch(p, {}, in); });
}

TEST(DispatchPlan, TheDefaultGridTakesOnlyProgramsProvenElementWise) {
  Inputs in;
  in.set<uint32_t>("a", {1, 2, 3}).size("out", 3);
  // The early-return form of the check (examples/collatz.json's) is proven too.
  const auto early_return = with_body({let("i", gid(Axis::X)), if_(ge(var("i"), len("out")), {return_()}),
                                       store("out", var("i"), load("a", var("i")))});
  EXPECT_EQ(plan_dispatch(early_return, {}, in).grid, (Dim3{1, 1, 1}));

  EXPECT_TRUE(contains(default_grid_refusal(with_body({store("out", gid(Axis::X), u32(1))})),
                       "does not start with `let i = gid.x`"));
  EXPECT_TRUE(contains(default_grid_refusal(with_body({let("i", gid(Axis::X)), store("out", var("i"), u32(1))})),
                       "is not inside a check"));
  EXPECT_TRUE(contains(default_grid_refusal(with_body({let("i", gid(Axis::X)),
                                                       if_(lt(var("i"), len("out")),
                                                           {store("out", add(var("i"), u32(1)), u32(1))})})),
                       "at an index other than its invocation's own"));
  EXPECT_TRUE(contains(default_grid_refusal(with_body({let("i", gid(Axis::X)),
                                                       if_(lt(var("i"), len("out")),
                                                           {eval(atomic(AtomicOp::Add, "hist", u32(0), u32(1)))})})),
                       "atomics"));
  EXPECT_TRUE(contains(default_grid_refusal(with_body({let("i", gid(Axis::X)),
                                                       if_(lt(var("i"), len("out")), {store("out", var("i"), u32(1))})},
                                                      8, 8)),
                       "not one-dimensional"));
  const auto reassigned = with_body({let("i", gid(Axis::X)), assign("i", add(var("i"), u32(1))),
                                     if_(lt(var("i"), len("out")), {store("out", var("i"), u32(1))})});
  EXPECT_TRUE(contains(default_grid_refusal(reassigned), "does not start with `let i = gid.x`"));
  // A refusal says what to give instead.
  EXPECT_TRUE(contains(default_grid_refusal(reassigned), "Inputs::dim"));
}

TEST(DispatchPlan, ADomainGivesTheGridAndADeclaredOneIsTheDefault) {
  Inputs in;
  in.set<uint32_t>("a", {1, 2, 3}).size("out", 300).dim({100, 7, 1});
  const auto p = with_body({store("out", gid(Axis::X), u32(1))}, 16, 4);
  const DispatchPlan plan = plan_dispatch(p, {}, in);
  EXPECT_EQ(plan.grid, (Dim3{7, 2, 1}));
  EXPECT_EQ(plan.domain, (Dim3{100, 7, 1}));
  EXPECT_TRUE(contains(refusal([&] { plan_dispatch(p, {}, in, Dim3{1, 1, 1}); }), "both a launch domain and a grid"));
  in.dim(std::nullopt);
  EXPECT_FALSE(plan_dispatch(p, {}, in, Dim3{1, 1, 1}).domain.has_value());

  Program declared = p.program();
  declared.domain = "out";
  const CheckedProgram v2 = declared;
  const DispatchPlan own = plan_dispatch(v2, {}, in);
  EXPECT_EQ(own.domain, (Dim3{300, 1, 1}));
  EXPECT_EQ(own.grid, (Dim3{19, 1, 1}));
  EXPECT_FALSE(plan_dispatch(v2, {}, in, Dim3{2, 1, 1}).domain.has_value()) << "a grid given takes precedence";
}

}  // namespace
}  // namespace vyre
