// The lowering's passes (src/lower/program_passes.hpp, docs/lowering.md,
// "Passes"): what each one does and leaves, and, on random programs, that
// the reference interpreter gives bit for bit the same outputs before and
// after them. The GPU side is the differential tester's, with the passes on
// and off (tests/differential_test.cpp).
#include <gtest/gtest.h>

#include <limits>

#include "differential/random_program.hpp"
#include "lower/program_passes.hpp"
#include "support/programs.hpp"
#include "support/test_support.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"
#include "vyre/lower.hpp"
#include "vyre/reference.hpp"

using namespace vyre;
using namespace vyre::build;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

Program shaped(const Program& p, std::map<std::string, uint32_t> fixed = {}) {
  ShaderOptions o;
  o.fixed_lengths = std::move(fixed);
  return passes::run_passes(p, o).program();
}

TEST(ConstantFolding, IntegerOperatorsFoldWithTheFormatsSemantics) {
  const Program p = ProgramBuilder()
                        .output("out", 0, ScalarType::U32)
                        .body({store("out", u32(0), add(u32(0xffffffffu), u32(1))),  // wraps
                               store("out", u32(1), div(u32(7), u32(0))),             // the format: x / 0 = x
                               store("out", u32(2), cast(ScalarType::U32, sub(i32(std::numeric_limits<int32_t>::min()), i32(1))))})
                        .build();
  const std::string wgsl = lower_to_wgsl(p);
  EXPECT_TRUE(contains(wgsl, "b_out[0u] = 0u;")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "b_out[1u] = 7u;")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "b_out[2u] = 2147483647u;")) << wgsl;
  EXPECT_FALSE(contains(wgsl, "vyre_opaque")) << wgsl;
  EXPECT_FALSE(contains(wgsl, "vyre_div")) << wgsl;
}

TEST(ConstantFolding, OnlyExactF32OperatorsOnPlainValuesFold) {
  const Program p = ProgramBuilder()
                        .output("out", 0, ScalarType::F32)
                        .body({store("out", u32(0), mul(f32(1.5f), f32(4.0f))),
                               store("out", u32(1), div(f32(1.0f), f32(3.0f))),                  // WGSL: 2.5 ULP
                               store("out", u32(2), unary(Op::Exp, f32(1.0f))),                  // an error bound
                               store("out", u32(3), mul(f32_bits(0x00000001u), f32(2.0f))),      // subnormal
                               store("out", u32(4), min(f32_bits(0x80000000u), f32(0.0f))),      // -0: either zero
                               store("out", u32(5), cast(ScalarType::F32, u32(16777217u))),      // not exact in f32
                               store("out", u32(6), cast(ScalarType::F32, u32(16777216u)))})
                        .build();
  const std::string wgsl = lower_to_wgsl(p);
  EXPECT_TRUE(contains(wgsl, "b_out[0u] = 6f;")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "(vyre_opaque_f32(1f) / vyre_opaque_f32(3f))")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "exp(vyre_opaque_f32(1f))")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "(vyre_f32_bits(0x00000001u) * vyre_opaque_f32(2f))")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "min(vyre_f32_bits(0x80000000u), vyre_opaque_f32(0f))")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "f32(vyre_opaque_u32(16777217u))")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "b_out[6u] = 16777216f;")) << wgsl;
}

TEST(ConstantFolding, LiteralLocalsPropagateAndConditionsSettle) {
  const Program p = ProgramBuilder()
                        .output("out", 0, ScalarType::U32)
                        .body({let("n", u32(4)), let("m", u32(1)), assign("m", u32(2)),
                               store("out", u32(0), add(var("n"), var("m"))),
                               store("out", u32(1), select(lt(var("n"), u32(8)), gid(), u32(9))),
                               store("out", u32(2), select(land(boolean(false), eq(atomic(AtomicOp::Add, "out", u32(3), u32(1)), u32(0))), u32(5), u32(6)))})
                        .build();
  const std::string wgsl = lower_to_wgsl(p);
  EXPECT_TRUE(contains(wgsl, "(4u + l_m)")) << wgsl;  // m is reassigned: it stays a local
  EXPECT_FALSE(contains(wgsl, "l_n")) << wgsl;       // n is 4 everywhere, and then unread
  EXPECT_TRUE(contains(wgsl, "atomicStore(&b_out[1u], vyre_gid.x);")) << wgsl;
  // `false && x` never evaluates x, as in the format: the atomic goes with it.
  EXPECT_TRUE(contains(wgsl, "atomicStore(&b_out[2u], 6u);")) << wgsl;
  // The buffer stays atomic: the interface says so for the whole program.
  EXPECT_TRUE(contains(wgsl, "array<atomic<u32>>")) << wgsl;
}

