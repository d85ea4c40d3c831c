// The reference interpreter's checks (reference::RunChecks): an out-of-range
// access, dropped silently by default, is a ProgramError naming its JSON path
// and invocation; invocations outside the launch domain are not reported; a
// data race names both accesses; a shuffled order shows a missing barrier.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "support/programs.hpp"

#include "support/test_support.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"
#include "vyre/reference.hpp"
#include "vyre/run_file.hpp"

namespace vyre {
namespace {

using namespace vyre::build;
using vyre::test::contains;

// out[i] = a[i] + 1 under the off-by-one check `i <= len(out)`.
CheckedProgram off_by_one() {
  return ProgramBuilder("off_by_one")
      .workgroup_size(4)
      .input("a", 0, ScalarType::U32)
      .output("out", 1, ScalarType::U32)
      .body({let("i", gid(Axis::X)),
             if_(le(var("i"), len("out")), {store("out", var("i"), add(load("a", var("i")), u32(1)))})})
      .build();
}

TEST(ReferenceChecks, AnOutOfRangeAccessIsSilentUncheckedAndAProgramErrorAtItsPathChecked) {
  Inputs in;
  in.set<uint32_t>("a", {1, 2, 3, 4}).size("out", 4);
  EXPECT_EQ(reference::run(off_by_one(), in, {}, Dim3{2, 1, 1}).get<uint32_t>("out"),
            (std::vector<uint32_t>{2, 3, 4, 5}));
  reference::RunChecks checks;
  checks.bounds = true;
  try {
    reference::run(off_by_one(), in, {}, Dim3{2, 1, 1}, checks);
    ADD_FAILURE() << "the out-of-range load was not reported";
  } catch (const ProgramError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].path, "body[1].then[0].value.add[0]");
    EXPECT_TRUE(contains(e.diagnostics()[0].message, "a load of 'a' at index 4, out of its 4 elements")) << e.what();
    EXPECT_TRUE(contains(e.diagnostics()[0].message, "gid (4, 0, 0)")) << e.what();
  }
  // A store past the end, its load made safe by a longer input.
  in.set<uint32_t>("a", {1, 2, 3, 4, 5});
  try {
    reference::run(off_by_one(), in, {}, Dim3{2, 1, 1}, checks);
    ADD_FAILURE() << "the out-of-range store was not reported";
  } catch (const ProgramError& e) {
    EXPECT_EQ(e.diagnostics()[0].path, "body[1].then[0]");
    EXPECT_TRUE(contains(e.diagnostics()[0].message, "a store to 'out' at index 4")) << e.what();
  }
  // Invocations outside the domain have no effect, and are not reported.
  in.dim(4);
  EXPECT_EQ(reference::run(off_by_one(), in, {}, std::nullopt, checks).get<uint32_t>("out"),
            (std::vector<uint32_t>{2, 3, 4, 5}));
}

// tile[lid] = in[gid]; [barrier]; invocation 0 sums the tile into out[wid].
CheckedProgram tile_sum(bool with_barrier) {
  std::vector<Stmt> body{store("tile", lid_flat(), load("in", gid(Axis::X)))};
  if (with_barrier) body.push_back(barrier(BarrierKind::Workgroup));
  body.push_back(if_(eq(lid_flat(), u32(0)),
                     {let("sum", u32(0)),
                      loop("k", u32(0), u32(4), {assign("sum", add(var("sum"), load("tile", var("k"))))}),
                      store("out", wid(Axis::X), var("sum"))}));
  return ProgramBuilder("tile_sum")
      .workgroup_size(4)
      .input("in", 0, ScalarType::U32)
      .output("out", 1, ScalarType::U32)
      .workgroup_buffer("tile", ScalarType::U32, 4)
      .body(std::move(body))
      .build();
}

reference::RunChecks races() {
  reference::RunChecks checks;
  checks.races = true;
  return checks;
}

