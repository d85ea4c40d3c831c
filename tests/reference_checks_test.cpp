// The reference interpreter's checks (reference::RunChecks): an out-of-range
// access, dropped silently by default, is a ProgramError naming its JSON path
// and invocation; invocations outside the launch domain are not reported.
#include <gtest/gtest.h>

#include <vector>

#include "support/test_support.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"
#include "vyre/reference.hpp"

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

}  // namespace
}  // namespace vyre