TEST(ConstantFolding, FixedLengthsBecomeLiterals) {
  const Program p = vyre::test::example("saxpy");
  const Program out = shaped(p, {{"out", 1024}});
  ShaderOptions o;
  o.fixed_lengths = {{"out", 1024}};
  const std::string wgsl = lower_to_wgsl(p, o);
  EXPECT_TRUE(contains(wgsl, "< 1024u")) << wgsl;
  EXPECT_FALSE(contains(wgsl, "vyre_lengths[0]")) << wgsl;
  EXPECT_NE(out, p);
}

// A bounds check the operands' ranges decide disappears: a loop variable
// against a fixed length, an invocation's place in its workgroup against
// the workgroup's size.
TEST(ConstantFolding, ChecksTheRangesDecideDisappear) {
  const Program p = ProgramBuilder()
                        .workgroup_size(64)
                        .input("x", 0, ScalarType::U32)
                        .output("out", 1, ScalarType::U32)
                        .body({loop("i", u32(0), u32(4),
                                    {if_(lt(var("i"), len("x")), {store("out", var("i"), load("x", var("i")))})}),
                               if_(lt(bit_and(lid(), u32(31)), u32(32)), {store("out", u32(9), u32(1))}),
                               if_(ge(rem(gid(), u32(8)), u32(8)), {store("out", u32(10), u32(2))})})
                        .build();
  ShaderOptions o;
  o.fixed_lengths = {{"x", 8}};
  std::string wgsl = lower_to_wgsl(p, o);
  EXPECT_TRUE(contains(wgsl, "b_out[l_i] = b_x[l_i];")) << wgsl;
  EXPECT_FALSE(contains(wgsl, "if (")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "b_out[9u] = 1u;")) << wgsl;
  EXPECT_FALSE(contains(wgsl, "2u;")) << wgsl;
  // Three elements do not cover the loop: the check stays.
  o.fixed_lengths = {{"x", 3}};
  wgsl = lower_to_wgsl(p, o);
  EXPECT_TRUE(contains(wgsl, "if ((l_i < 3u)) {")) << wgsl;
  // A larger workgroup than the mask's range keeps nothing but what it decides.
  o.workgroup_override = Dim3{128, 1, 1};
  wgsl = lower_to_wgsl(p, o);
  EXPECT_TRUE(contains(wgsl, "b_out[9u] = 1u;")) << wgsl;
}

TEST(DeadCode, BranchesLoopsAndUnreadLocalsThatCannotMatterGo) {
  const Program p = ProgramBuilder()
                        .output("out", 0, ScalarType::U32)
                        .body({let("unused", load("out", u32(5))),
                               let("kept", atomic(AtomicOp::Add, "out", u32(6), u32(1))),  // has an effect
                               if_(boolean(false), {store("out", u32(0), u32(1))}, {store("out", u32(0), u32(2))}),
                               loop("i", u32(4), u32(4), {store("out", var("i"), u32(3))}),
                               while_(boolean(false), {store("out", u32(1), u32(3))}),
                               eval(add(gid(), u32(1))),
                               if_(lt(gid(), u32(9)), {return_(), store("out", u32(2), u32(4))}),
                               store("out", u32(3), u32(5))})
                        .build();
  const std::string wgsl = lower_to_wgsl(p);
  EXPECT_FALSE(contains(wgsl, "l_unused")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "let l_kept: u32 = atomicAdd(&b_out[6u], 1u);")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "atomicStore(&b_out[0u], 2u);")) << wgsl;
  EXPECT_FALSE(contains(wgsl, "atomicStore(&b_out[0u], 1u);")) << wgsl;  // the other branch
  EXPECT_FALSE(contains(wgsl, "for (")) << wgsl;
  EXPECT_FALSE(contains(wgsl, "while")) << wgsl;
  EXPECT_FALSE(contains(wgsl, "_ = ")) << wgsl;
  EXPECT_FALSE(contains(wgsl, "4u);")) << wgsl;  // after the return
  EXPECT_TRUE(contains(wgsl, "atomicStore(&b_out[3u], 5u);")) << wgsl;
}

TEST(CommonSubexpressions, ARepeatedPureExpressionIsComputedOnce) {
  const Program p = ProgramBuilder()
                        .input("a", 0, ScalarType::U32)
                        .output("out", 1, ScalarType::U32)
                        .body({let("i", add(mul(gid(), u32(4)), u32(1))),
                               store("out", add(mul(gid(), u32(4)), u32(1)), load("a", var("i"))),
                               store("out", add(mul(gid(), u32(4)), u32(2)), add(load("a", var("i")), load("a", var("i"))))})
                        .build();
  const std::string wgsl = lower_to_wgsl(p);
  EXPECT_TRUE(contains(wgsl, "let l_cse0: u32 = ((vyre_gid.x * 4u) + 1u);")) << wgsl;
  EXPECT_TRUE(contains(wgsl, "b_out[l_cse0] = b_a[l_i];")) << wgsl;
  // Loads are never shared (a store could come between them), nor what is
  // inside a shared expression alone.
  EXPECT_TRUE(contains(wgsl, "(b_a[l_i] + b_a[l_i])")) << wgsl;
}

