// The checked middle stage: one validation gives every later stage the
// types, slots, buffers and sets it needs, and no stage validates again.
#include <gtest/gtest.h>

#include <functional>
#include <regex>
#include <set>

#include "ir/checked_facts.hpp"
#include "support/gpu_test_support.hpp"
#include "support/programs.hpp"
#include "support/test_support.hpp"
#include "vyre/builder.hpp"
#include "vyre/checked.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"
#include "vyre/json.hpp"
#include "vyre/lower.hpp"
#include "vyre/reference.hpp"

using namespace vyre;
using namespace vyre::build;

namespace {

using vyre::test::contains;

void each_expr(const Expr& e, const std::function<void(const Expr&)>& f) {
  f(e);
  for (const auto& a : e.args) each_expr(a, f);
}
void each_stmt(const std::vector<Stmt>& body, const std::function<void(const Stmt&)>& f) {
  for (const auto& s : body) {
    f(s);
    each_stmt(s.body, f);
    each_stmt(s.else_body, f);
  }
}

TEST(CheckedProgram, EveryExpressionHasTheTypeTheFormatGivesIt) {
  const CheckedProgram c = vyre::test::every_construct_program();
  size_t expressions = 0;
  each_stmt(c.program().body, [&](const Stmt& s) {
    for (const auto& e : s.exprs)
      each_expr(e, [&](const Expr& x) {
        ++expressions;
        const ScalarType t = c.type(x);
        switch (op_info(x.op).cls) {
          case OpClass::Len:
          case OpClass::Builtin: EXPECT_EQ(t, ScalarType::U32); break;
          case OpClass::Conversion: EXPECT_EQ(t, static_cast<ScalarType>(x.imm)); break;
          case OpClass::Load:
          case OpClass::Atomic: EXPECT_EQ(t, c.program().buffers[c.buffer_index(x)].type); break;
          default: break;
        }
      });
  });
  EXPECT_GT(expressions, 50u);
}

TEST(CheckedProgram, ComparisonsAreBoolAndArithmeticKeepsItsOperandType) {
  const CheckedProgram c = ProgramBuilder("types")
                               .output("out", 0, ScalarType::F32)
                               .body({let("x", f32(1.5f)), let("big", gt(var("x"), f32(1))),
                                      store("out", u32(0), select(var("big"), mul(var("x"), f32(2)), f32(0)))})
                               .build();
  const auto& body = c.program().body;
  EXPECT_EQ(c.type(body[1].exprs[0]), ScalarType::Bool);
  EXPECT_EQ(c.type(body[2].exprs[1]), ScalarType::F32);
  EXPECT_EQ(c.type(body[2].exprs[1].args[1]), ScalarType::F32);
}

TEST(CheckedProgram, LocalsOfOneNameInSiblingBlocksGetSlotsOfTheirOwn) {
  const CheckedProgram c = ProgramBuilder("siblings")
                               .output("out", 0, ScalarType::U32)
                               .body({if_(boolean(true), {let("t", u32(1)), store("out", u32(0), var("t"))},
                                          {let("t", u32(2)), store("out", u32(0), var("t"))})})
                               .build();
  const Stmt& branch = c.program().body[0];
  const uint32_t then_slot = c.slot(branch.body[0]);
  const uint32_t else_slot = c.slot(branch.else_body[0]);
  EXPECT_NE(then_slot, else_slot);
  EXPECT_EQ(c.slot(branch.body[1].exprs[1]), then_slot);  // each var reads its own block's local
  EXPECT_EQ(c.slot(branch.else_body[1].exprs[1]), else_slot);
  EXPECT_EQ(c.local_count(), 2u);
}

TEST(CheckedProgram, AtomicAndLengthSetsComeFromTheBody) {
  const CheckedProgram c = ProgramBuilder("sets")
                               .input("in", 0, ScalarType::U32)
                               .output("counts", 1, ScalarType::U32, 4)
                               .output("out", 2, ScalarType::U32)
                               .storage("unread", 3, ScalarType::U32)
                               .body({eval(atomic(AtomicOp::Add, "counts", u32(0), len("in"))),
                                      store("out", u32(0), len("counts")), store("unread", u32(0), u32(1))})
                               .build();
  const auto& buffers = c.program().buffers;
  EXPECT_FALSE(c.atomic(buffers[0]));
  EXPECT_TRUE(c.atomic(buffers[1]));
  EXPECT_FALSE(c.atomic(buffers[2]));
  // len of a fixed-count buffer is a constant, so only `in` needs a length slot.
  ASSERT_EQ(c.length_buffers().size(), 1u);
  EXPECT_EQ(c.length_buffers()[0]->name, "in");
  EXPECT_FALSE(c.has_barrier());
}

TEST(CheckedProgram, AnInvalidProgramIsRefusedWithEveryProblem) {
  Program p = ProgramBuilder("bad")
                  .output("out", 0, ScalarType::U32)
                  .body({store("out", u32(0), f32(1)), store("nowhere", u32(0), u32(1))})
                  .unchecked();
  try {
    CheckedProgram c(p);
    FAIL() << "an invalid program was accepted";
  } catch (const ProgramError& e) {
    EXPECT_EQ(e.diagnostics().size(), 2u);
  }
}

TEST(CheckedProgram, NodesOfAnotherProgramHaveNoFacts) {
  const CheckedProgram c = vyre::test::xor_program();
  const Program copy = c.program();  // equal, but other nodes
  EXPECT_THROW(c.type(copy.body[0].exprs[0]), Error);
  EXPECT_THROW(c.slot(copy.body[0]), Error);
}

TEST(CheckedProgram, CopiesShareOneStateSoFactsOutliveTheOriginal) {
  std::optional<CheckedProgram> original(vyre::test::xor_program());
  const CheckedProgram copy = *original;
  const Expr* first = &copy.program().body[0].exprs[0];
  EXPECT_EQ(&original->program(), &copy.program());
  original.reset();
  EXPECT_EQ(copy.type(*first), ScalarType::U32);
}

// The promise of the middle stage, counted: a program read from JSON is
// checked once, and lowering, the cache key, the planner, the pipeline and
// the reference interpreter all take that checked form. (The lowering's
// passes check what they make: a program they change is checked again,
// as a new program; xor they leave as it is.)
TEST(CheckedProgram, AProgramIsValidatedOncePerProcess) {
  const std::string text = vyre::test::read_file(vyre::test::source_path("examples/xor.json"));
  const uint64_t before = ir::checks_run();
  const CheckedProgram program = program_from_json(text);
  Inputs in;
  in.set<uint32_t>("a", {1, 2, 3}).set<uint32_t>("b", {3, 2, 1}).size("out", 3);
  gpu::Backend backend(vyre::test::no_disk_cache());
  const Outputs gpu = backend.compile(program).dispatch(in);
  const Outputs ref = reference::run(program, in);
  const ShaderSpec spec = lower(program);
  EXPECT_EQ(gpu, ref);
  EXPECT_EQ(ir::checks_run() - before, 1u);
}

// One step makes the text and its interface: the text declares exactly the
// bindings the interface lists, in its order, with its kinds.
TEST(ShaderSpec, TheTextDeclaresExactlyTheInterface) {
  std::vector<CheckedProgram> programs = {vyre::test::xor_program(), vyre::test::every_construct_program()};
  for (const char* name : {"histogram", "reduction", "softmax", "matmul_tiled"}) programs.emplace_back(vyre::test::example(name));
  for (const CheckedProgram& p : programs) {
    const ShaderSpec spec = lower(p);
    const std::regex declaration(R"(@group\((\d+)\) @binding\((\d+)\) var<([a-z_, ]+)> b_([A-Za-z0-9_]+):)");
    std::vector<std::string> declared;
    for (auto it = std::sregex_iterator(spec.wgsl.begin(), spec.wgsl.end(), declaration); it != std::sregex_iterator(); ++it)
      declared.push_back((*it)[1].str() + "/" + (*it)[2].str() + "/" + (*it)[3].str() + "/" + (*it)[4].str());
    std::vector<std::string> expected;
    for (const ShaderBinding& b : spec.interface.bindings) {
      const char* kind = b.kind == BindingKind::Uniform ? "uniform" : b.kind == BindingKind::StorageRead ? "storage, read" : "storage, read_write";
      expected.push_back(std::to_string(b.group) + "/" + std::to_string(b.binding) + "/" + kind + "/" + b.buffer);
    }
    EXPECT_EQ(declared, expected) << p.name();
    EXPECT_EQ(spec.interface.length_bindings.size(), spec.interface.length_slots.size());
    for (size_t i = 0; i < spec.interface.length_slots.size(); ++i)
      EXPECT_EQ(spec.interface.bindings[spec.interface.length_bindings[i]].buffer, spec.interface.length_slots[i]);
    EXPECT_EQ(spec.interface.length_slots.empty(), !contains(spec.wgsl, "vyre_lengths")) << p.name();
    EXPECT_EQ(shader_interface(p).bindings.size(), spec.interface.bindings.size());
  }
}

// The one rule for the workgroup size: the lowering, the planner and the
// reference interpreter refuse the same overrides with the same words.
TEST(ShaderOptions, OneRuleForTheWorkgroupSizeEverywhere) {
  const CheckedProgram p = vyre::test::xor_program();
  Inputs in;
  in.set<uint32_t>("a", {1}).set<uint32_t>("b", {1}).size("out", 1);
  for (Dim3 bad : {Dim3{0, 1, 1}, Dim3{1025, 1, 1}, Dim3{64, 4, 5}}) {
    ShaderOptions o;
    o.workgroup_override = bad;
    std::set<std::string> messages;
    auto refused = [&](const std::function<void()>& f) {
      try {
        f();
        ADD_FAILURE() << "override accepted";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::invalid_input);
        messages.insert(e.what());
      }
    };
    refused([&] { lower(p, o); });
    refused([&] { shaping_signature(p, o); });
    refused([&] { reference::run(p, in, o); });
    EXPECT_EQ(messages.size(), 1u) << *messages.begin();
  }
  ShaderOptions ok;
  ok.workgroup_override = Dim3{32, 32, 1};
  EXPECT_EQ(effective_workgroup_size(p, ok), (Dim3{32, 32, 1}));
}

}  // namespace

