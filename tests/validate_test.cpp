// Validation: one test per rule of the format, each checking the JSON path
// and the message, plus uniformity of barriers.
#include <gtest/gtest.h>

#include "ir/limits.hpp"
#include "support/programs.hpp"
#include "vyre/builder.hpp"
#include "vyre/validate.hpp"

using namespace vyre;
using namespace vyre::build;

namespace {

// A program with one read_write u32 output "out", one read i32 input "in",
// one f32 storage "fs", and the given body.
ProgramBuilder base(std::vector<Stmt> body) {
  ProgramBuilder b("t");
  b.workgroup_size(4)
      .output("out", 0, ScalarType::U32)
      .input("in", 1, ScalarType::I32)
      .storage("fs", 2, ScalarType::F32)
      .body(std::move(body));
  return b;
}

std::vector<Diagnostic> check(const ProgramBuilder& b) { return validate(b.unchecked()); }

::testing::AssertionResult reports(const std::vector<Diagnostic>& ds, const std::string& path, const std::string& fragment) {
  for (const auto& d : ds)
    if (d.path == path && d.message.find(fragment) != std::string::npos) return ::testing::AssertionSuccess();
  auto r = ::testing::AssertionFailure() << "no diagnostic at '" << path << "' containing '" << fragment << "'; got:";
  for (const auto& d : ds) r << "\n  " << d.path << ": " << d.message;
  return r;
}

}  // namespace

TEST(Validate, ValidProgramsHaveNoDiagnostics) {
  EXPECT_TRUE(validate(vyre::test::xor_program()).empty());
  EXPECT_TRUE(validate(vyre::test::every_construct_program()).empty());
  for (const char* name : {"xor", "saxpy", "collatz"}) EXPECT_TRUE(validate(vyre::test::example(name)).empty()) << name;
}

TEST(Validate, WorkgroupSizeIsPositiveWithProductAtMost1024) {
  auto b = base({});
  b.workgroup_size(0, 1, 1);
  EXPECT_TRUE(reports(check(b), "workgroup_size[0]", "positive"));
  b.workgroup_size(64, 32, 1);
  EXPECT_TRUE(reports(check(b), "workgroup_size", "at most 1024"));
  b.workgroup_size(32, 32, 1);
  EXPECT_TRUE(check(b).empty());
}

TEST(Validate, BufferNamesAreUniqueIdentifiers) {
  auto b = base({});
  b.input("1abc", 5, ScalarType::U32);
  EXPECT_TRUE(reports(check(b), "buffers[3].name", "not an identifier"));
  auto c = base({});
  c.input("out", 6, ScalarType::U32);
  EXPECT_TRUE(reports(check(c), "buffers[3].name", "already declared at buffers[0]"));
  auto d = base({});
  d.input(std::string(300, 'a'), 7, ScalarType::U32);
  EXPECT_TRUE(reports(check(d), "buffers[3].name", "not an identifier"));
}

TEST(Validate, BindingsAreUniqueAndOnlyOnBoundBuffers) {
  auto b = base({});
  b.input("x", 0, ScalarType::U32);
  EXPECT_TRUE(reports(check(b), "buffers[3].binding", "already used by buffers[0]"));
  auto c = base({});
  c.buffer(Buffer{"w", 3, Access::Workgroup, ScalarType::U32, 4, false});
  EXPECT_TRUE(reports(check(c), "buffers[3].binding", "workgroup buffers have no binding"));
  auto d = base({});
  d.buffer(Buffer{"r", std::nullopt, Access::Read, ScalarType::U32, 0, false});
  EXPECT_TRUE(reports(check(d), "buffers[3].binding", "missing"));
  auto e = base({});
  e.input("far", 1000, ScalarType::U32);
  EXPECT_TRUE(reports(check(e), "buffers[3].binding", "maximum of 999"));
}

