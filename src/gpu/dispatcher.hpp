// Runs dispatches of one compute pipeline: uploads, one compute pass,
// readback into host memory, or outputs kept on the GPU. Buffers, staging
// buffers and bind groups live in frames that are kept between dispatches
// and reused while the sizes fit; bind groups are cached by the identity of
// the buffers they bind. So a warm dispatch creates nothing on the GPU and,
// reading into caller memory, allocates nothing on the host.
//
// A frame serves one dispatch of a submission: a single dispatch uses frame
// 0, the k-th dispatch of this pipeline in a Batch uses frame k.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "dispatch/plan.hpp"
#include "gpu/buffer_pool.hpp"
#include "gpu/compute_pipeline.hpp"
#include "gpu/handles.hpp"
#include "gpu/map_tracker.hpp"
#include "vyre/gpu.hpp"

namespace vyre::gpu {

// One dispatch as a submission runs it.
struct DispatchJob {
  DispatchPlan plan;
  size_t frame = 0;
  // Per plan buffer: the host memory its output is read into (empty: none),
  // and the DeviceBuffer an output kept on the GPU is written to (null: none).
  std::vector<std::span<uint8_t>> readback;
  std::vector<DeviceBuffer*> resident;
  // Set by the readback when the shader raised its loop guard.
  bool loop_cut_short = false;

  // Sizes the per-buffer vectors to the plan and empties them.
  void reset_destinations();
};

class Dispatcher {
 public:
  explicit Dispatcher(std::shared_ptr<const ComputePipeline> pipeline);
  ~Dispatcher();

  // One dispatch of a prepared job, under mutex(). `job.plan` must come from
  // the program this pipeline was lowered from. Throws Error(limit_exceeded)
  // for a grid or buffer beyond the device's limits, Error(gpu) for what the
  // GPU rejects, Error(device_lost) once it is gone; the dispatcher stays
  // usable after each.
  void run(DispatchJob& job, DispatchReport* report, bool wait);

  // GPU buffers this dispatcher created so far (storage, uniform, staging and lengths).
  uint64_t buffers_created() const { return buffers_created_; }
  const ComputePipeline& pipeline() const { return *pipeline_; }
  // One submission at a time uses the frames.
  std::mutex& mutex() { return mutex_; }
  // After a lost device: the same program on the new device; every frame is forgotten.
  void replace_pipeline(std::shared_ptr<const ComputePipeline> pipeline);

  // No GPU call and no allocation: the grid and every buffer's bound size
  // against the device's limits. Run right after planning, before any
  // buffer (host or GPU) is made for the dispatch, and again by check().
  void check_limits(const DispatchPlan& plan) const;

  // The stages a submission runs, in this order, under mutex().
  // No GPU call: matches bindings, checks limits and that device buffers
  // may be bound here.
  void check(const DispatchJob& job, bool allow_pending);
  // Buffers, bind group, queue writes. Under the device's scope_mutex().
  void bind(DispatchJob& job);
  // Encoding is split so that a submission records the dispatches of many
  // jobs into one compute pass (a pass each costs a barrier and a gap on
  // the GPU): every job's clears first, then the dispatches, with a job's
  // copies to staging right after its own dispatch.
  void encode_clears(const DispatchJob& job, WGPUCommandEncoder encoder);
  void encode_dispatch(const DispatchJob& job, WGPUComputePassEncoder pass);
  bool has_copies(const DispatchJob& job) const { return maps_needed(job) > 0; }
  void encode_copies(const DispatchJob& job, WGPUCommandEncoder encoder);
  size_t maps_needed(const DispatchJob& job) const;
  void request_maps(DispatchJob& job, MapTracker& tracker);
  void copy_out(DispatchJob& job, const MapTracker& tracker);
  // After a failure: the frame starts from fresh buffers next time.
  void forget_frame(size_t frame);

 private:
  struct Bound {  // one shader binding in the frame's present dispatch
    const ShaderBinding* shader = nullptr;
    size_t plan_index = 0;
    WGPUBuffer buffer = nullptr;
    uint64_t id = 0;
    uint64_t bytes = 0;       // bound size: never 0
    uint64_t clear_from = 0;  // zeroed from here to `bytes` before the pass
    WGPUBuffer staging = nullptr;
    size_t map_index = 0;
  };
  // What a uniform slot was last given: unchanged parameters (and lengths)
  // are not written again. Uniforms are never written by a shader.
  struct Written {
    uint64_t id = 0;  // the buffer written (0: none)
    std::vector<uint8_t> bytes;
  };
  struct CachedGroup {
    std::vector<uint64_t> key;  // (buffer id, bound size) per binding
    wgpu::BindGroup group;
    uint64_t last_used = 0;
  };
  struct Frame {
    std::vector<GpuBuffer> slots;    // per shader binding
    std::vector<GpuBuffer> staging;  // per shader binding
    std::vector<Written> written;    // per shader binding (uniforms only)
    GpuBuffer lengths;
    Written lengths_written;
    GpuBuffer guard;          // ShaderInterface::loop_guard: cleared before each pass, read after
    GpuBuffer guard_staging;
    size_t guard_map_index = 0;
    wgpu::BindGroup lengths_group;  // group 1: lengths and loop guard
    std::array<CachedGroup, 4> groups;
    WGPUBindGroup current_group = nullptr;
    uint64_t uses = 0;
    std::vector<Bound> bound;
    std::vector<uint64_t> key;                // scratch
    std::vector<WGPUBindGroupEntry> entries;  // scratch
    std::vector<uint32_t> lengths_words;      // scratch
  };

  Frame& frame(size_t index);
  void match(const DispatchPlan& plan, Frame& frame);
  // Creates `slot` unless it already holds `bytes`.
  void ensure(GpuBuffer& slot, uint64_t bytes, WGPUBufferUsage usage);
  void bind_group(Frame& frame);
  // False when `bytes` are what `written` says buffer `id` already holds;
  // else records them and returns true: they must be written.
  static bool needs_write(Written& written, uint64_t id, std::span<const uint8_t> bytes);
  // Group 1 (made once per frame) and the lengths it holds.
  void bind_own_group(const DispatchPlan& plan, Frame& frame);

  std::shared_ptr<const ComputePipeline> pipeline_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Frame>> frames_;
  uint64_t buffers_created_ = 0;
  // A single dispatch's map tracker, reused.
  std::unique_ptr<MapTracker> tracker_;
};

// Host memory for every output of `job`, each bound as its readback
// destination; after the run, outputs_by_name() hands it out by name.
std::vector<std::vector<uint8_t>> read_back_every_output(DispatchJob& job);
Outputs outputs_by_name(const DispatchPlan& plan, std::vector<std::vector<uint8_t>>& data);

// Runs jobs in one command buffer: one submission, then (with `wait`) one
// wait for all, readback included. The dispatchers' mutexes must be held.
struct Work {
  Dispatcher* dispatcher;
  DispatchJob* job;
};
void execute(DeviceContext& device, std::span<const Work> work, std::unique_ptr<MapTracker>& tracker,
             DispatchReport* report, bool allow_pending, bool wait);

}  // namespace vyre::gpu
