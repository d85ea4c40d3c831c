// The differential tester (tests/differential/, docs/conformance.md,
// "Differential testing"): random programs on the reference interpreter and
// the GPU, every saved regression case, and the tester's own parts.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <unistd.h>

#include "../fuzz/choice_bytes.hpp"
#include "differential/choice_stream.hpp"
#include "differential/dawn_batch.hpp"
#include "differential/fuzz_campaign.hpp"
#include "differential/output_comparison.hpp"
#include "differential/random_program.hpp"
#include "differential/reproducer_files.hpp"
#include "differential/shrinker.hpp"
#include "support/fail_on_pass_bugs.hpp"
#include "support/test_support.hpp"
#include "vyre/json.hpp"
#include "vyre/lower.hpp"
#include "vyre/reference.hpp"
#include "vyre/validate.hpp"
#include "vyre/wire.hpp"

namespace vyre::differential {
namespace {

const ::testing::Environment* const kFailOnPassBugs =
    ::testing::AddGlobalTestEnvironment(new vyre::test::FailOnPassBugs);

uint64_t env_number(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return std::strtoull(v, nullptr, 10);
}

// The largest iteration count of the loops in `body`, nested counts
// multiplied (constant bounds only), and whether a load uses an index at the
// ends of u32 or i32.
uint64_t longest_loop(const std::vector<Stmt>& body) {
  uint64_t most = 0;
  for (const auto& s : body) {
    uint64_t here = std::max(longest_loop(s.body), longest_loop(s.else_body));
    if (s.op == StmtOp::Loop && s.exprs[1].op == Op::LitU32) here = std::max<uint64_t>(1, here) * s.exprs[1].imm;
    most = std::max(most, here);
  }
  return most;
}
bool extreme_index(const Expr& e) {
  if (e.op == Op::Load && !e.args.empty()) {
    const Expr& i = e.args[0];
    if ((i.op == Op::LitU32 && i.imm >= 0x80000000u) || (i.op == Op::LitI32 && (static_cast<int32_t>(i.imm) < 0 || i.imm == 0x7fffffffu)))
      return true;
  }
  return std::any_of(e.args.begin(), e.args.end(), extreme_index);
}
bool extreme_index(const std::vector<Stmt>& body) {
  for (const auto& s : body)
    if (std::any_of(s.exprs.begin(), s.exprs.end(), [](const Expr& e) { return extreme_index(e); }) ||
        extreme_index(s.body) || extreme_index(s.else_body))
      return true;
  return false;
}
// Calls `f` on each statement of kind `op` in `body`, nested ones included.
template <class F>
void for_each_statement(StmtOp op, const std::vector<Stmt>& body, const F& f) {
  for (const auto& s : body) {
    if (s.op == op) f(s);
    for_each_statement(op, s.body, f);
    for_each_statement(op, s.else_body, f);
  }
}

bool stress() {
  const char* v = std::getenv("VYRE_STRESS");
  return v && std::string(v) == "1";
}

// ---- the GPU against the reference --------------------------------------------------

TEST(Differential, RandomProgramsAgreeWithTheReference) {
  CampaignOptions options;
  options.first_seed = env_number("VYRE_DIFF_SEED_START", 0);
  options.seeds = env_number("VYRE_DIFF_SEEDS", stress() ? 20000 : 300);
  // Reproducers of failures go where a person can find them.
  const char* out = std::getenv("VYRE_DIFF_OUT");
  options.save_to = out && *out ? std::filesystem::path(out)
                                : std::filesystem::temp_directory_path() /
                                      ("vyre-differential-" + std::to_string(getpid()));
  CampaignReport report = run_campaign(options);
  EXPECT_EQ(report.ran, options.seeds);
  for (const Finding& f : report.findings)
    ADD_FAILURE() << "seed " << f.seed << ": " << to_string(f.outcome) << ", shrunk from " << f.original_nodes
                  << " to " << f.shrunk_nodes << " nodes and saved as " << f.saved_as.string()
                  << " (replay: build/tests/differential_fuzz --replay " << f.saved_as.string() << ")\n"
                  << f.detail;
  std::printf("%llu seeds from %llu in %.1f s; %llu refused by the loop guard\n", static_cast<unsigned long long>(report.ran),
              static_cast<unsigned long long>(options.first_seed), report.seconds,
              static_cast<unsigned long long>(report.refused_by_loop_guard));
}

TEST(Differential, RandomProgramsAgreeWithTheReferenceWhenTuned) {
  // Tuning never changes results: the configuration Backend::tune picks
  // (other workgroup shapes, widening) against the reference.
  CampaignOptions options;
  options.first_seed = env_number("VYRE_DIFF_SEED_START", 0);
  options.seeds = env_number("VYRE_DIFF_TUNED_SEEDS", stress() ? 2000 : 60);
  options.tune = true;
  options.save_to = std::filesystem::temp_directory_path() / ("vyre-differential-tuned-" + std::to_string(getpid()));
  CampaignReport report = run_campaign(options);
  EXPECT_EQ(report.ran, options.seeds);
  for (const Finding& f : report.findings)
    ADD_FAILURE() << "tuned, seed " << f.seed << ": " << to_string(f.outcome) << ", saved as " << f.saved_as.string()
                  << "\n" << f.detail;
  // The generator's programs mostly see their workgroup (its buffers, lid,
  // wid, nwg), which keeps their shape; tests/gpu_tuning_test.cpp proves the
  // other shapes on random workgroup-free programs.
  std::printf("%llu tuned seeds, %llu in another configuration than their own, in %.1f s\n",
              static_cast<unsigned long long>(report.ran), static_cast<unsigned long long>(report.retuned),
              report.seconds);
}

// The passes are on in the tests above (the default); here they are off,
// and then on, on other seeds, with every runtime length fixed in the shader.
void run_with_options(bool passes, bool fixed_lengths, uint64_t seed_offset, const char* what,
                      std::optional<uint8_t> ulp_budget = std::nullopt) {
  CampaignOptions options;
  options.first_seed = env_number("VYRE_DIFF_SEED_START", 0) + seed_offset;
  options.seeds = env_number("VYRE_DIFF_SEEDS", stress() ? 20000 : 300);
  options.passes = passes;
  options.specialize_lengths = fixed_lengths;
  options.ulp_budget = ulp_budget;
  options.save_to = std::filesystem::temp_directory_path() /
                    ("vyre-differential-" + std::to_string(seed_offset) + "-" + std::to_string(getpid()));
  CampaignReport report = run_campaign(options);
  EXPECT_EQ(report.ran, options.seeds);
  for (const Finding& f : report.findings)
    ADD_FAILURE() << what << ", seed " << f.seed << ": " << to_string(f.outcome) << ", saved as " << f.saved_as.string()
                  << "\n" << f.detail;
}

TEST(Differential, RandomProgramsAgreeWithTheReferenceWithoutThePasses) {
  run_with_options(false, false, 0, "without the passes");
}

TEST(Differential, RandomProgramsAgreeWithTheReferenceWithFixedLengths) {
  run_with_options(true, true, 1000000, "with fixed lengths");
}

// With the largest ULP budget, every operator that has a faster form gets
// it (docs/lowering.md, "ULP-budgeted forms"), on seeds of their own.
TEST(Differential, RandomProgramsAgreeWithTheReferenceWithTheUlpBudget) {
  run_with_options(true, false, 2000000, "with the ULP budget", 255);
}

// The same seeds on Dawn (Chromium's WebGPU: Tint compiles the WGSL), in
// the lowering's default (the passes on) and without the passes, and on
// other seeds with their lengths fixed.
void dawn_campaign(bool passes, bool fixed_lengths, uint64_t seed_offset, const char* what,
                   std::optional<uint8_t> ulp_budget = std::nullopt) {
  CampaignOptions options;
  options.first_seed = env_number("VYRE_DIFF_SEED_START", 0) + seed_offset;
  options.seeds = env_number("VYRE_DIFF_SEEDS", stress() ? 20000 : 300);
  options.wgpu_native = false;
  options.dawn = true;
  options.passes = passes;
  options.specialize_lengths = fixed_lengths;
  options.ulp_budget = ulp_budget;
  const char* out = std::getenv("VYRE_DIFF_OUT");
  options.save_to = out && *out ? std::filesystem::path(out)
                                : std::filesystem::temp_directory_path() /
                                      ("vyre-differential-" + std::to_string(getpid()));
  CampaignReport report = run_campaign(options);
  if (!report.dawn_skipped.empty()) {
    if (std::getenv("CI")) FAIL() << "CI must run the differential tests on Dawn: " << report.dawn_skipped;
    GTEST_SKIP() << report.dawn_skipped;
  }
  for (const Finding& f : report.findings)
    ADD_FAILURE() << what << ", seed " << f.seed << ": " << to_string(f.outcome) << ", shrunk from " << f.original_nodes
                  << " to " << f.shrunk_nodes << " nodes and saved as " << f.saved_as.string() << "\n"
                  << f.detail;
  std::printf("%llu seeds on Dawn (%s) in %.1f s\n", static_cast<unsigned long long>(report.ran), what, report.seconds);
}

TEST(Differential, RandomProgramsAgreeOnDawn) { dawn_campaign(true, false, 0, "the passes on"); }
TEST(Differential, RandomProgramsAgreeOnDawnWithoutThePasses) { dawn_campaign(false, false, 0, "the passes off"); }
TEST(Differential, RandomProgramsAgreeOnDawnWithFixedLengths) { dawn_campaign(true, true, 1000000, "lengths fixed"); }
TEST(Differential, RandomProgramsAgreeOnDawnWithTheUlpBudget) {
  dawn_campaign(true, false, 2000000, "the ULP budget", 255);
}

// Every reproducer saved in `folder` still gives its known-right outputs on
// the reference, and the GPU and Dawn agree with it.
void replay_saved_cases(const std::string& folder) {
  const auto files = list_reproducers(test::source_path(folder));
  ASSERT_FALSE(files.empty()) << folder << " holds cases the tester found";
  gpu::Backend backend = make_backend();
  std::vector<Reproducer> cases;
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    Reproducer r = load_reproducer(file);
    ASSERT_TRUE(r.expect.has_value()) << "the run file has no \"expect\"";
    const RunResult run = run_differential(backend, r.c);
    ASSERT_TRUE(run.reference.has_value()) << to_string(run.outcome) << ": " << run.detail;
    // The reference still gives the outputs that are known to be right...
    for (const Buffer& b : r.c.program.buffers) {
      if (!b.output) continue;
      const auto want = r.expect->get<uint32_t>(b.name), got = run.reference->get<uint32_t>(b.name);
      ASSERT_EQ(want.size(), got.size()) << b.name;
      for (size_t i = 0; i < want.size(); ++i) {
        const bool both_nan = b.type == ScalarType::F32 && std::isnan(std::bit_cast<float>(want[i])) &&
                              std::isnan(std::bit_cast<float>(got[i]));
        EXPECT_TRUE(want[i] == got[i] || both_nan) << b.name << "[" << i << "]: expected "
                                                    << format_element(b.type, want[i]) << ", reference gives "
                                                    << format_element(b.type, got[i]);
      }
    }
    // ...and the GPU agrees with it.
    EXPECT_EQ(run.outcome, Outcome::agree) << run.detail;
    cases.push_back(std::move(r));
  }