TEST(Validate, BufferTypesCountsAndOutputs) {
  for (ScalarType t : {ScalarType::Bool, ScalarType::U8, ScalarType::I8, ScalarType::U16, ScalarType::I16}) {
    auto b = base({});
    b.input("flags", 5, t);
    EXPECT_TRUE(check(b).empty()) << to_string(t) << " storage buffers are format version 4";
    auto u = base({});
    u.uniform("flags", 5, t, 4);
    EXPECT_TRUE(reports(check(u), "buffers[3].type", "a uniform buffer holds u32, i32 or f32")) << to_string(t);
    auto w = base({});
    w.buffer(Buffer{"w", std::nullopt, Access::Workgroup, t, 4, false});
    EXPECT_TRUE(reports(check(w), "buffers[3].type", "a workgroup buffer holds u32, i32 or f32")) << to_string(t);
  }
  auto c = base({});
  c.buffer(Buffer{"u", 5, Access::Uniform, ScalarType::U32, 0, false});
  EXPECT_TRUE(reports(check(c), "buffers[3].count", "positive count"));
  auto d = base({});
  d.buffer(Buffer{"w", std::nullopt, Access::Workgroup, ScalarType::U32, 0, false});
  EXPECT_TRUE(reports(check(d), "buffers[3].count", "positive count"));
  auto e = base({});
  e.buffer(Buffer{"r", 5, Access::Read, ScalarType::U32, 0, true});
  EXPECT_TRUE(reports(check(e), "buffers[3].output", "only read_write"));
}

TEST(Validate, LetDeclaresWithoutShadowing) {
  EXPECT_TRUE(reports(check(base({let("x", u32(1)), let("x", u32(2))})), "body[1].let", "already declared"));
  EXPECT_TRUE(reports(check(base({let("x", u32(1)), if_(boolean(true), {let("x", u32(2))})})), "body[1].then[0].let",
                      "no shadowing"));
  // A block's locals end with the block: a sibling may reuse the name.
  EXPECT_TRUE(check(base({if_(boolean(true), {let("x", u32(1))}), let("x", u32(2))})).empty());
  EXPECT_TRUE(reports(check(base({if_(boolean(true), {let("x", u32(1))}), store("out", u32(0), var("x"))})),
                      "body[1].value.var", "no local named 'x'"));
  EXPECT_TRUE(reports(check(base({let("9x", u32(1))})), "body[0].let", "not an identifier"));
}

TEST(Validate, AssignNeedsAMutableLocalOfTheSameType) {
  EXPECT_TRUE(reports(check(base({assign("y", u32(1))})), "body[0].assign", "no local named 'y'"));
  EXPECT_TRUE(reports(check(base({let("x", u32(1)), assign("x", i32(1))})), "body[1].value", "'x' is u32 but the value is i32"));
  EXPECT_TRUE(reports(check(base({loop("k", u32(0), u32(4), {assign("k", u32(9))})})), "body[0].body[0].assign",
                      "loop variable"));
}

TEST(Validate, StoreNeedsAWritableBufferAndTheElementType) {
  EXPECT_TRUE(reports(check(base({store("in", u32(0), i32(1))})), "body[0].store", "stores need a read_write or workgroup"));
  EXPECT_TRUE(reports(check(base({store("nothing", u32(0), u32(1))})), "body[0].store", "no buffer named 'nothing'"));
  EXPECT_TRUE(reports(check(base({store("out", u32(0), f32(1))})), "body[0].value", "holds u32 but the value is f32"));
  EXPECT_TRUE(reports(check(base({store("out", f32(0), u32(1))})), "body[0].index", "an index is u32 or i32"));
  EXPECT_TRUE(check(base({store("out", i32(0), u32(1))})).empty());
}

TEST(Validate, ConditionsAreBool) {
  EXPECT_TRUE(reports(check(base({if_(u32(1), {})})), "body[0].if", "must be bool, not u32"));
  EXPECT_TRUE(reports(check(base({while_(f32(1), {})})), "body[0].while", "must be bool, not f32"));
}

TEST(Validate, LoopBoundsAreOneIntegerType) {
  EXPECT_TRUE(reports(check(base({loop("k", u32(0), i32(4), {})})), "body[0].to", "one type"));
  EXPECT_TRUE(reports(check(base({loop("k", f32(0), f32(4), {})})), "body[0].from", "u32 or i32"));
  EXPECT_TRUE(check(base({loop("k", i32(-4), i32(4), {store("out", var("k"), u32(1))})})).empty());
}

