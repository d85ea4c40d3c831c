// How a primitive lays its dispatches out: workgroups per pass, the grid
// that covers them, and the inputs and outputs each pass keeps alive until
// its Batch has run.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "vyre/checked.hpp"
#include "vyre/dispatch.hpp"
#include "vyre/gpu.hpp"
#include "kernels/shape_tuning.hpp"
#include "vyre/lib/reduce.hpp"
#include "vyre/lib/scan.hpp"

namespace vyre::lib::detail {

// One dispatch's inputs and outputs. A type of the library's own, so that the
// container holding them is no template over a public type, which would
// export its members from libvyre.
struct Pass {
  Inputs inputs;
  gpu::DeviceOutputs outputs;
};

// The workgroups that cover `elements`, each taking workgroup * items.
uint32_t groups_for(uint64_t elements, const ReduceShape& shape);

// Workgroups along x and y covering `groups`; a pass's program numbers its
// workgroup wid.x + wid.y * nwg.x. WebGPU allows 65,535 along one axis.
Dim3 grid_for(uint32_t groups);

// The number of elements in `bytes` of `type`, for `primitive`'s messages:
// throws Error(invalid_input) for a partial element, Error(limit_exceeded)
// beyond 2^32 - 1 elements.
uint32_t element_count(std::string_view primitive, size_t bytes, ScalarType type);

// ReduceShape (reduce's, scan's and bincount's) as named counts and back.
ShapeValues values_of(const ReduceShape& shape);
ReduceShape reduce_shape_of(const ShapeValues& values);

// Whether `check` returns without throwing Error: a shape a primitive's
// checks accept.
bool accepted(const std::function<void()>& check);

// The spans worth timing: workgroups of 64 to 512 invocations, 4 to 32 items
// each, those `fits` takes (a primitive's own limits on workgroup memory).
std::vector<ShapeValues> span_candidates(const std::function<bool(const ReduceShape&)>& fits);

// reduce_pass(type, op, shape), built and checked once per process (program_memo).
const CheckedProgram& checked_reduce_pass(ScalarType type, ReduceOp op, const ReduceShape& shape);

// Whether the reduce passes built from now on load a span unrolled (the
// default: all of an invocation's loads first, then its additions) or in a
// loop, one checked load at a time (as before 2026-12-06), for benchmarks
// that time both in one process. The results are the same.
void set_reduce_loads_unrolled(bool on);

// The workgroup of the first pass of the scans planned from now on (0: the
// scan's own; else W*I/w items each, the same spans); for benchmarks.
void set_scan_first_pass_workgroup(uint32_t w);

// The tiles of W*I each workgroup of scan's last pass scans in turn, the
// running total carried from each to the next (its span: count*W*I
// elements), and whether each tile's elements are loaded while the tile
// before is scanned.
struct ScanTiles {
  uint32_t count = 1;
  bool prefetched = false;
};

// scan's tiles on NVIDIA devices, where at least kTiledScanGroups
// workgroups are left (2^27 elements at 64 x 8: four times the workgroups
// of 2 warps an H100 holds at once); one tile elsewhere.
inline constexpr uint32_t kNvidiaScanTiles = 16;
inline constexpr uint64_t kTiledScanGroups = 16384;

// The tiles of a scan of `elements` at `shape` on `backend`: the switch's
// below where set, else the device's default above.
ScanTiles default_scan_tiles(const gpu::Backend& backend, uint64_t elements, const ReduceShape& shape);

// The tiles of the scans planned from now on, whatever the device and
// length (0: the default again); for benchmarks and tests.
void set_scan_tiles_per_workgroup(uint32_t tiles, bool prefetched = false);

// scan's last pass with `tiles` tiles of `shape` per workgroup (the inputs
// scan_pass's), and the shape of its first pass; for benchmarks.
Program scan_tiles_pass(ScalarType type, ReduceOp op, ScanKind kind, const ReduceShape& shape, uint32_t tiles,
                        bool prefetched);
ReduceShape scan_first_pass_shape(const ReduceShape& shape, uint32_t tiles);

// reduce's first pass: reduce_pass's, with each workgroup going on, round
// after round, to the span as many spans on as there are workgroups (a grid
// of one row), so that a few workgroups can take any length.
const CheckedProgram& checked_reduce_strided_pass(ScalarType type, ReduceOp op, const ReduceShape& shape);

// The invocations reduce's first pass runs at most (docs/lib.md, "reduce"):
// its workgroups are the spans of the input, at most this many invocations'
// worth (and 65,535).
inline constexpr uint32_t kReduceInvocations = uint32_t{1} << 18;

// The workgroups of reduce's first pass over `elements` at `shape`.
uint32_t reduce_first_groups(uint64_t elements, const ReduceShape& shape, uint32_t invocations = kReduceInvocations);

// The shape of reduce's later passes over `partials` values: 256
// invocations, and the power of two of items (2 to 64) that takes them in
// one workgroup where it can.
ReduceShape reduce_rest_shape(uint32_t partials);

// One reduce call at one shape, its first pass capped at `invocations`: its
// passes in one Batch, run and waited for.
std::shared_ptr<gpu::DeviceBuffer> reduce_with(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& values,
                                               ReduceOp op, const ReduceShape& shape,
                                               uint32_t invocations = kReduceInvocations);

}  // namespace vyre::lib::detail
