// Every pass program of vyre::lib (tests/support/lib_pass_cases.cpp) on the
// local GPU against the reference interpreter: the same outputs, bit for bit
// (or within the case's few ULPs for f32 outputs of exp or a product). The
// primitives' own tests check whole calls against the host; this checks each
// program the way the conformance suite checks any other, and the same cases
// run on Dawn in tests/dawn_test.cpp.
#include <gtest/gtest.h>

#include "support/lib_pass_cases.hpp"
#include "support/lowering_backend.hpp"
#include "vyre/reference.hpp"

using namespace vyre;

namespace {

TEST(LibPasses, EveryPassProgramAgreesWithTheReference) {
  gpu::Backend& backend = test::lowering_backend();
  const std::vector<test::LibPassCase> cases = test::lib_pass_cases();
  ASSERT_GE(cases.size(), 40u);
  for (const test::LibPassCase& c : cases) {
    const Outputs gpu = backend.compile(c.program).dispatch(c.inputs, c.grid);
    const Outputs ref = reference::run(c.program, c.inputs, {}, c.grid);
    EXPECT_FALSE(ref.all().empty()) << c.name;
    for (const auto& [name, want] : ref.all()) {
      std::string why;
      EXPECT_TRUE(test::lib_pass_output_agrees(c, name, gpu.bytes(name), want, why)) << c.name << ": " << why;
    }
  }
}

}  // namespace