TEST(Validate, BreakAndContinueOnlyInLoops) {
  EXPECT_TRUE(reports(check(base({break_()})), "body[0]", "outside a loop"));
  EXPECT_TRUE(reports(check(base({if_(boolean(true), {continue_()})})), "body[0].then[0]", "outside a loop"));
  EXPECT_TRUE(check(base({while_(boolean(true), {if_(boolean(true), {break_()}, {continue_()})})})).empty());
}

TEST(Validate, ExpressionTypeRules) {
  auto at = [](Expr e) { return check(base({eval(std::move(e))})); };
  EXPECT_TRUE(reports(at(add(u32(1), i32(1))), "body[0].eval.add", "operands of one type, got u32 and i32"));
  EXPECT_TRUE(reports(at(add(boolean(true), boolean(true))), "body[0].eval.add[0]", "takes u32, i32, f32, f16 or f64"));
  EXPECT_TRUE(reports(at(bit_and(f32(1), f32(1))), "body[0].eval.and[0]", "u32 or i32"));
  EXPECT_TRUE(reports(at(shl(u32(1), i32(1))), "body[0].eval.shl[1]", "u32 shift amount"));
  EXPECT_TRUE(at(shr(i32(-8), u32(1))).empty());
  EXPECT_TRUE(reports(at(lt(boolean(true), boolean(false))), "body[0].eval.lt[0]", "u32, i32, f32, f16 or f64"));
  EXPECT_TRUE(at(eq(boolean(true), boolean(false))).empty());
  EXPECT_TRUE(reports(at(land(u32(1), boolean(true))), "body[0].eval.land[0]", "bool"));
  EXPECT_TRUE(reports(at(pow(u32(1), u32(2))), "body[0].eval.pow[0]", "f32"));
  EXPECT_TRUE(reports(at(neg(u32(1))), "body[0].eval.neg", "i32, f32, f16 or f64"));
  EXPECT_TRUE(at(abs(u32(1))).empty());
  EXPECT_TRUE(reports(at(logical_not(u32(1))), "body[0].eval.not", "bool"));
  EXPECT_TRUE(reports(at(unary(Op::Popcount, f32(1))), "body[0].eval.popcount", "u32 or i32"));
  EXPECT_TRUE(reports(at(unary(Op::Sqrt, u32(1))), "body[0].eval.sqrt", "f32"));
  EXPECT_TRUE(reports(at(fma(f32(1), u32(1), f32(1))), "body[0].eval.fma[1]", "f32"));
  EXPECT_TRUE(reports(at(clamp(u32(1), i32(0), u32(2))), "body[0].eval.clamp", "one type"));
  EXPECT_TRUE(reports(at(select(u32(1), u32(1), u32(2))), "body[0].eval.select[0]", "must be bool"));
  EXPECT_TRUE(reports(at(select(boolean(true), u32(1), i32(2))), "body[0].eval.select", "one type"));
  EXPECT_TRUE(reports(at(bitcast(ScalarType::Bool, u32(1))), "body[0].eval.bitcast", "not to bool"));
  EXPECT_TRUE(reports(at(bitcast(ScalarType::U32, boolean(true))), "body[0].eval.value", "not from bool"));
  EXPECT_TRUE(at(cast(ScalarType::Bool, f32(1))).empty());
  EXPECT_TRUE(reports(at(var("ghost")), "body[0].eval.var", "no local named 'ghost'"));
  EXPECT_TRUE(reports(at(load("ghost", u32(0))), "body[0].eval.load", "no buffer named 'ghost'"));
  EXPECT_TRUE(reports(at(len("ghost")), "body[0].eval.len", "no buffer named 'ghost'"));
  EXPECT_TRUE(reports(at(load("out", f32(0))), "body[0].eval.index", "u32 or i32"));
  Expr flat_gid = gid();
  flat_gid.imm = static_cast<uint32_t>(Axis::Flat);
  EXPECT_TRUE(reports(at(flat_gid), "body[0].eval.gid", "x, y or z"));
  EXPECT_TRUE(at(lid_flat()).empty());
}

TEST(Validate, OneMistakeGivesOneDiagnostic) {
  // The bad operand poisons its parents without further reports.
  auto ds = check(base({store("out", u32(0), add(add(var("ghost"), u32(1)), u32(2)))}));
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].path, "body[0].value.add[0].add[0].var");
}

