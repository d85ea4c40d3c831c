// Dispatch planning: which buffers a dispatch binds, how many elements each
// holds, what it starts with, and the grid. Shared by the GPU backend and the
// CPU reference interpreter so that both accept and refuse the same inputs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <span>
#include <vector>

#include "dispatch/default_grid.hpp"
#include "vyre/checked.hpp"
#include "vyre/dispatch.hpp"
#include "vyre/program.hpp"

namespace vyre {

// The most workgroups one dispatch may have (x * y * z), on every device.
inline constexpr uint64_t kMaxWorkgroupsPerDispatch = 0xffffffffull;

struct BufferPlan {
  const Buffer* buffer = nullptr;
  uint32_t elements = 0;
  std::span<const uint8_t> initial;      // host contents; empty: zero-filled (unless `device`)
  DeviceContents* device = nullptr;       // contents already on a GPU, bound in place
  const Inputs::Entry* entry = nullptr;   // the input that gave it, if any
};

struct DispatchPlan {
  Dim3 workgroup_size{1, 1, 1};      // effective (override applied)
  Dim3 grid{0, 1, 1};
  std::optional<Dim3> domain;       // the launch domain (Inputs::dim), when given
  std::vector<BufferPlan> buffers;  // every non-workgroup buffer, canonical order

  // The plan of `buffer` (one of the program's), or null for a workgroup buffer.
  const BufferPlan* plan_of(const Buffer* buffer) const {
    for (const BufferPlan& b : buffers)
      if (b.buffer == buffer) return &b;
    return nullptr;
  }
};

// Plans the dispatches of one program and its shader options. Reuses the
// plan's storage, so that planning again with inputs of the same shape
// allocates nothing.
class DispatchPlanner {
 public:
  // Throws Error(invalid_input) for options the program cannot take.
  DispatchPlanner(const CheckedProgram& program, const ShaderOptions& options);

  // Throws Error(invalid_input) naming the buffer when the inputs do not fit
  // the program. The launch is the inputs' domain (Inputs::dim) or `grid`;
  // with neither, the default grid where it is proven safe
  // (default_grid.hpp), else Error(invalid_input) saying what to give.
  // The plan points into the program and `inputs`, which must outlive its use.
  void plan(const Inputs& inputs, const std::optional<Dim3>& grid, DispatchPlan& out) const;

  const CheckedProgram& program() const { return program_; }

 private:
  CheckedProgram program_;
  Dim3 workgroup_size_;
  std::map<std::string, uint32_t> fixed_lengths_;  // ShaderOptions::fixed_lengths: a dispatch must give these
  DefaultGridProof default_grid_;
  Dim3 default_grid(const DispatchPlan& plan) const;
};

// Per plan buffer, the caller memory its output is read into (empty: not
// read back). `destinations` must already have one span per plan buffer.
// Throws Error(invalid_input) for a view of no output, given twice, of
// another size or of another element type.
void resolve_output_views(const Program& program, const DispatchPlan& plan, const OutputViews& views,
                          std::vector<std::span<uint8_t>>& destinations);

// One plan, for callers that dispatch once (the reference interpreter).
DispatchPlan plan_dispatch(const CheckedProgram& program, const ShaderOptions& options, const Inputs& inputs,
                           const std::optional<Dim3>& grid = std::nullopt);

}  // namespace vyre