std::vector<Diagnostic> race_of(const CheckedProgram& p, const Inputs& in, const std::optional<Dim3>& grid) {
  try {
    reference::run(p, in, {}, grid, races());
  } catch (const ProgramError& e) {
    return e.diagnostics();
  }
  return {};
}

TEST(ReferenceChecks, AMissingBarrierIsADataRaceNamingBothAccesses) {
  Inputs in;
  in.set<uint32_t>("in", {1, 2, 3, 4, 5, 6, 7, 8}).size("out", 2);
  const auto ds = race_of(tile_sum(false), in, Dim3{2, 1, 1});
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_TRUE(contains(ds[0].message, "a data race on 'tile' element ")) << ds[0].message;
  EXPECT_TRUE(contains(ds[0].message, "with no workgroupBarrier between them")) << ds[0].message;
  const std::set<std::string> paths{ds[0].path, ds[1].path};
  EXPECT_EQ(paths, (std::set<std::string>{"body[0]", "body[1].then[1].body[0].value.add[1]"}));
  // With the barrier there is none, and the sums are right.
  EXPECT_TRUE(race_of(tile_sum(true), in, Dim3{2, 1, 1}).empty());
  EXPECT_EQ(reference::run(tile_sum(true), in, {}, Dim3{2, 1, 1}, races()).get<uint32_t>("out"),
            (std::vector<uint32_t>{10, 26}));
}

TEST(ReferenceChecks, WritesOfOneStorageElementByTwoWorkgroupsRaceAndAtomicsDoNot) {
  const CheckedProgram last_writer = ProgramBuilder("last_writer")
                                         .workgroup_size(2)
                                         .output("out", 0, ScalarType::U32, 1)
                                         .body({store("out", u32(0), gid(Axis::X))})
                                         .build();
  const auto ds = race_of(last_writer, Inputs{}, Dim3{2, 1, 1});
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_TRUE(contains(ds[0].message, "a store by the invocation with gid (1, 0, 0) and a store by the invocation "
                                      "with gid (0, 0, 0)"))
      << ds[0].message;
  const CheckedProgram counter = ProgramBuilder("counter")
                                     .workgroup_size(2)
                                     .output("out", 0, ScalarType::U32, 1)
                                     .body({eval(atomic(AtomicOp::Add, "out", u32(0), u32(1)))})
                                     .build();
  EXPECT_TRUE(race_of(counter, Inputs{}, Dim3{3, 1, 1}).empty());
}

TEST(ReferenceChecks, TheExamplesAndTheirRunFilesHaveNoRace) {
  for (const char* name : {"xor", "saxpy", "collatz", "histogram", "reduction", "prefix_sum", "matmul_tiled",
                           "softmax", "bitonic_sort", "byte_count", "find_pattern"}) {
    const CheckedProgram p = vyre::test::example(name);
    const RunInputs run = read_run_file(p.program(), vyre::test::source_path(std::string("examples/") + name +
                                                                              ".run.json").string());
    EXPECT_NO_THROW(reference::run(p, run.inputs, {}, run.grid, races())) << name;
  }
}

TEST(ReferenceChecks, AShuffledOrderShowsWhatAMissingBarrierHides) {
  Inputs in;
  in.set<uint32_t>("in", {1, 2, 3, 4, 5, 6, 7, 8}).size("out", 2);
  // In index order invocation 0 runs first and sums a tile the others have
  // not written yet: the same wrong sums every time.
  std::set<std::vector<uint32_t>> sums;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    reference::RunChecks shuffled;
    shuffled.shuffle_seed = seed;
    sums.insert(reference::run(tile_sum(false), in, {}, Dim3{2, 1, 1}, shuffled).get<uint32_t>("out"));
    EXPECT_EQ(reference::run(tile_sum(true), in, {}, Dim3{2, 1, 1}, shuffled).get<uint32_t>("out"),
              (std::vector<uint32_t>{10, 26}))
        << seed;
  }
  EXPECT_GT(sums.size(), 1u) << "the missing barrier changed nothing across eight orders";
}

}  // namespace
}  // namespace vyre