TEST(Validate, SeveralMistakesAllReported) {
  auto ds = check(base({let("x", add(u32(1), f32(1))), store("in", u32(0), i32(1)), break_()}));
  EXPECT_EQ(ds.size(), 3u);
}

TEST(Validate, AtomicsNeedAWritableIntegerBuffer) {
  auto at = [](Expr e) {
    auto b = base({eval(std::move(e))});
    b.output("h", 5, ScalarType::I32, 4);
    return check(b);
  };
  EXPECT_TRUE(at(atomic(AtomicOp::Add, "h", u32(0), i32(1))).empty());
  EXPECT_TRUE(reports(at(atomic(AtomicOp::Add, "in", u32(0), i32(1))), "body[0].eval.buffer", "read_write or workgroup"));
  EXPECT_TRUE(reports(at(atomic(AtomicOp::Add, "fs", u32(0), f32(1))), "body[0].eval.buffer", "u32 or i32"));
  EXPECT_TRUE(reports(at(atomic(AtomicOp::Max, "h", u32(0), u32(1))), "body[0].eval.value", "holds i32"));
  EXPECT_TRUE(reports(at(atomic_compare_exchange("h", u32(0), u32(0), i32(1))), "body[0].eval.expected", "holds i32"));
  EXPECT_TRUE(at(atomic_load("h", i32(2))).empty());
}

TEST(Validate, NarrowElementsLoadAsTheirValueTypeAndStoreFromIt) {
  auto with = [](std::vector<Stmt> body) {
    auto b = base(std::move(body));
    b.input("bytes", 5, ScalarType::U8).output("shorts", 6, ScalarType::I16).output("mask", 7, ScalarType::Bool);
    return check(b);
  };
  EXPECT_TRUE(with({let("x", load("bytes", u32(0))), store("out", u32(0), var("x")),
                    store("shorts", u32(0), i32(-40000)), store("mask", u32(0), gt(load("bytes", u32(1)), u32(3)))})
                  .empty());
  EXPECT_TRUE(reports(with({store("shorts", u32(0), u32(1))}), "body[0].value", "holds i16 (stored from i32) but the value is u32"));
  EXPECT_TRUE(reports(with({store("mask", u32(0), u32(1))}), "body[0].value", "holds bool but the value is u32"));
  EXPECT_TRUE(reports(with({store("out", u32(0), cast(ScalarType::U8, u32(300)))}), "body[0].value.cast",
                      "u8 is a storage type, not a value type: convert to u32"));
  EXPECT_TRUE(reports(with({eval(atomic(AtomicOp::Add, "shorts", u32(0), i32(1)))}), "body[0].eval.buffer", "u32 or i32"));
}

