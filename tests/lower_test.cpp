// WGSL lowering: the text's shape, its determinism, what shapes it, and the
// binding interface. (That wgpu-native accepts every lowered program is
// tested in gpu_lowering_test.cpp, on a real device.)
#include <gtest/gtest.h>

#include <limits>

#include "support/programs.hpp"
#include "support/test_support.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"
#include "vyre/lower.hpp"
#include "vyre/wire.hpp"

using namespace vyre;
using namespace vyre::build;

namespace {
using vyre::test::contains;
}  // namespace

TEST(Lower, XorLooksLikeTheHandWrittenShader) {
  const std::string wgsl = lower_to_wgsl(vyre::test::xor_program());
  EXPECT_TRUE(contains(wgsl, "@group(0) @binding(0) var<storage, read> b_a: array<u32>;")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "@group(0) @binding(2) var<storage, read_write> b_out: array<u32>;")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "@compute @workgroup_size(64, 1, 1)")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "@builtin(global_invocation_id) vyre_gid: vec3<u32>")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "b_out[l_i] = (b_a[l_i] ^ b_b[l_i]);")) << wgsl;
  // len(out) of a runtime-sized buffer comes from the lengths uniform.
  EXPECT_TRUE(contains(wgsl, "@group(1) @binding(0) var<uniform> vyre_lengths: array<vec4<u32>, 1>;")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "(l_i < vyre_lengths[0].x)")) << wgsl;
}

TEST(Lower, IsDeterministicAndIgnoresDeclarationOrderAndName) {
  Program a = vyre::test::every_construct_program();
  Program b = a;
  std::reverse(b.buffers.begin(), b.buffers.end());
  b.name = "renamed";
  EXPECT_EQ(lower_to_wgsl(a), lower_to_wgsl(a));
  EXPECT_EQ(lower_to_wgsl(a), lower_to_wgsl(b));
}

TEST(Lower, WorkgroupOverrideShapesTheText) {
  const Program p = vyre::test::xor_program();
  ShaderOptions c;
  c.workgroup_override = Dim3{128, 1, 1};
  const std::string wgsl = lower_to_wgsl(p, c);
  EXPECT_TRUE(contains(wgsl, "@workgroup_size(128, 1, 1)")) << wgsl;
  EXPECT_NE(wgsl, lower_to_wgsl(p));
  c.workgroup_override = Dim3{0, 1, 1};
  EXPECT_THROW(lower_to_wgsl(p, c), Error);
  c.workgroup_override = Dim3{1024, 2, 1};
  EXPECT_THROW(lower_to_wgsl(p, c), Error);
}

TEST(Lower, ShapingSignatureNamesExactlyWhatChangesTheText) {
  const Program p = vyre::test::xor_program();
  ShaderOptions none;
  EXPECT_EQ(shaping_signature(p, none), "");
  // An override equal to the program's own size changes nothing.
  ShaderOptions same;
  same.workgroup_override = p.workgroup_size;
  EXPECT_EQ(shaping_signature(p, same), "");
  EXPECT_EQ(lower_to_wgsl(p, same), lower_to_wgsl(p, none));
  // The grid never shapes the shader: it is no ShaderOptions field, only a
  // dispatch's argument.
  // A real override does, and the signature says so.
  ShaderOptions other;
  other.workgroup_override = Dim3{32, 2, 1};
  EXPECT_EQ(shaping_signature(p, other), "workgroup=32,2,1");
  EXPECT_NE(lower_to_wgsl(p, other), lower_to_wgsl(p, none));
  // This lowering has no approximate transcendentals: a ULP budget changes nothing.
  ShaderOptions ulp;
  ulp.ulp_budget = 4;
  const Program q = vyre::test::every_construct_program();
  EXPECT_EQ(shaping_signature(q, ulp), shaping_signature(q, none));
  EXPECT_EQ(lower_to_wgsl(q, ulp), lower_to_wgsl(q, none));
}

