// vyre::gpu::Batch: dispatches recorded one by one, run in one command
// buffer with one submission and one wait.
#include <algorithm>

#include "gpu/backend_state.hpp"
#include "gpu/device_buffer.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"

namespace vyre::gpu {

using detail::BatchState;

struct detail::BatchState {
  std::shared_ptr<BackendState> backend;
  struct Recorded {
    std::shared_ptr<PipelineState> pipeline;
    DispatchJob job;
    DeviceOutputs kept;  // resident outputs, alive until the batch has run
  };
  // Kept between runs and refilled, so that a warm batch allocates nothing.
  std::vector<Recorded> recorded;
  size_t count = 0;
  std::unique_ptr<MapTracker> tracker = std::make_unique<MapTracker>();
  std::vector<Work> work;
  std::vector<PipelineState*> pipelines;  // distinct, in lock order

  ~BatchState() {
    if (tracker && !tracker->done()) keep_forever(std::move(tracker));  // a callback still to come writes there
  }

  Recorded& record(Pipeline& pipeline, const Inputs& inputs, const std::optional<Dim3>& grid) {
    std::shared_ptr<PipelineState> impl = state_of(pipeline);
    if (impl->backend.lock() != backend)
      throw Error(ErrorKind::invalid_input, "this Pipeline was compiled on another Backend than the Batch's: a "
                                            "batch runs on one device");
    if (count == recorded.size()) recorded.emplace_back();
    Recorded& r = recorded[count];
    if (!impl->plan(inputs, grid, r.job.plan)) {  // not for this shader: the variant's that takes it
      impl = impl->variant_for(r.job.plan);
      impl->plan(inputs, grid, r.job.plan);
    }
    impl->dispatcher.check_limits(r.job.plan);  // before any buffer is made for it
    r.job.frame = 0;
    for (size_t i = 0; i < count; ++i)
      if (recorded[i].pipeline == impl) ++r.job.frame;
    r.job.reset_destinations();
    r.pipeline = impl;
    return r;
  }

  // Locks every pipeline of the batch, always in address order, and runs it.
  void run_locked(DispatchReport* report) {
    pipelines.clear();
    for (size_t i = 0; i < count; ++i) pipelines.push_back(recorded[i].pipeline.get());
    std::sort(pipelines.begin(), pipelines.end());
    pipelines.erase(std::unique(pipelines.begin(), pipelines.end()), pipelines.end());
    size_t locked = 0;
    struct Unlock {
      std::vector<PipelineState*>& pipelines;
      size_t& locked;
      ~Unlock() {
        while (locked > 0) pipelines[--locked]->dispatcher.mutex().unlock();
      }
    } unlock{pipelines, locked};
    try {
      for (PipelineState* p : pipelines) {
        p->dispatcher.mutex().lock();
        ++locked;
        p->ensure_live_device();
      }
      DeviceContext& device = pipelines.front()->dispatcher.pipeline().device();
      work.clear();
      for (size_t i = 0; i < count; ++i) {
        Recorded& r = recorded[i];
        if (&r.pipeline->dispatcher.pipeline().device() != &device)
          throw Error(ErrorKind::device_lost, "the GPU device was lost while this batch was recorded; record it again");
        work.push_back({&r.pipeline->dispatcher, &r.job});
      }
      execute(device, work, tracker, report, true, true);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::device_lost)
        for (size_t k = 0; k < locked; ++k) pipelines[k]->note_loss();
      throw;
    }
  }

  // Drops what the recorded dispatches hold, keeping their storage.
  void forget() {
    for (size_t i = 0; i < count; ++i) {
      recorded[i].pipeline.reset();
      recorded[i].kept = DeviceOutputs();
    }
    count = 0;
  }
};

Batch::Batch(Backend& backend) : impl_(std::make_unique<BatchState>()) { impl_->backend = state_of(backend); }
Batch::~Batch() = default;
Batch::Batch(Batch&&) noexcept = default;
Batch& Batch::operator=(Batch&&) noexcept = default;

size_t Batch::size() const { return impl_ ? impl_->count : 0; }
void Batch::clear() {
  if (impl_) impl_->forget();
}

void Batch::dispatch_into(Pipeline& pipeline, const Inputs& inputs, const OutputViews& outputs,
                          const std::optional<Dim3>& grid) {
  BatchState::Recorded& r = impl_->record(pipeline, inputs, grid);
  try {
    resolve_output_views(r.pipeline->program, r.job.plan, outputs, r.job.readback);
  } catch (...) {
    r.pipeline.reset();  // not recorded
    throw;
  }
  ++impl_->count;
}

DeviceOutputs Batch::dispatch_resident(Pipeline& pipeline, const Inputs& inputs, const std::optional<Dim3>& grid) {
  BatchState::Recorded& r = impl_->record(pipeline, inputs, grid);
  try {
    r.kept = r.pipeline->resident_outputs(r.job, true);
  } catch (...) {
    r.pipeline.reset();  // not recorded
    throw;
  }
  ++impl_->count;
  return r.kept;
}

void Batch::run(DispatchReport* report) {
  BatchState& impl = *impl_;
  if (impl.count == 0) {
    if (report) *report = DispatchReport{};
    return;
  }
  try {
    impl.run_locked(report);
    if (report) report->vector_width = impl.recorded[impl.count - 1].pipeline->options.vector_width;
  } catch (...) {
    impl.forget();
    throw;
  }
  for (size_t i = 0; i < impl.count; ++i)
    for (const auto& [name, buffer] : impl.recorded[i].kept.all()) buffer->state(kStateKey).pending = false;
  impl.forget();
}

}  // namespace vyre::gpu