TEST(Validate, BarriersNeedUniformControlFlow) {
  auto with_tile = [](std::vector<Stmt> body) {
    auto b = base(std::move(body));
    b.workgroup_buffer("tile", ScalarType::U32, 4);
    return check(b);
  };
  // At the top level, and in loops with uniform bounds: fine.
  EXPECT_TRUE(with_tile({barrier(), loop("k", u32(0), u32(4), {barrier()})}).empty());
  EXPECT_TRUE(with_tile({loop("k", u32(0), len("out"), {barrier()})}).empty());
  // Under a condition on the invocation: refused, with the reason.
  EXPECT_TRUE(reports(with_tile({if_(lt(lid(), u32(2)), {barrier()})}), "body[0].then[0]", "depends on lid"));
  // After an if with no exit the flow is uniform again.
  EXPECT_TRUE(with_tile({if_(lt(lid(), u32(2)), {store("tile", lid(), u32(1))}), barrier()}).empty());
  // After a non-uniform return it is not.
  EXPECT_TRUE(reports(with_tile({if_(ge(gid(), len("out")), {return_()}), barrier()}), "body[1]", "depends on gid"));
  // A local assigned from the invocation id taints every condition using it.
  EXPECT_TRUE(reports(with_tile({let("x", u32(0)), assign("x", gid()), while_(lt(var("x"), u32(3)), {barrier()})}),
                      "body[2].body[0]", "'x' may differ"));
  // Loads from read_write storage are not uniform; from read-only storage at a uniform index they are.
  EXPECT_TRUE(reports(with_tile({if_(eq(load("out", u32(0)), u32(1)), {barrier()})}), "body[0].then[0]", "which invocations may write"));
  EXPECT_TRUE(with_tile({if_(eq(load("in", u32(0)), i32(1)), {barrier()})}).empty());
  // A loop that some invocations leave early is non-uniform inside and after.
  EXPECT_TRUE(reports(with_tile({loop("k", u32(0), u32(4), {if_(eq(var("k"), lid()), {break_()}), barrier()})}),
                      "body[0].body[1]", "leave the loop"));
  EXPECT_TRUE(reports(with_tile({loop("k", u32(0), u32(4), {if_(eq(var("k"), lid()), {break_()})}), barrier()}),
                      "body[1]", "leave the loop"));
  // The workgroup id is uniform.
  EXPECT_TRUE(with_tile({if_(eq(wid(), u32(0)), {barrier()})}).empty());
  // A local is its declaration, not its name: another local of the same
  // name, in a sibling block before or after, changes nothing.
  EXPECT_TRUE(with_tile({if_(boolean(true), {let("x", gid())}), loop("x", u32(0), u32(2), {barrier()}),
                         loop("k", u32(0), u32(2), {let("y", wid()), if_(eq(var("y"), u32(0)), {barrier()})}),
                         if_(boolean(true), {let("y", lid())})})
                  .empty());
  // But the same local assigned a non-uniform value anywhere is non-uniform everywhere.
  EXPECT_TRUE(reports(with_tile({let("x", wid()), if_(eq(var("x"), u32(0)), {barrier()}),
                                 if_(boolean(true), {assign("x", lid())})}),
                      "body[1].then[0]", "'x' may differ"));
}

TEST(Validate, AReasonThroughAChainOfLocalsNamesItsRootCauseOnly) {
  // v1999 derives from gid through 1999 locals: the reason names it
  // and the root cause, not the whole chain (which would make the
  // reasons, and validation, grow with the square of the chain).
  std::vector<Stmt> body{let("v0", gid())};
  for (int k = 1; k < 2000; ++k) body.push_back(let("v" + std::to_string(k), add(var("v" + std::to_string(k - 1)), u32(1))));
  body.push_back(if_(lt(var("v1999"), u32(3)), {barrier()}));
  auto b = base(std::move(body));
  b.workgroup_buffer("tile", ScalarType::U32, 4);
  const auto ds = check(b);
  ASSERT_TRUE(reports(ds, "body[2000].then[0]", "'v1999' may differ between invocations (the value at body[0].value depends on gid)"));
  EXPECT_LT(ds.at(0).message.size(), 300u) << ds.at(0).message;
}

TEST(Validate, RequireValidThrowsWithEveryDiagnostic) {
  auto b = base({break_(), continue_()});
  try {
    require_valid(b.unchecked());
    FAIL();
  } catch (const ProgramError& e) {
    EXPECT_EQ(e.diagnostics().size(), 2u);
    EXPECT_EQ(e.kind(), ErrorKind::invalid_program);
  }
}

TEST(Validate, DeepNestingIsAnErrorNotACrash) {
  Expr e = u32(1);
  for (int i = 0; i < 5000; ++i) e = bit_not(std::move(e));
  auto ds = check(base({eval(std::move(e))}));
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_NE(ds[0].message.find("nested deeper"), std::string::npos);
}

