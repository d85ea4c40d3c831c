#include "dispatch/plan.hpp"
#include "vyre/dispatch.hpp"

namespace vyre {

std::map<std::string, uint32_t> dispatched_lengths(const CheckedProgram& program, const Inputs& inputs,
                                                   const std::optional<Dim3>& grid) {
  const DispatchPlan plan = plan_dispatch(program, {}, inputs, grid);
  std::map<std::string, uint32_t> out;
  for (const Buffer* b : program.length_buffers())
    for (const BufferPlan& p : plan.buffers)
      if (p.buffer == b) out[b->name] = p.elements;
  return out;
}

}  // namespace vyre
