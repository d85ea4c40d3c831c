// Where barriers may stand: WGSL requires workgroupBarrier() and
// storageBarrier() to be reached in uniform control flow. This pass is at
// least as strict as WGSL's uniformity analysis, so that every program it
// accepts compiles on every WebGPU implementation (docs/program-format.md
// states the rule).
#pragma once

#include <vector>

#include "vyre/error.hpp"
#include "vyre/program.hpp"

namespace vyre {

// Expects a program that passed the type and scope checks.
std::vector<Diagnostic> check_uniformity(const Program& program);

}  // namespace vyre
