// Autotuning's parts that need no GPU: which programs may change workgroup
// shape, the grid that runs the same invocations on another shape, and the
// tuning record's text (its round trip and hostile records).
#include <gtest/gtest.h>

#include "dispatch/plan.hpp"
#include "dispatch/retile.hpp"
#include "lower/widening.hpp"
#include "support/programs.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"
#include "vyre/builder.hpp"
#include "vyre/json.hpp"

namespace vyre {
namespace {

using namespace vyre::build;
using vyre::test::example;
using vyre::test::grid_2d_program;

TEST(Retile, ProgramsThatSeeTheirWorkgroupSayWhy) {
  EXPECT_EQ(workgroup_dependence(example("saxpy")), std::nullopt);
  EXPECT_EQ(workgroup_dependence(grid_2d_program()), std::nullopt);
  EXPECT_NE(workgroup_dependence(example("reduction"))->find("workgroup buffer 'scratch'"), std::string::npos);
  EXPECT_NE(workgroup_dependence(example("matmul_tiled"))->find("workgroup buffer"), std::string::npos);
  const CheckedProgram uses_lid = ProgramBuilder("lid")
                                      .output("out", 0, ScalarType::U32)
                                      .body({if_(lt(gid(), len("out")), {store("out", gid(), lid())})})
                                      .build();
  EXPECT_NE(workgroup_dependence(uses_lid)->find("lid"), std::string::npos);
  const CheckedProgram uses_nwg = ProgramBuilder("nwg")
                                      .output("out", 0, ScalarType::U32)
                                      .body({if_(lt(gid(), len("out")), {store("out", gid(), nwg())})})
                                      .build();
  EXPECT_NE(workgroup_dependence(uses_nwg)->find("nwg"), std::string::npos);
  const CheckedProgram uses_barrier = ProgramBuilder("barrier")
                                          .output("out", 0, ScalarType::U32)
                                          .body({barrier(BarrierKind::Storage), if_(lt(gid(), len("out")), {store("out", gid(), u32(1))})})
                                          .build();
  EXPECT_NE(workgroup_dependence(uses_barrier)->find("barrier"), std::string::npos);
}

TEST(Retile, SameInvocationsOrNoGrid) {
  const CheckedProgram p = grid_2d_program();
  Inputs in;
  in.set<uint32_t>("width", {64}).set("a", std::vector<uint32_t>(64 * 32)).size("out", 64 * 32);
  const DispatchPlan plan = plan_dispatch(p, {}, in, Dim3{8, 4, 1});  // 64 x 32 invocations
  EXPECT_EQ(retiled_grid(p.program(), plan, {16, 16, 1}, std::nullopt), (Dim3{4, 2, 1}));
  EXPECT_EQ(retiled_grid(p.program(), plan, {64, 1, 1}, std::nullopt), (Dim3{1, 32, 1}));
  EXPECT_EQ(retiled_grid(p.program(), plan, {128, 1, 1}, std::nullopt), std::nullopt);  // 64 columns
  EXPECT_EQ(retiled_grid(p.program(), plan, {4, 64, 1}, std::nullopt), std::nullopt);   // 32 rows
  EXPECT_EQ(retiled_grid(p.program(), plan, {0, 1, 1}, std::nullopt), std::nullopt);
}

TEST(Retile, AnElementWiseProgramCoversItsLengthOnAnyShape) {
  const CheckedProgram p = example("saxpy");
  ShaderOptions wide;
  wide.vector_width = kWideWidth;
  const std::optional<Widening> widening = find_widening(p, wide);
  ASSERT_TRUE(widening);
  Inputs in;
  in.set<float>("alpha", {2.0f}).set("x", std::vector<float>(1000)).set("y", std::vector<float>(1000)).size("out", 1000);
  const DispatchPlan plan = plan_dispatch(p, {}, in);  // 16 workgroups of 64: 1024 invocations, 1000 with an effect
  EXPECT_EQ(plan.grid, (Dim3{16, 1, 1}));
  EXPECT_EQ(retiled_grid(p.program(), plan, {256, 1, 1}, widening), (Dim3{4, 1, 1}));
  EXPECT_EQ(retiled_grid(p.program(), plan, {1000, 1, 1}, widening), (Dim3{1, 1, 1}));
  // Without the element-wise guarantee, 1024 invocations need a shape dividing 1024.
  EXPECT_EQ(retiled_grid(p.program(), plan, {1000, 1, 1}, std::nullopt), std::nullopt);
  // A grid covering fewer than L elements keeps exactly its invocations.
  const DispatchPlan partial = plan_dispatch(p, {}, in, Dim3{4, 1, 1});  // 256 of 1000
  EXPECT_EQ(retiled_grid(p.program(), partial, {128, 1, 1}, widening), (Dim3{2, 1, 1}));
  EXPECT_EQ(retiled_grid(p.program(), partial, {512, 1, 1}, widening), std::nullopt);
}

aot::TuningRecord sample_record() {
  aot::TuningRecord r;
  r.size_class = "invocations 2^20 x 2^0 x 2^0";
  r.own_workgroup = {64, 1, 1};
  r.workgroup = {256, 1, 1};
  r.vector_width = 4;
  r.warmup = 2;
  r.repetitions = 7;
  r.batch = 4;
  r.tuning_ms = 812.5;
  r.candidates.push_back({{64, 1, 1}, 1, true, 1.25, 1.2, ""});
  r.candidates.push_back({{256, 1, 1}, 4, true, 0.5, 0.49, ""});
  r.candidates.push_back({{32, 1, 1}, 1, false, 0, 0, "grid too large: \"quoted\"\nsecond line"});
  return r;
}

TEST(TuningRecord, RoundTrips) {
  const aot::TuningRecord r = sample_record();
  std::string problem;
  const std::optional<aot::TuningRecord> back = aot::decode_tuning_record(aot::encode_tuning_record(r), &problem);
  ASSERT_TRUE(back) << problem;
  EXPECT_EQ(back->size_class, r.size_class);
  EXPECT_EQ(back->own_workgroup, r.own_workgroup);
  EXPECT_EQ(back->workgroup, r.workgroup);
  EXPECT_EQ(back->vector_width, 4);
  EXPECT_EQ(back->repetitions, 7u);
  EXPECT_EQ(back->batch, 4u);
  EXPECT_DOUBLE_EQ(back->tuning_ms, 812.5);
  ASSERT_EQ(back->candidates.size(), 3u);
  EXPECT_DOUBLE_EQ(back->candidates[1].median_ms, 0.5);
  EXPECT_FALSE(back->candidates[2].ran);
  EXPECT_EQ(back->candidates[2].note, r.candidates[2].note);
  EXPECT_FALSE(back->chose_own());
}

TEST(TuningRecord, HostileTextIsRefusedWithAReason) {
  const std::string good = aot::encode_tuning_record(sample_record());
  auto refused = [](const std::string& text) {
    std::string problem;
    EXPECT_FALSE(aot::decode_tuning_record(text, &problem)) << text;
    return problem;
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  EXPECT_NE(refused("").find("format"), std::string::npos);
  EXPECT_NE(refused("@@@ not toml").find("invalid TOML"), std::string::npos);
  EXPECT_NE(refused(std::string(good.size() / 2, 'x')).find("not a tuning record"), std::string::npos);
  EXPECT_NE(refused(replaced("format = 1", "format = 2")).find("format 2"), std::string::npos);
  EXPECT_NE(refused(replaced("vector_width = 4", "vector_width = 3")).find("vector_width"), std::string::npos);
  EXPECT_NE(refused(replaced("workgroup = [ 256, 1, 1 ]", "workgroup = [ 2048, 1, 1 ]")).find("workgroup"),
            std::string::npos);
  EXPECT_NE(refused(replaced("workgroup = [ 256, 1, 1 ]", "workgroup = [ 64, 64, 1 ]")).find("1024 invocations"),
            std::string::npos);
  EXPECT_NE(refused(replaced("tuning_ms = 812.5", "tuning_ms = nan")).find("tuning_ms"), std::string::npos);
  EXPECT_NE(refused(replaced("batch = 4", "batch = 0")).find("batch"), std::string::npos);
  EXPECT_NE(refused(replaced("tuning_ms = 812.5", "tuning_ms = -1.0")).find("tuning_ms"), std::string::npos);
  EXPECT_NE(refused(replaced("median_ms = 0.5", "median_ms = \"fast\"")).find("candidate 2"), std::string::npos);
}

TEST(TuningRecord, KeyNamesSizeClassDeviceAndOptions) {
  const CheckedProgram p = example("saxpy");
  const aot::KeyParts a = aot::tuning_key_parts(p, "device A", "invocations 2^20 x 2^0 x 2^0");
  EXPECT_TRUE(aot::is_tuning_record(a));
  EXPECT_FALSE(aot::is_tuning_record(aot::key_parts(p, "device A")));
  EXPECT_EQ(a.fingerprint, "device A");
  EXPECT_EQ(a.lowering_version, aot::kTuningRecordFormat);
  ShaderOptions override_size;
  override_size.workgroup_override = Dim3{128, 1, 1};
  const std::set<std::string> keys{a.key(), aot::tuning_key_parts(p, "device B", "invocations 2^20 x 2^0 x 2^0").key(),
                                   aot::tuning_key_parts(p, "device A", "invocations 2^21 x 2^0 x 2^0").key(),
                                   aot::tuning_key_parts(p, "device A", "invocations 2^20 x 2^0 x 2^0", override_size).key(),
                                   aot::key_parts(p, "device A").key()};
  EXPECT_EQ(keys.size(), 5u);
}

}  // namespace
}  // namespace vyre