TEST(Lower, IntegerDivisionAndCastsUseTheFormatsSemantics) {
  const std::string wgsl = lower_to_wgsl(vyre::test::every_construct_program());
  for (const char* helper : {"fn vyre_div_u32", "fn vyre_rem_u32", "fn vyre_div_i32", "fn vyre_rem_i32",
                             "fn vyre_f32_to_u32", "fn vyre_f32_to_i32"})
    EXPECT_TRUE(contains(wgsl, helper)) << helper << "\n" << wgsl;
  EXPECT_TRUE(contains(wgsl, "<< (3u & 31u)") || contains(wgsl, "<< (33u & 31u)")) << wgsl;
  // Only what is used is emitted.
  const std::string xor_wgsl = lower_to_wgsl(vyre::test::xor_program());
  EXPECT_FALSE(contains(xor_wgsl, "vyre_div")) << xor_wgsl;
}

// naga turns a signed `%` into OpSRem, which Vulkan leaves undefined for
// negative operands (NVIDIA computes the unsigned remainder): the signed
// remainder is built from the truncating division instead.
TEST(Lower, SignedRemainderNeverUsesTheRemainderOperator) {
  const std::string wgsl = lower_to_wgsl(vyre::test::every_construct_program());
  const size_t start = wgsl.find("fn vyre_rem_i32");
  ASSERT_NE(start, std::string::npos) << wgsl;
  const std::string helper = wgsl.substr(start, wgsl.find("\n}\n", start) - start);
  EXPECT_FALSE(contains(helper, "%")) << helper;
  EXPECT_TRUE(contains(helper, "a - (a / b) * b")) << helper;
}

// The lowering's own rule for what the passes leave unfolded (or all of it,
// with the passes off): constants reach WGSL only as literals.
TEST(Lower, ConstantExpressionsAreNeverLeftForShaderCreation) {
  ShaderOptions no_passes;
  no_passes.passes = false;
  for (const Program& p : vyre::test::constant_hazard_programs()) {
    const std::string wgsl = lower_to_wgsl(p, no_passes);
    // Every operator on constants has its constants passed through a call.
    if (p.name == "u32_add_overflow") {
      EXPECT_TRUE(contains(wgsl, "(vyre_opaque_u32(4294967295u) + vyre_opaque_u32(1u))")) << wgsl;
    }
    if (p.name == "i32_min_literal") {
      EXPECT_TRUE(contains(wgsl, "i32(-2147483648)")) << wgsl;
    }
    if (p.name == "f32_inf_literal") {
      EXPECT_TRUE(contains(wgsl, "vyre_f32_bits(0x7f800000u)")) << wgsl;
    }
    if (p.name == "const_index_out_of_range") {
      EXPECT_TRUE(contains(wgsl, "b_w[vyre_opaque_u32(9u)]")) << wgsl;
      EXPECT_TRUE(contains(wgsl, "b_w[vyre_opaque_i32((-1i))]")) << wgsl;
      EXPECT_TRUE(contains(wgsl, "b_out[vyre_opaque_u32(7u)]")) << wgsl;
    }
    if (p.name == "const_index_huge_runtime") {
      EXPECT_TRUE(contains(wgsl, "b_out[vyre_opaque_u32(4294967295u)]")) << wgsl;
      EXPECT_TRUE(contains(wgsl, "b_out[vyre_opaque_u32(2147483648u)]")) << wgsl;
      EXPECT_TRUE(contains(wgsl, "b_out[2147483647i]") || contains(wgsl, "b_out[vyre_opaque_i32(2147483647i)]"))
          << wgsl;
    }
  }
}

TEST(Lower, TheLargestFiniteF32IsSpelledExactly) {
  // Its shortest decimal, 3.4028235e+38, lies past it: WGSL refuses that literal.
  const Program p = ProgramBuilder()
                        .output("y", 0, ScalarType::F32, 1)
                        .body({store("y", u32(0), add(load("y", u32(0)), f32(-std::numeric_limits<float>::max())))})
                        .build();
  const std::string wgsl = lower_to_wgsl(p);
  EXPECT_TRUE(contains(wgsl, "(-0x1.fffffep+127f)")) << wgsl;
  EXPECT_FALSE(contains(wgsl, "3.4028235e+38")) << wgsl;
}

