// Whether one dispatch of a widenable program may run its widened shader,
// and on which grid: the per-dispatch half of vector widening
// (lower/widening.hpp has the per-program half).
#pragma once

#include <optional>

#include "dispatch/plan.hpp"
#include "lower/widening.hpp"

namespace vyre {

// For a dispatch planned with the program's own (one element per
// invocation) semantics: the grid on which the widened shader computes
// exactly what the plan's grid would, or nullopt when it cannot. It can when
// the guard's length L is a positive multiple of 4, every widened buffer
// holds at least L elements, and the plan's grid gives each element below L
// exactly one invocation (a grid of [n, 1, 1] for gid.x, [n, m, 1] for the
// two-dimensional index, covering at least L and fewer than 2^32 invocations).
std::optional<Dim3> widened_grid(const Program& program, const Widening& widening, const DispatchPlan& plan);

}  // namespace vyre
