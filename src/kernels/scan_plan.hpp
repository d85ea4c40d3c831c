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
           ScanKind kind, const ReduceShape& shape);

  // Records the scan of `values` (at least one element); the buffer returned
  // holds it once the batch has run.
  std::shared_ptr<gpu::DeviceBuffer> record(const std::shared_ptr<gpu::DeviceBuffer>& values);

 private:
  gpu::Pipeline& inner() { return kind_ == ScanKind::Exclusive ? last_ : inner_; }
  std::shared_ptr<gpu::DeviceBuffer> level(const std::shared_ptr<gpu::DeviceBuffer>& values, gpu::Pipeline& pipeline,
                                           uint64_t first);

  ScalarType type_;
  ReduceOp op_;
  ScanKind kind_;
  ReduceShape shape_;
  gpu::Batch& batch_;
  std::deque<Pass>& passes_;  // every pass's inputs and outputs, alive until the batch has run
  gpu::Pipeline reduce_;
  gpu::Pipeline last_;
  gpu::Pipeline inner_;  // the spans' exclusive scan, where the user's is inclusive
};

}  // namespace vyre::lib::detail
