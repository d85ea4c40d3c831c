// What a Backend and its Pipelines hold, shared by backend.cpp, batch.cpp
// and the tests that reach inside (vyre/gpu.hpp declares them opaque).
#pragma once

#include <map>
#include <memory>
#include <array>
#include <mutex>
#include <string>

#include "dispatch/plan.hpp"
#include "lower/widening.hpp"
#include "gpu/buffer_pool.hpp"
#include "gpu/compute_pipeline.hpp"
#include "gpu/device.hpp"
#include "gpu/dispatcher.hpp"
#include "gpu/state_key.hpp"
#include "vyre/gpu.hpp"

namespace vyre::gpu {

using detail::BackendState;
using detail::PipelineState;

// What every Pipeline compiled from one cache key shares.
struct Compiled {
  ShaderSpec spec;
  std::shared_ptr<const ComputePipeline> pipeline;
};

struct detail::BackendState {
  std::shared_ptr<DeviceCounters> counters = std::make_shared<DeviceCounters>();
  AdapterInfo adapter;
  std::string fingerprint;           // override, else the adapter's full fingerprint
  std::string shaping_fingerprint;   // override, else what of the adapter shapes the text
  std::shared_ptr<aot::Cache> cache;
  BackendReport report;
  bool widen = true;                 // BackendOptions::widen

  // One entry per cache key; its mutex makes threads that compile the same
  // program wait for the first instead of compiling it again.
  struct Entry {
    std::mutex mutex;
    std::shared_ptr<const Compiled> compiled;
  };
  std::shared_ptr<Entry> entry(const std::string& key);

  // The open device and its buffer pool; after a loss, a new device on the
  // same adapter.
  struct Live {
    std::shared_ptr<DeviceContext> device;
    std::shared_ptr<BufferPool> pool;
  };
  Live live();
  void open(std::shared_ptr<DeviceContext> device);

  // The compiled pipeline for `parts` on the live device: from memory, else
  // the AOT cache or lowering; rebuilt from its WGSL after a device loss.
  std::shared_ptr<const Compiled> compiled(const aot::KeyParts& parts, const CheckedProgram& program,
                                           const ShaderOptions& options, CompileReport& report);

  // The standard kernels' Pipelines, by program (kept_pipeline.hpp), each
  // with the device it was compiled on.
  struct Kept {
    std::shared_ptr<PipelineState> pipeline;
    const DeviceContext* device = nullptr;
  };
  std::mutex kept_mutex;
  std::map<const CheckedProgram*, Kept> kept;

 private:
  std::mutex device_mutex_;
  Live live_;
  std::mutex entries_mutex_;
  std::map<std::string, std::shared_ptr<Entry>, std::less<>> entries_;
};

struct detail::PipelineState {
  CheckedProgram program;
  ShaderOptions options;
  std::shared_ptr<const Compiled> compiled;
  CompileReport report;
  std::weak_ptr<BackendState> backend;
  std::shared_ptr<BufferPool> pool;
  DispatchPlanner planner;
  Dispatcher dispatcher;    // buffers of this Pipeline alone
  DispatchJob job;          // a single dispatch's, reused
  const DeviceContext* reported_loss = nullptr;  // the lost device this Pipeline has told of
  // A widened shader's (options.vector_width 4): what it relies on.
  std::optional<Widening> widening;
  // The one-element variants for the dispatches this shader cannot take
  // (a widened shader's that widening does not allow; with a launch domain
  // or without one, the other guard), by domain guard, each compiled at the
  // first of them.
  std::mutex variants_mutex;
  std::array<std::shared_ptr<PipelineState>, 2> variants;

  PipelineState(CheckedProgram p, ShaderOptions o, std::shared_ptr<const Compiled> shared, CompileReport r,
                std::weak_ptr<BackendState> owner, std::shared_ptr<BufferPool> buffers);
  PipelineState(const PipelineState&) = delete;
  PipelineState& operator=(const PipelineState&) = delete;

  // Under dispatcher.mutex(). A lost device is told of once, by
  // Error(device_lost); the next call moves to the Backend's new device.
  void ensure_live_device();
  // Plans a dispatch of these inputs into `out`: false when this shader
  // cannot take it (see variant_for).
  bool plan(const Inputs& inputs, const std::optional<Dim3>& grid, DispatchPlan& out) const;
  // With the dispatcher's mutex held: a live device, and `job` planned for
  // these inputs with no destinations yet; nullptr when plan() says false.
  DispatchJob* prepare(const Inputs& inputs, const std::optional<Dim3>& grid);
  // The one-element variant that takes a dispatch planned as `plan`, with
  // the domain guard when the plan has a domain (compiled once, on the
  // Backend's live device).
  std::shared_ptr<PipelineState> variant_for(const DispatchPlan& plan);
  // Runs `job` under dispatcher.mutex(), noting a loss it meets.
  void run(DispatchReport* report, bool wait);
  // The DeviceBuffers for the outputs of `job`, kept on the GPU.
  DeviceOutputs resident_outputs(DispatchJob& job, bool pending);
  // The device this Pipeline runs on, for noting a loss.
  void note_loss() { reported_loss = &dispatcher.pipeline().device(); }
};

// Compiles with exactly these options (and the adapter's driver
// workarounds): Backend::compile less its choice of widening, for the tuner.
Pipeline compile_exact(const std::shared_ptr<BackendState>& state, const CheckedProgram& program,
                       const ShaderOptions& options);

// The state behind a Backend or a Pipeline (for Batch and the tests that
// reach inside); Error(invalid_input) for a moved-from or empty handle.
const std::shared_ptr<BackendState>& state_of(const Backend& backend);
const std::shared_ptr<PipelineState>& state_of(const Pipeline& pipeline);

}  // namespace vyre::gpu