TEST(Lower, UniformArraysArePackedFourToARow) {
  const Program p = ProgramBuilder()
                        .uniform("u", 0, ScalarType::F32, 5)
                        .output("out", 1, ScalarType::F32)
                        .body({store("out", u32(0), load("u", u32(4)))})
                        .build();
  const std::string wgsl = lower_to_wgsl(p);
  EXPECT_TRUE(contains(wgsl, "var<uniform> b_u: array<vec4<f32>, 2>;")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "return b_u[i / 4u][i % 4u];")) << wgsl;
  const ShaderInterface iface = shader_interface(p);
  ASSERT_EQ(iface.bindings.size(), 2u);
  EXPECT_EQ(iface.bindings[0].kind, BindingKind::Uniform);
  EXPECT_EQ(iface.bindings[0].binding_bytes(5), 32u);
  EXPECT_EQ(iface.bindings[1].binding_bytes(5), 20u);
}

TEST(Lower, AtomicBuffersAreAtomicEverywhere) {
  const Program p = ProgramBuilder()
                        .output("h", 0, ScalarType::U32, 4)
                        .body({eval(atomic(AtomicOp::Add, "h", u32(0), u32(1))), store("h", u32(1), load("h", u32(2))),
                               eval(atomic_compare_exchange("h", u32(3), u32(0), u32(5)))})
                        .build();
  const std::string wgsl = lower_to_wgsl(p);
  EXPECT_TRUE(contains(wgsl, "array<atomic<u32>, 4>")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "atomicStore(&b_h[1u], atomicLoad(&b_h[2u]));")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "atomicCompareExchangeWeak")) << wgsl;
  EXPECT_TRUE(shader_interface(p).bindings[0].atomic);
}

TEST(Lower, SelectKeepsTheFormatsOrderWhenAnOperandHoldsAnAtomic) {
  // WGSL's select(f, t, c) would evaluate the false value first.
  const Program p = ProgramBuilder()
                        .output("h", 0, ScalarType::U32, 2)
                        .body({store("h", u32(1), select(eq(atomic(AtomicOp::Add, "h", u32(0), u32(1)), u32(0)),
                                                         u32(7), load("h", u32(0)))),
                               store("h", u32(1), select(boolean(true), u32(2), u32(3)))})
                        .build();
  ShaderOptions no_passes;  // which would fold the second select
  no_passes.passes = false;
  const std::string wgsl = lower_to_wgsl(p, no_passes);
  EXPECT_TRUE(contains(wgsl, "fn vyre_select_u32(c: bool, t: u32, f: u32) -> u32 { return select(f, t, c); }")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "vyre_select_u32((atomicAdd(&b_h[0u], 1u) == 0u), 7u, atomicLoad(&b_h[0u]))")) << wgsl;
  // Without atomics the order cannot show: the builtin stays.
  EXPECT_TRUE(contains(wgsl, "select(vyre_opaque_u32(3u), vyre_opaque_u32(2u), vyre_opaque_bool(true))")) << wgsl;
}

