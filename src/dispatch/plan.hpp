// Dispatch planning: which buffers a dispatch binds, how many elements each
// holds, what it starts with, and the grid. Shared by the GPU backend and the
// CPU reference interpreter so that both accept and refuse the same inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "vyre/dispatch.hpp"
#include "vyre/program.hpp"

namespace vyre {

struct BufferPlan {
  const Buffer* buffer = nullptr;
  uint32_t elements = 0;
  std::span<const uint8_t> initial;  // empty: zero-filled
};

struct DispatchPlan {
  Dim3 workgroup_size{1, 1, 1};      // effective (override applied)
  Dim3 grid{0, 1, 1};
  std::vector<BufferPlan> buffers;  // every non-workgroup buffer, canonical order
};

// Throws Error(invalid_input) naming the buffer when the inputs do not fit the
// program. The plan points into `program` and `inputs`, which must outlive it.
DispatchPlan plan_dispatch(const Program& program, const DispatchConfig& config, const Inputs& inputs,
                           const std::optional<Dim3>& grid_override = std::nullopt);

}  // namespace vyre