  // So does Dawn (Chromium's WebGPU, with Tint as the WGSL compiler).
  std::vector<const GeneratedCase*> on_dawn;
  for (const auto& r : cases) on_dawn.push_back(&r.c);
  const DawnBatch batch = run_on_dawn(on_dawn);
  if (!batch.skipped.empty()) {
    if (std::getenv("CI")) FAIL() << "CI must run the regression cases on Dawn: " << batch.skipped;
    GTEST_SKIP() << batch.skipped;
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    const RunResult r = judge_dawn(cases[i].c, *cases[i].expect, batch.results[i]);
    EXPECT_EQ(r.outcome, Outcome::agree) << files[i].filename().string() << " on Dawn: " << r.detail;
  }
}

TEST(Differential, EverySavedRegressionCaseAgrees) { replay_saved_cases("tests/differential/regressions"); }

// Cases where a driver is wrong (docs/conformance.md): the reference and
// every other device must still be right on them; on the named driver this
// test fails, as it should.
TEST(Differential, DriverDefectCasesAgreeWhereTheDriverIsRight) {
  replay_saved_cases("tests/differential/driver_defects");
}

// ---- the generator -------------------------------------------------------------------

void collect(const Expr& e, std::set<Op>& ops, std::set<AtomicOp>& atomics) {
  ops.insert(e.op);
  if (e.op == Op::Atomic) atomics.insert(static_cast<AtomicOp>(e.imm));
  for (const auto& a : e.args) collect(a, ops, atomics);
}

void collect(const std::vector<Stmt>& body, std::set<StmtOp>& stmts, std::set<BarrierKind>& barriers,
             std::set<Op>& ops, std::set<AtomicOp>& atomics) {
  for (const auto& s : body) {
    stmts.insert(s.op);
    if (s.op == StmtOp::Barrier) barriers.insert(s.barrier);
    for (const auto& e : s.exprs) collect(e, ops, atomics);
    collect(s.body, stmts, barriers, ops, atomics);
    collect(s.else_body, stmts, barriers, ops, atomics);
  }
}

TEST(Differential, GeneratedProgramsAreValidAndReachEveryConstruct) {
  std::set<Op> ops;
  std::set<AtomicOp> atomics;
  std::set<StmtOp> stmts;
  std::set<BarrierKind> barriers;
  std::set<std::pair<Access, ScalarType>> buffers;
  std::set<std::string> shapes;
  // Seeds 300045 and 1004035 once gave a uniform loop variable the name of
  // a non-uniform local declared later or earlier, which made a barrier's
  // condition non-uniform. Validation alone is fast: many seeds (2,000 in
  // the sanitized builds, where the 20,000 took 280 s).
  std::vector<uint64_t> seeds{300045, 1004035};
  const uint64_t count = vyre::test::kSanitizedBuild ? 2000 : 20000;
  for (uint64_t seed = 0; seed < count; ++seed) seeds.push_back(seed);
  for (uint64_t seed : seeds) {
    const GeneratedCase c = generate_case(seed);
    const auto diagnostics = validate(c.program);
    ASSERT_TRUE(diagnostics.empty()) << "seed " << seed << ": " << diagnostics[0].path << ": " << diagnostics[0].message
                                     << "\n" << program_to_json(c.program);
    if (seed >= 2000) continue;  // the reach below counts the first 2000
    collect(c.program.body, stmts, barriers, ops, atomics);
    for (const auto& b : c.program.buffers) {
      buffers.insert({b.access, b.type});
      shapes.insert(b.runtime_sized() ? "runtime-sized" : "fixed count");
      if (b.output && c.contents.count(b.name)) shapes.insert("output with initial contents");
      if (b.runtime_sized() && c.contents.count(b.name) && c.contents.at(b.name).empty()) shapes.insert("empty input");
    }
    if (c.options.workgroup_override) shapes.insert("workgroup override");
    // The lengths uniform packs four to a row: a fifth length is in row 1.
    if (shader_interface(c.program, c.options).length_slots.size() >= 5) shapes.insert("five lengths");
    if (c.grid && (*c.grid)[1] == 1 && (*c.grid)[2] == 1 && c.options.workgroup_override == std::nullopt)
      for (const Buffer* b : canonical_buffer_order(c.program))
        if (b->output) {
          const uint32_t wg = c.program.workgroup_size[0];
          if (c.sizes.count(b->name) && (*c.grid)[0] == (c.sizes.at(b->name) + wg - 1) / wg)
            shapes.insert("grid from the first output");
          break;
        }
    // The classes a driver's limits break (lavapipe ends loops after 65,535
    // iterations in all): long loops, nested loops past that, extreme indices.
    const uint64_t longest = longest_loop(c.program.body);
    if (longest >= 30'000) shapes.insert("long loop");
    if (longest > 65'535) shapes.insert("loops past 65,535 iterations");
    if (extreme_index(c.program.body)) shapes.insert("extreme constant index");
    for_each_statement(StmtOp::Loop, c.program.body, [&](const Stmt& s) {
      if (s.exprs.size() == 3) shapes.insert(s.exprs[2].op == Op::LitI32 && static_cast<int32_t>(s.exprs[2].imm) < 0
                                                 ? "loop counting down"
                                                 : "loop counting up by a step");
    });
    for (const auto& [name, rule] : c.compare) shapes.insert("rule " + std::to_string(static_cast<int>(rule.kind)));
    for_each_statement(StmtOp::Array, c.program.body,
                       [&](const Stmt& s) { shapes.insert("private " + std::string(to_string(s.element_type)) + " array"); });
  }
  // f16 and f64 need the device features shader-f16 and shader-f64, which
  // Dawn's SwiftShader, one of the tester's devices, lacks: they are tested
  // in tests/f16_test.cpp and tests/f64_test.cpp instead.
  for (Op op : all_ops())
    if (op != Op::LitF16 && op != Op::LitF64) {
      EXPECT_TRUE(ops.count(op)) << "never generated: " << op_info(op).json;
    }
  for (int a = 0; a <= static_cast<int>(AtomicOp::Load); ++a)
    EXPECT_TRUE(atomics.count(static_cast<AtomicOp>(a))) << "never generated: atomic " << to_string(static_cast<AtomicOp>(a));
  for (int s = 0; s <= static_cast<int>(StmtOp::Array); ++s)
    EXPECT_TRUE(stmts.count(static_cast<StmtOp>(s))) << "never generated: " << to_string(static_cast<StmtOp>(s));
  EXPECT_EQ(barriers.size(), 2u);
  for (Access a : {Access::Read, Access::ReadWrite, Access::Uniform, Access::Workgroup})
    for (ScalarType t : {ScalarType::U32, ScalarType::I32, ScalarType::F32})
      EXPECT_TRUE(buffers.count({a, t})) << "never generated: " << to_string(a) << " " << to_string(t) << " buffer";
  // Format version 4's packed elements, in inputs and in outputs.
  for (Access a : {Access::Read, Access::ReadWrite})
    for (ScalarType t : {ScalarType::U8, ScalarType::I8, ScalarType::U16, ScalarType::I16, ScalarType::Bool})
      EXPECT_TRUE(buffers.count({a, t})) << "never generated: " << to_string(a) << " " << to_string(t) << " buffer";
  for (const char* shape : {"runtime-sized", "fixed count", "output with initial contents", "empty input",
                            "workgroup override", "grid from the first output", "five lengths", "rule 0", "rule 1", "rule 2",
                            "long loop", "loops past 65,535 iterations", "extreme constant index", "loop counting down",
                            "loop counting up by a step", "private u32 array", "private i32 array", "private f32 array"})
    EXPECT_TRUE(shapes.count(shape)) << "never generated: " << shape;
}

// Found by the tester (seeds 2912 and 2913): a workgroup f32 buffer whose
// domain left out zero fed `bitcast(i32, 0.0 - x)`; workgroup memory starts
// as zeros, the result was a zero, and lavapipe gave it the other sign.
// A choice sequence the fuzzer found, which nested buffer loads inside the
// indexes of buffer loads past the format's 200 levels: the generator now
// ends such nesting with a literal (kMaxIndexNesting). The file is also in
// the fuzzer's seed corpus, which every fuzz run replays.
TEST(Differential, LoadsInsideIndexesStayWithinTheFormatsNesting) {
  const std::string path = std::string(VYRE_SOURCE_DIR) + "/fuzz/corpus/program_roundtrip_fuzz/regression-index-nesting";
  const std::string bytes = test::read_file(path);
  ASSERT_FALSE(bytes.empty()) << path;
  ChoiceStream choices = ChoiceStream::replay(
      fuzz::decisions_from_bytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  const GeneratedCase c = generate_case(choices);
  for (const Diagnostic& d : validate(c.program)) ADD_FAILURE() << d.path.substr(0, 200) << ": " << d.message;
}

TEST(Differential, MemoryThatStartsAsZerosHasZeroInItsDomain) {
  for (uint64_t seed = 0; seed < 3000; ++seed) {
    const GeneratedCase c = generate_case(seed);
    for (const auto& b : c.program.buffers) {
      const bool starts_zeroed = b.access == Access::Workgroup || (b.access == Access::ReadWrite && !c.contents.count(b.name));
      EXPECT_FALSE(starts_zeroed && c.zero_free.count(b.name)) << "seed " << seed << ": " << b.name << " holds "
                                                               << c.domains.at(b.name);
    }
  }
}

// A seed makes the same case whichever compiler built the generator: it takes
// its decisions in an order C++ fixes, never two in the arguments of one call
// or the operands of one operator, whose order of evaluation is unspecified
// (GCC and clang differ: before this test, seed 0 made another program under
// clang). The main build (GCC) and the sanitized builds (clang 14) both run
// it. A generator changed on purpose changes the digest: update it here.
TEST(Differential, ASeedMakesTheSameCaseWhicheverCompilerBuiltTheGenerator) {
  std::string all;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const GeneratedCase c = generate_case(seed);
    all += digest(c.program).hex() + ";";
    for (const auto& [name, bits] : c.contents) {
      all += name + ":";
      for (uint32_t b : bits) all += std::to_string(b) + ",";
    }
    for (const auto& [name, n] : c.sizes) all += name + "=" + std::to_string(n) + ";";
    if (c.grid) all += "grid " + std::to_string((*c.grid)[0]) + "," + std::to_string((*c.grid)[1]) + "," +
                       std::to_string((*c.grid)[2]);
    all += "\n";
  }
  EXPECT_EQ(sha256(all).hex(), "ca50368faeb60cc264327c7601addbf4bfb456b599b48fe45998c83d51e2a006")
      << "the cases of seeds 0 to 199 changed";
}

TEST(Differential, ASeedAndItsRecordedDecisionsMakeTheSameCase) {
  for (uint64_t seed : {1u, 77u, 4242u}) {
    ChoiceStream recorded = ChoiceStream::from_seed(seed);
    const GeneratedCase a = generate_case(recorded);
    ChoiceStream replayed = ChoiceStream::replay(recorded.decisions());
    const GeneratedCase b = generate_case(replayed);
    EXPECT_EQ(a.program, b.program);
    EXPECT_EQ(a.contents, b.contents);
    EXPECT_EQ(a.sizes, b.sizes);
    EXPECT_EQ(a.options, b.options);
    EXPECT_EQ(a.grid, b.grid);
    EXPECT_EQ(replayed.decisions(), recorded.decisions());
  }
}

// ---- shrinking -----------------------------------------------------------------------

bool holds_op(const std::vector<Stmt>& body, Op op) {
  std::set<StmtOp> s;
  std::set<BarrierKind> b;
  std::set<Op> ops;
  std::set<AtomicOp> a;
  collect(body, s, b, ops, a);
  return ops.count(op) != 0;
}

TEST(Differential, ShrinkingKeepsTheFailureAndMakesTheCaseSmall) {
  // A stand-in failure that needs no GPU: "the program counts bits".
  uint64_t seed = 0;
  while (!holds_op(generate_case(seed).program.body, Op::Popcount)) ++seed;
  ChoiceStream choices = ChoiceStream::from_seed(seed);
  const GeneratedCase original = generate_case(choices);
  size_t runs = 0;
  const StillFails fails = [&](const GeneratedCase& c) {
    ++runs;
    return validate(c.program).empty() && holds_op(c.program.body, Op::Popcount);
  };
  const ShrinkResult r = shrink(choices.decisions(), fails);
  EXPECT_TRUE(fails(r.smallest));
  EXPECT_LT(r.smallest.node_count(), original.node_count());
  EXPECT_LE(r.smallest.node_count(), 12u) << program_to_json(r.smallest.program);
  EXPECT_LE(r.attempts, ShrinkOptions{}.max_attempts + ShrinkOptions{}.max_case_attempts);
  EXPECT_GT(runs, 0u);
}

// ---- comparison ----------------------------------------------------------------------

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

TEST(Differential, ComparisonRulesAcceptWhatWgslAllowsAndNothingMore) {
  const CompareRule exact{};
  CompareRule f32_bits;
  f32_bits.kind = CompareRule::Kind::f32_bits;
  CompareRule bounded;
  bounded.kind = CompareRule::Kind::f32_bounded;
  bounded.ulps = 2;
  bounded.abs = 0;

  EXPECT_TRUE(element_agrees(ScalarType::U32, exact, 7, 7));
  EXPECT_FALSE(element_agrees(ScalarType::U32, exact, 7, 8));
  EXPECT_FALSE(element_agrees(ScalarType::F32, exact, bits(0.0f), bits(-0.0f)));

  EXPECT_TRUE(element_agrees(ScalarType::F32, f32_bits, bits(0.0f), bits(-0.0f)));  // the sign of a zero
  EXPECT_TRUE(element_agrees(ScalarType::F32, f32_bits, 0x7fc00000u, 0xffc00001u));  // any NaN
  EXPECT_TRUE(element_agrees(ScalarType::F32, f32_bits, 0x00000001u, bits(0.0f)));   // a flushed subnormal
  EXPECT_FALSE(element_agrees(ScalarType::F32, f32_bits, bits(0.0f), 0x00000001u));  // but never the other way
  EXPECT_FALSE(element_agrees(ScalarType::F32, f32_bits, bits(1.0f), bits(1.0f) + 1));
  EXPECT_FALSE(element_agrees(ScalarType::F32, f32_bits, 0x7fc00000u, bits(1.0f)));
  EXPECT_FALSE(element_agrees(ScalarType::F32, f32_bits, 0x00800000u, bits(0.0f)));  // a normal is never flushed

  EXPECT_TRUE(element_agrees(ScalarType::F32, bounded, bits(1.0f), bits(1.0f) + 2));
  EXPECT_FALSE(element_agrees(ScalarType::F32, bounded, bits(1.0f), bits(1.0f) + 3));
  EXPECT_TRUE(element_agrees(ScalarType::F32, bounded, bits(1.0f), bits(1.0f) - 4));  // below 1, ULPs are half as wide
  EXPECT_FALSE(element_agrees(ScalarType::F32, bounded, bits(1.0f), bits(1.0f) - 5));
  EXPECT_FALSE(element_agrees(ScalarType::F32, bounded, bits(1.0f), 0x7f800000u));
  bounded.abs = 0.5;
  EXPECT_TRUE(element_agrees(ScalarType::F32, bounded, bits(1.0f), bits(1.5f)));
  EXPECT_FALSE(element_agrees(ScalarType::F32, bounded, bits(1.0f), bits(1.6f)));
}

// ---- reproducer files ----------------------------------------------------------------

TEST(Differential, ReproducerFilesReadBackTheCase) {
  test::TempDir dir;
  for (uint64_t seed : {3u, 19u, 500u}) {
    SCOPED_TRACE(seed);
    Reproducer r;
    r.c = generate_case(seed);
    r.c.options.workgroup_override = r.c.program.workgroup_size;
    r.description = "a \"quoted\" line";
    r.outcome = "mismatch";
    r.detail = "x[0]: reference 1, GPU 2";
    r.expect = reference::run(r.c.program, r.c.inputs(), r.c.options, r.c.grid);
    r.gpu = r.expect;
    const auto file = save_reproducer(dir.path(), "case" + std::to_string(seed), r);
    const Reproducer back = load_reproducer(file);
    // As the format's JSON holds it: an f32 literal NaN reads back as the
    // one NaN JSON spells ("nan"), whatever payload the generator gave it
    // (seed 3 has one; GPUs do not keep payloads either).
    EXPECT_EQ(program_to_json(back.c.program), program_to_json(r.c.program));
    EXPECT_EQ(back.c.sizes, r.c.sizes);
    EXPECT_EQ(back.c.options, r.c.options);
    EXPECT_EQ(back.c.grid, r.c.grid);
    EXPECT_EQ(back.c.compare, r.c.compare);
    EXPECT_EQ(back.c.shortenable, r.c.shortenable);
    EXPECT_EQ(back.c.seed, seed);
    EXPECT_EQ(back.description, r.description);
    EXPECT_EQ(back.detail, r.detail);
    ASSERT_EQ(back.c.contents.size(), r.c.contents.size());
    for (const auto& [name, values] : r.c.contents) {
      const auto& got = back.c.contents.at(name);
      ASSERT_EQ(got.size(), values.size()) << name;
      for (size_t i = 0; i < values.size(); ++i) {
        const bool nan = r.c.program.find_buffer(name)->type == ScalarType::F32 &&
                         std::isnan(std::bit_cast<float>(values[i]));
        // f32 inputs are written as decimals: every value but a NaN's payload comes back.
        if (nan) EXPECT_TRUE(std::isnan(std::bit_cast<float>(got[i]))) << name << "[" << i << "]";
        else EXPECT_EQ(got[i], values[i]) << name << "[" << i << "]";
      }
    }
  }
  EXPECT_EQ(list_reproducers(dir.path()).size(), 3u);
}

}  // namespace
}  // namespace vyre::differential