TEST(Lower, InterfaceListsBindingsInBindingOrderAndTheLengthsNeeded) {
  const ShaderInterface iface = shader_interface(vyre::test::every_construct_program());
  std::vector<uint32_t> bindings;
  for (const auto& b : iface.bindings) bindings.push_back(b.binding);
  EXPECT_EQ(bindings, (std::vector<uint32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(iface.workgroup_size, (Dim3{8, 2, 1}));
  EXPECT_EQ(iface.length_slots, (std::vector<std::string>{"out"}));
  EXPECT_EQ(iface.lengths_bytes(), 16u);
  EXPECT_TRUE(shader_interface(vyre::test::example("saxpy")).length_slots == std::vector<std::string>{"out"});
}

TEST(Lower, InvalidProgramsAreRefused) {
  Program p = vyre::test::xor_program();
  p.body.push_back(break_());
  EXPECT_THROW(lower_to_wgsl(p), ProgramError);
  EXPECT_THROW(shader_interface(p), ProgramError);
}

// Cached WGSL is keyed by kLoweringVersion: any change to the text the
// lowering emits must come with a new version, or old cache entries would
// be served for the new lowering. This pins the text of a corpus of
// programs to the version.
TEST(Lower, TextChangesComeWithANewLoweringVersion) {
  std::string corpus;
  for (const char* name : {"xor", "saxpy", "collatz", "histogram", "reduction", "prefix_sum", "matmul_tiled", "softmax",
                           "bitonic_sort"})
    corpus += lower_to_wgsl(vyre::test::example(name));
  corpus += lower_to_wgsl(vyre::test::every_construct_program());
  for (const Program& p : vyre::test::constant_hazard_programs()) corpus += lower_to_wgsl(p);
  const std::string hash = sha256(corpus).hex();
  EXPECT_EQ(kLoweringVersion, 10u);
  EXPECT_EQ(hash, "89c71f174fc1e141e74c5afa5d58201b9b140c01072dbda06ff37907d5105dad") << "The lowering's output changed. Raise kLoweringVersion in include/vyre/lower.hpp, then "
                            "update the version and this hash ("
                         << hash << ").";
}

// The same for format version 4's packed elements (docs/lowering.md, "Packed
// elements"), whose text came after the corpus above was pinned.
TEST(Lower, PackedElementTextChangesComeWithANewLoweringVersion) {
  using namespace vyre::build;
  std::string corpus = lower_to_wgsl(vyre::test::example("byte_count"));
  for (ScalarType t : {ScalarType::U8, ScalarType::I8, ScalarType::U16, ScalarType::I16, ScalarType::Bool}) {
    const ScalarType v = value_type(t);
    corpus += lower_to_wgsl(ProgramBuilder("packed")
                                .workgroup_size(64)
                                .input("x", 0, t)
                                .output("out", 1, t)
                                .body({let("i", gid()), if_(lt(var("i"), len("out")), {store("out", var("i"), load("x", var("i")))}),
                                       if_(eq(var("i"), u32(0)), {store("out", u32(1), v == ScalarType::Bool ? boolean(true)
                                                                                     : v == ScalarType::I32 ? i32(-1) : u32(7))})})
                                .build());
  }
  const std::string hash = sha256(corpus).hex();
  EXPECT_EQ(kLoweringVersion, 10u);
  EXPECT_EQ(hash, "7b12ac3277e2cfe4e54ff10f3a3cbda38f27b6b45a164a381853d0d13e103708") << "The lowering's output changed. Raise kLoweringVersion in include/vyre/lower.hpp, then "
                         "update the version and this hash (" << hash << ").";
}

// A local no assign statement writes is a WGSL value (`let`); one that is
// reassigned is storage (`var`). Slots tell apart two locals of one name in
// sibling blocks, only one of them reassigned.
TEST(Lower, LocalsNeverReassignedAreValues) {
  const CheckedProgram p = ProgramBuilder("locals")
                               .workgroup_size(1)
                               .output("out", 0, ScalarType::U32)
                               .body({let("once", u32(3)), let("twice", u32(1)), assign("twice", add(var("twice"), var("once"))),
                                      if_(lt(var("once"), u32(5)), {let("t", u32(1)), assign("t", u32(2)), store("out", u32(0), var("t"))},
                                          {let("t", u32(7)), store("out", u32(0), add(var("t"), var("twice")))})})
                               .build();
  ShaderOptions no_passes;  // which would fold `once` and the branch away
  no_passes.passes = false;
  const std::string wgsl = lower_to_wgsl(p, no_passes);
  EXPECT_TRUE(contains(wgsl, "let l_once: u32 = 3u;")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "var l_twice: u32 = 1u;")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "var l_t: u32 = 1u;")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "let l_t: u32 = 7u;")) << wgsl;
}

TEST(Lower, PrivateArraysAreZeroedWhereDeclaredAndIndexedWithinThemselves) {
  const CheckedProgram p = ProgramBuilder("arrays")
                               .workgroup_size(1)
                               .input("in", 0, ScalarType::I32)
                               .output("out", 1, ScalarType::I32)
                               .body({loop("r", u32(0), u32(3),
                                           {array("acc", ScalarType::I32, 8),
                                            store("acc", load("in", var("r")), i32(1)),
                                            store("out", var("r"), add(load("acc", u32(7)), load("acc", i32(-1))))})})
                               .build();
  for (bool passes : {false, true}) {
    ShaderOptions options;
    options.passes = passes;
    const std::string wgsl = lower_to_wgsl(p, options);
    // An explicit zero: a declaration in a loop's body starts each trip from zeros.
    EXPECT_TRUE(contains(wgsl, "var l_acc: array<i32, 8u> = array<i32, 8u>();")) << wgsl;
    // A computed index is clamped to the last element in the shader, a literal one (here -1) here.
    EXPECT_TRUE(contains(wgsl, "l_acc[min(u32(b_in[l_r]), 7u)] = 1i;")) << wgsl;
    EXPECT_TRUE(contains(wgsl, "(l_acc[7u] + l_acc[7u])")) << wgsl;
  }
}