TEST(Validate, AProgramOfMoreThanTheNodeLimitIsRefusedWithItsSize) {
  std::vector<vyre::Stmt> body;
  // Each statement is three nodes (the store, its index, its value).
  for (int k = 0; k < 34'000; ++k) body.push_back(vyre::build::store("out", vyre::build::u32(0), vyre::build::u32(k)));
  auto b = vyre::build::ProgramBuilder("big").output("out", 0, vyre::ScalarType::U32, 1).body(body);
  const auto diagnostics = vyre::validate(b.unchecked());
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_EQ(diagnostics[0].path, "body");
  EXPECT_NE(diagnostics[0].message.find("102000 statements and expressions; at most 100000"), std::string::npos)
      << diagnostics[0].message;
  body.resize(33'000);  // 99,000 nodes: accepted
  EXPECT_TRUE(vyre::validate(vyre::build::ProgramBuilder("fits").output("out", 0, vyre::ScalarType::U32, 1).body(body).unchecked()).empty());
}

TEST(Validate, MoreWorkgroupBuffersThanTheLimitAreRefusedWithTheirCount) {
  const auto with = [](size_t count) {
    ProgramBuilder b("shared");
    b.workgroup_size(1).output("out", 0, ScalarType::U32, 1);
    for (size_t i = 0; i < count; ++i) b.workgroup_buffer("w" + std::to_string(i), ScalarType::U32, 1);
    b.body({store("out", u32(0), u32(7))});
    return validate(b.unchecked());
  };
  EXPECT_TRUE(with(vyre::kMaxWorkgroupBuffers).empty());
  const auto diagnostics = with(1000);
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_TRUE(reports(diagnostics, "buffers",
                      "declares 1000 workgroup buffers; at most " + std::to_string(vyre::kMaxWorkgroupBuffers)));
}

TEST(Validate, PrivateArraysAreDeclaredLoadedAndStoredLikeTheirOwnKindOfLocal) {
  EXPECT_TRUE(check(base({array("acc", ScalarType::F32, 4), store("acc", i32(1), f32(2)),
                          store("fs", u32(0), load("acc", u32(1)))}))
                  .empty());
  EXPECT_TRUE(reports(check(base({array("acc", ScalarType::F32, 4), store("acc", u32(0), u32(1))})), "body[1].value",
                      "array 'acc' holds f32 but the value is u32"));
  EXPECT_TRUE(reports(check(base({array("acc", ScalarType::F32, 4), store("acc", f32(0), f32(1))})), "body[1].index",
                      "an index is u32 or i32"));
  EXPECT_TRUE(reports(check(base({array("out", ScalarType::U32, 4)})), "body[0].array", "a buffer's name"));
  EXPECT_TRUE(reports(check(base({let("a", u32(0)), array("a", ScalarType::U32, 4)})), "body[1].array", "no shadowing"));
  EXPECT_TRUE(reports(check(base({array("a", ScalarType::Bool, 4)})), "body[0].type", "u32, i32, f32, f16 or f64, not bool"));
  EXPECT_TRUE(reports(check(base({array("a", ScalarType::U8, 4)})), "body[0].type", "u32, i32, f32, f16 or f64, not u8"));
  EXPECT_TRUE(reports(check(base({array("a", ScalarType::U32, 0)})), "body[0].count", "at least one element"));
  EXPECT_TRUE(reports(check(base({array("a", ScalarType::U32, 2), assign("a", u32(1))})), "body[1].assign",
                      "store to one of its elements"));
  EXPECT_TRUE(reports(check(base({array("a", ScalarType::U32, 2), store("out", u32(0), var("a"))})), "body[1].value.var",
                      "load one of its elements"));
  EXPECT_TRUE(reports(check(base({array("a", ScalarType::U32, 2), store("out", u32(0), len("a"))})), "body[1].value.len",
                      "len is a buffer's length"));
  EXPECT_TRUE(reports(check(base({array("a", ScalarType::U32, 2), eval(atomic(AtomicOp::Add, "a", u32(0), u32(1)))})),
                      "body[1].eval.buffer", "no buffer"));
  // In scope like a local: not after its block.
  EXPECT_TRUE(reports(check(base({if_(boolean(true), {array("a", ScalarType::U32, 2)}), store("a", u32(0), u32(1))})),
                      "body[1].store", "no buffer"));
  // The budget counts every declaration once, wherever it is.
  const uint32_t half = static_cast<uint32_t>(kMaxPrivateElements / 2);
  EXPECT_TRUE(check(base({array("a", ScalarType::U32, half), if_(boolean(true), {array("b", ScalarType::U32, half)})})).empty());
  const auto over = check(base({array("a", ScalarType::U32, half), array("b", ScalarType::U32, half + 1),
                                array("c", ScalarType::U32, 1)}));
  ASSERT_EQ(over.size(), 1u);
  EXPECT_TRUE(reports(over, "body[1].count", "more than " + std::to_string(kMaxPrivateElements) + " elements in all"));
}
