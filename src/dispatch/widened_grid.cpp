#include "dispatch/widened_grid.hpp"

#include <algorithm>

namespace vyre {
std::optional<Dim3> widened_grid(const Program& program, const Widening& widening, const DispatchPlan& plan) {
  const BufferPlan* guard = plan.plan_of(&program.buffers[widening.guard]);
  if (guard == nullptr) return std::nullopt;
  const uint64_t length = guard->elements;
  if (length == 0 || length % kWideWidth != 0) return std::nullopt;
  for (const Widening::Access& a : widening.buffers) {
    const BufferPlan* b = plan.plan_of(&program.buffers[a.buffer]);
    if (b == nullptr || b->elements < length) return std::nullopt;
  }
  const Dim3& g = plan.grid;
  const uint64_t group = plan.workgroup_size[0];
  // Each element below L must have exactly one invocation: no repeated rows
  // or layers, no index that wraps, and enough invocations.
  if (g[2] != 1) return std::nullopt;
  if (widening.index == FlatIndex::GidX && g[1] != 1) return std::nullopt;
  const uint64_t invocations = uint64_t{g[0]} * g[1] * group;
  if (invocations < length || invocations > 0xffffffffull) return std::nullopt;
  // The widened shader's invocations: one per four elements, the same index form.
  const uint64_t groups = (length / kWideWidth + group - 1) / group;
  if (widening.index == FlatIndex::GidX) return Dim3{static_cast<uint32_t>(groups), 1, 1};
  const uint64_t x = std::min<uint64_t>(groups, g[0]);
  return Dim3{static_cast<uint32_t>(x), static_cast<uint32_t>((groups + x - 1) / x), 1};
}

}  // namespace vyre
