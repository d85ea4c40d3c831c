// One GPU backend per test program whose cache keeps nothing: every compile
// lowers the program again, so a test of the lowering never reads an entry
// an earlier build wrote.
#pragma once

#include "vyre/gpu.hpp"

namespace vyre::test {

gpu::Backend& lowering_backend();

}  // namespace vyre::test
