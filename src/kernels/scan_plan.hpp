// The passes of a scan, recorded into a Batch the caller runs: lib::scan
// runs one alone; sort records one per digit among its own passes.
#pragma once

#include <deque>
#include <memory>

#include "kernels/passes.hpp"
#include "vyre/gpu.hpp"
#include "vyre/lib/scan.hpp"

namespace vyre::lib::detail {

class ScanPlan {
 public:
  // Compiles the passes' pipelines; keep the plan until the batch has run.
  ScanPlan(gpu::Backend& backend, gpu::Batch& batch, std::deque<Pass>& passes, ScalarType type, ReduceOp op,
           ScanKind kind, const ReduceShape& shape, const ScanTiles& tiles = {});

  // Records the scan of `values` (at least one element); the buffer returned
  // holds it once the batch has run.
  std::shared_ptr<gpu::DeviceBuffer> record(const std::shared_ptr<gpu::DeviceBuffer>& values);

 private:
  std::shared_ptr<gpu::DeviceBuffer> level(const std::shared_ptr<gpu::DeviceBuffer>& values, bool top, uint64_t first);

  gpu::Backend& backend_;
  ScalarType type_;  // the accumulator's: the result's and every level's below the top
  ReduceOp op_;
  ScanKind kind_;
  ReduceShape shape_;  // the last pass's tiles
  uint32_t tiles_;     // tiles a workgroup of the last pass scans
  gpu::Batch& batch_;
  std::deque<Pass>& passes_;  // every pass's inputs and outputs, alive until the batch has run
  gpu::Pipeline reduce_top_;  // the caller's elements' spans, widened to the accumulator
  gpu::Pipeline reduce_;      // the spans' sums below the top
  gpu::Pipeline last_;        // the caller's elements, their kind of scan
  gpu::Pipeline inner_;       // the spans' sums, always exclusive
};

}  // namespace vyre::lib::detail
