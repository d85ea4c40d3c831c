// The CPU reference interpreter: runs a program with WGSL's semantics
// exactly as docs/program-format.md states them, as the oracle the GPU is
// checked against, and on request checks what the GPU cannot: out-of-range
// accesses, data races, and results that depend on the invocations' order.
#pragma once

#include <cstdint>
#include <optional>

#include "vyre/checked.hpp"
#include "vyre/dispatch.hpp"
#include "vyre/export.hpp"
#include "vyre/shader_options.hpp"

namespace vyre::reference {

// Statements one run may execute, over all its invocations: a program that
// never ends (or would run for hours) stops with Error(limit_exceeded)
// instead of hanging its caller. About a minute of interpretation.
inline constexpr uint64_t kDefaultStepBudget = uint64_t{1} << 32;

// The most memory a run may hold in its buffers (the plan's buffers and the
// workgroup buffers, together, at 8 bytes an element whatever its type, so
// 256 Mi elements): a larger plan is refused with Error(limit_exceeded)
// before anything is allocated.
inline constexpr uint64_t kMaxMemoryBytes = 2ull << 30;

// What a run checks besides running, on request.
struct VYRE_API RunChecks {
  // A load, store or atomic at an index outside its buffer, by an invocation
  // in the launch domain, ends the run with a ProgramError whose one
  // diagnostic names the access's JSON path ("body[1].then[0].value.add[1]")
  // and the invocation, instead of WGSL's silent clamping (on the GPU) or
  // dropping (here, unchecked).
  bool bounds = false;
  // A data race ends the run with a ProgramError whose two diagnostics name
  // both accesses (their JSON paths and invocations): two invocations
  // touching one element between the same pair of barriers (of the buffer's
  // kind: workgroupBarrier for workgroup memory, storageBarrier for
  // storage; no barrier orders different workgroups), one of them writing,
  // on a buffer no atomic names (src/reference/race_check.hpp).
  bool races = false;
  // Runs each workgroup's invocations in an order drawn from this seed, anew
  // between every two barriers, instead of in index order: a missing
  // barrier the fixed order hides then changes the results from seed to seed.
  std::optional<uint64_t> shuffle_seed;
};

// Throws Error(invalid_input) for options or inputs that do not fit the
// program, exactly as the GPU backend does, and Error(limit_exceeded) past
// `step_budget` statements. `grid` is the launch's, as in
// gpu::Pipeline::dispatch.
VYRE_API Outputs run(const CheckedProgram& program, const Inputs& inputs, const ShaderOptions& options = {},
                     const std::optional<Dim3>& grid = std::nullopt, uint64_t step_budget = kDefaultStepBudget);
VYRE_API Outputs run(const CheckedProgram& program, const Inputs& inputs, const ShaderOptions& options,
                     const std::optional<Dim3>& grid, const RunChecks& checks,
                     uint64_t step_budget = kDefaultStepBudget);

}  // namespace vyre::reference