namespace {

TEST(ReferenceInterpreter, AProgramThatNeverEndsStopsAtTheStepBudget) {
  const vyre::CheckedProgram forever = vyre::build::ProgramBuilder("forever")
                                           .output("out", 0, vyre::ScalarType::U32, 1)
                                           .body({vyre::build::let("x", vyre::build::u32(0)),
                                                  vyre::build::while_(vyre::build::boolean(true),
                                                                      {vyre::build::assign("x", vyre::build::add(vyre::build::var("x"), vyre::build::u32(1)))})})
                                           .build();
  try {
    vyre::reference::run(forever, vyre::Inputs{}, {}, vyre::Dim3{1, 1, 1}, 100'000);
    FAIL() << "a program without end ran to the end";
  } catch (const vyre::Error& e) {
    EXPECT_EQ(e.kind(), vyre::ErrorKind::limit_exceeded);
    EXPECT_NE(std::string(e.what()).find("stopped after 100000 statements"), std::string::npos) << e.what();
  }
  // Within the budget, the same interpreter finishes: 10 iterations of 2 statements, plus 2.
  const vyre::CheckedProgram ten = vyre::build::ProgramBuilder("ten")
                                       .output("out", 0, vyre::ScalarType::U32, 1)
                                       .body({vyre::build::loop("k", vyre::build::u32(0), vyre::build::u32(10), {vyre::build::store("out", vyre::build::u32(0), vyre::build::var("k"))})})
                                       .build();
  EXPECT_EQ(vyre::reference::run(ten, vyre::Inputs{}, {}, vyre::Dim3{1, 1, 1}, 11).get<uint32_t>("out")[0], 9u);
  EXPECT_THROW(vyre::reference::run(ten, vyre::Inputs{}, {}, vyre::Dim3{1, 1, 1}, 10), vyre::Error);
}

}  // namespace
