// Re-tiling a dispatch onto another workgroup shape without changing what it
// computes: the half of autotuning that proves a candidate safe
// (docs/tuning.md). A program whose invocations see nothing of their
// workgroup (no lid, wid or nwg, no workgroup buffer, no barrier) does the
// same work on any shape that runs the same set of global invocation ids.
#pragma once

#include <optional>
#include <string>

#include "dispatch/plan.hpp"
#include "lower/widening.hpp"

namespace vyre {

// Why the program's results depend on its workgroup shape, or nullopt when
// they do not.
std::optional<std::string> workgroup_dependence(const CheckedProgram& program);

// For a dispatch planned with the program's own shape (`plan`), the grid on
// which workgroups of `shape` run exactly the invocations that have an
// effect under the plan's grid, or nullopt when no grid does. Every axis's
// invocation count must divide by the shape; an element-wise program
// (`widening` given, index gid.x, one row) may instead cover its guard's
// length L with any shape, since invocations at or past L do nothing.
// Call only for a program with no workgroup dependence.
std::optional<Dim3> retiled_grid(const Program& program, const DispatchPlan& plan, const Dim3& shape,
                                 const std::optional<Widening>& widening);

}  // namespace vyre
