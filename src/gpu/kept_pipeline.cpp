#include "gpu/kept_pipeline.hpp"

#include "gpu/backend_state.hpp"

namespace vyre::gpu::detail {

Pipeline kept_pipeline(Backend& backend, const CheckedProgram& program) {
  const std::shared_ptr<BackendState>& state = state_of(backend);
  // live() opens a new device after a loss; a Pipeline kept on the lost one
  // is compiled again rather than made to report the loss a second time.
  const DeviceContext* device = state->live().device.get();
  {
    std::lock_guard lock(state->kept_mutex);
    if (auto found = state->kept.find(&program); found != state->kept.end() && found->second.device == device)
      return Pipeline(found->second.pipeline);
  }
  Pipeline made = backend.compile(program);
  std::lock_guard lock(state->kept_mutex);
  state->kept[&program] = {state_of(made), device};
  return made;
}

}  // namespace vyre::gpu::detail
