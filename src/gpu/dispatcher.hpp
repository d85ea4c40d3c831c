// Runs dispatches of one compute pipeline: uploads, one compute pass,
// readback. GPU buffers, staging buffers and bind groups are kept between
// dispatches and reused while the sizes fit, so a warm dispatch allocates no
// GPU memory.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "dispatch/plan.hpp"
#include "gpu/compute_pipeline.hpp"
#include "gpu/handles.hpp"
#include "vyre/gpu.hpp"

namespace vyre::gpu {

class Dispatcher {
 public:
  explicit Dispatcher(std::shared_ptr<const ComputePipeline> pipeline);

  // `plan` must come from the program this pipeline was lowered from. Throws
  // Error(limit_exceeded) for a grid or buffer beyond the device's limits,
  // Error(gpu) for what the GPU rejects, Error(device_lost) once it is gone;
  // the dispatcher stays usable after each.
  Outputs run(const DispatchPlan& plan, DispatchReport* report = nullptr);

  // GPU buffers created so far (storage, uniform, staging and lengths).
  uint64_t buffers_created() const { return buffers_created_; }

 private:
  struct Slot {
    wgpu::Buffer buffer;
    uint64_t capacity = 0;
    wgpu::Buffer staging;
    uint64_t staging_capacity = 0;
  };
  struct Binding {  // one shader binding in this dispatch
    const ShaderBinding* shader;
    const BufferPlan* plan;
    uint64_t bytes;  // bound size: never 0
  };

  std::vector<Binding> match(const DispatchPlan& plan) const;
  void check_limits(const DispatchPlan& plan, const std::vector<Binding>& bindings) const;
  // Creates `buffer` unless it already holds `bytes`; true when it did.
  bool ensure(wgpu::Buffer& buffer, uint64_t& capacity, uint64_t bytes, WGPUBufferUsage usage);
  void prepare(const std::vector<Binding>& bindings);
  void upload(const std::vector<Binding>& bindings);
  wgpu::CommandBuffer encode(const DispatchPlan& plan, const std::vector<Binding>& bindings);
  void read_back(const std::vector<Binding>& bindings, Outputs& outputs);
  void forget_buffers();

  std::shared_ptr<const ComputePipeline> pipeline_;
  std::mutex mutex_;  // one dispatch at a time: they share the buffers
  std::vector<Slot> slots_;  // parallel to interface().bindings
  wgpu::Buffer lengths_;
  uint64_t lengths_capacity_ = 0;
  wgpu::BindGroup buffers_group_;
  wgpu::BindGroup lengths_group_;
  std::vector<uint64_t> bound_sizes_;  // binding sizes buffers_group_ was made with
  uint64_t buffers_created_ = 0;
};

}  // namespace vyre::gpu