TEST(CommonSubexpressions, ReassignedLocalsAndNamesInUseAreRespected) {
  const Program p = ProgramBuilder()
                        .output("out", 0, ScalarType::U32)
                        .body({let("cse0", u32(0)), assign("cse0", gid()), let("x", gid(Axis::Y)),
                               store("out", add(mul(var("cse0"), u32(3)), u32(1)), u32(1)), assign("cse0", u32(5)),
                               store("out", add(mul(var("cse0"), u32(3)), u32(1)), u32(2)),
                               store("out", mul(var("x"), add(var("x"), u32(7))), u32(3)),
                               store("out", add(mul(var("x"), add(var("x"), u32(7))), u32(1)), u32(4))})
                        .build();
  const std::string wgsl = lower_to_wgsl(p);
  EXPECT_TRUE(contains(wgsl, "((l_cse0 * 3u) + 1u)")) << wgsl;  // twice: cse0 changes between them
  EXPECT_TRUE(contains(wgsl, "let l_cse1: u32 = (l_x * (l_x + 7u));")) << wgsl;
}

TEST(Passes, ShapingSignatureNamesThemWhereTheyChangeTheText) {
  const CheckedProgram saxpy = vyre::test::example("saxpy");
  ShaderOptions o;
  EXPECT_EQ(shaping_signature(saxpy, o), "");
  o.passes = false;
  EXPECT_EQ(shaping_signature(saxpy, o), "passes=off");
  o.passes = true;
  o.fixed_lengths = {{"out", 64}};
  EXPECT_EQ(shaping_signature(saxpy, o), "len(out)=64");
  o.fixed_lengths = {{"x", 64}};  // saxpy reads len(out) only
  EXPECT_EQ(shaping_signature(saxpy, o), "");
  o.fixed_lengths = {{"nope", 64}};
  EXPECT_THROW(shaping_signature(saxpy, o), Error);
  EXPECT_THROW(lower(saxpy, o), Error);
}

TEST(Passes, ADispatchMustGiveTheFixedLengths) {
  const CheckedProgram saxpy = vyre::test::example("saxpy");
  ShaderOptions o;
  o.fixed_lengths = {{"out", 4}};
  Inputs in;
  in.set<float>("x", {1, 2, 3, 4}).set<float>("y", {1, 2, 3, 4}).set<float>("alpha", {2}).size("out", 4);
  EXPECT_EQ(reference::run(saxpy, in, o), reference::run(saxpy, in));
  in.size("out", 5);
  in.set<float>("x", {1, 2, 3, 4, 5}).set<float>("y", {1, 2, 3, 4, 5});
  try {
    reference::run(saxpy, in, o);
    FAIL() << "a length other than the fixed one was accepted";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "specialized for 4")) << e.what();
  }
}

// The passes keep the format's semantics: on the reference interpreter, the
// program after them computes bit for bit what the program before did.
TEST(Passes, RandomProgramsComputeTheSameAfterThem) {
  size_t changed = 0, seeds = 400;
  for (uint64_t seed = 0; seed < seeds; ++seed) {
    const differential::GeneratedCase c = differential::generate_case(seed);
    const CheckedProgram original(c.program);
    std::map<std::string, uint32_t> fixed;
    if (seed % 2) {  // half of them with their lengths fixed too
      for (const auto& [name, size] : c.sizes)
        if (c.program.find_buffer(name)->runtime_sized()) fixed[name] = size;
      for (const auto& [name, contents] : c.contents)
        if (c.program.find_buffer(name)->runtime_sized()) fixed[name] = static_cast<uint32_t>(contents.size());
    }
    ShaderOptions o;
    o.fixed_lengths = fixed;
    const CheckedProgram after = passes::run_passes(original, o);
    if (after.program() != original.program()) ++changed;
    const Inputs in = c.inputs();
    std::string before_error, after_error;
    Outputs before, result;
    try {
      before = reference::run(original, in, {}, c.grid);
    } catch (const Error& e) {
      before_error = e.what();
    }
    try {
      result = reference::run(after, in, {}, c.grid);
    } catch (const Error& e) {
      after_error = e.what();
    }
    EXPECT_EQ(before_error, after_error) << "seed " << seed;
    ShaderOptions as_is;
    as_is.passes = false;
    EXPECT_TRUE(before == result) << "seed " << seed << "\n" << lower_to_wgsl(original, as_is) << "\nafter the passes:\n"
                                  << lower_to_wgsl(after, as_is);
  }
  // The generator's programs give the passes work: most are changed.
  EXPECT_GT(changed, seeds / 2) << changed << " of " << seeds << " changed";
  std::printf("%zu of %zu random programs changed by the passes\n", changed, seeds);
}

}  // namespace
