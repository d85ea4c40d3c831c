// An open device on one adapter: its queue and limits, device-loss tracking,
// error scopes and the waits that drive wgpu-native's callbacks.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/adapter_selection.hpp"
#include "gpu/gpu_timer.hpp"
#include "gpu/handles.hpp"
#include "vyre/gpu.hpp"

namespace vyre::gpu {

// What the devices of one Backend have created; shared by the devices it
// opens over its life (a lost device is replaced by a new one).
struct DeviceCounters {
  std::atomic<uint64_t> buffers_created{0};
  std::atomic<uint64_t> bind_groups_created{0};
  std::atomic<uint64_t> submits{0};
  std::atomic<uint64_t> devices_opened{0};
  std::atomic<uint64_t> next_buffer_id{1};
  // GPU timing (Backend::set_gpu_timing): whether submissions are timed now,
  // how many were, and their GPU time summed.
  std::atomic<bool> timing{false};
  std::atomic<uint64_t> timed_submits{0};
  std::atomic<uint64_t> gpu_ns{0};
};

// Whether VYRE_MASK_FEATURES names `feature` (e.g. "shader-f16").
bool feature_masked(std::string_view feature);

class DeviceContext {
 public:
  // Opens a device with the adapter's own limits (not WebGPU's defaults), so
  // large buffers and up to the adapter's invocations per workgroup work.
  // Throws Error(no_adapter) when the adapter cannot open one.
  // `timestamps`: ask for WebGPU's timestamp-query where the adapter has it
  // (BackendOptions::gpu_timestamps).
  static std::shared_ptr<DeviceContext> open(FoundAdapter adapter,
                                             std::shared_ptr<DeviceCounters> counters = nullptr,
                                             bool timestamps = false);
  // A new device on the same adapter, for after this one was lost.
  std::shared_ptr<DeviceContext> reopen() const;
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  WGPUDevice device() const { return device_.get(); }
  WGPUQueue queue() const { return queue_.get(); }
  const WGPULimits& limits() const { return limits_; }
  const AdapterInfo& adapter() const { return adapter_info_; }
  // Whether the device was opened with WebGPU's shader-f16: the adapter has
  // it and VYRE_MASK_FEATURES does not name it (docs/configuration.md).
  bool shader_f16() const { return shader_f16_; }
  // The same for wgpu-native's shader-f64 (Vulkan's shaderFloat64).
  bool shader_f64() const { return shader_f64_; }
  // The timestamps of submissions (gpu_timer.hpp): null unless the device
  // was opened asking for timestamp-query and has it.
  GpuTimer* timer() const { return timer_.get(); }
  // Whether submissions are to be timed now: a timer, and timing on.
  bool timing() const { return timer_ && counters_->timing.load(); }
  void add_gpu_time(uint64_t ns) {
    ++counters_->timed_submits;
    counters_->gpu_ns += ns;
  }
  // Whether VYRE_MASK_FEATURES named `feature` when the device was opened.
  bool masked(std::string_view feature) const {
    return std::find(masked_features_.begin(), masked_features_.end(), feature) != masked_features_.end();
  }

  // Error scopes are one stack per device, so every section that pushes and
  // pops them holds this lock.
  std::mutex& scope_mutex() { return scope_mutex_; }

  // Throws Error(device_lost) once the device is gone.
  void check_alive() const;
  bool lost() const;
  void mark_lost(std::string_view why);

  // Every buffer, bind group and submission goes through these, so that the
  // counters prove what a warm dispatch does not create. A buffer's id is
  // unique for the life of the process (addresses are reused).
  wgpu::Buffer create_buffer(uint64_t bytes, WGPUBufferUsage usage);
  uint64_t next_buffer_id() { return counters_->next_buffer_id++; }
  wgpu::BindGroup create_bind_group(const WGPUBindGroupDescriptor& descriptor);
  WGPUSubmissionIndex submit(WGPUCommandBuffer commands);
  const DeviceCounters& counters() const { return *counters_; }

  // Errors that reached no error scope: a count, and the latest message.
  uint64_t uncaptured_errors() const;
  std::string last_uncaptured_error() const;

  // Waits longer than `limit` fail: the device is marked lost, since its
  // work cannot be cancelled, and Error(device_lost) is thrown; the Backend
  // opens a new device on its next call. None: waits are unbounded.
  void set_wait_limit(std::optional<std::chrono::milliseconds> limit) { wait_limit_ = limit; }
  std::optional<std::chrono::milliseconds> wait_limit() const { return wait_limit_; }

  // Blocks until `done()` holds, polling the device so that callbacks run.
  // Throws Error(gpu) when the device goes idle and `done()` still fails.
  void poll_until(const std::function<bool()>& done);
  // Blocks until the given submission has finished.
  void wait_for(WGPUSubmissionIndex submission);
  // For work submitted without a wait: blocks only while more than
  // kMaxInFlight submissions are unfinished, so that a loop of asynchronous
  // dispatches cannot queue without bound.
  void throttle(WGPUSubmissionIndex submission);
  static constexpr size_t kMaxInFlight = 16;

  struct CallbackState;

 private:
  DeviceContext() = default;

  // With a wait limit: polls without blocking until `done()` holds (a
  // callback has said so), sleeping a little longer each round, and gives
  // the device up as lost at the deadline.
  void wait_bounded(const std::function<bool()>& done);

  std::optional<std::chrono::milliseconds> wait_limit_;
  bool abandoned_ = false;  // lost to a wait limit with work still running: never released
  std::unique_ptr<CallbackState> callbacks_;  // outlives device_: its callbacks point here
  std::shared_ptr<DeviceCounters> counters_;
  wgpu::Adapter adapter_;
  wgpu::Device device_;
  wgpu::Queue queue_;
  WGPULimits limits_{};
  bool shader_f16_ = false;
  bool shader_f64_ = false;
  bool timestamps_asked_ = false;
  std::unique_ptr<GpuTimer> timer_;
  std::vector<std::string> masked_features_;
  AdapterInfo adapter_info_;
  std::mutex scope_mutex_;
  std::mutex throttle_mutex_;
  std::array<WGPUSubmissionIndex, kMaxInFlight> in_flight_{};
  size_t in_flight_next_ = 0;
};

// Pushes validation and out-of-memory error scopes; check() pops them and
// throws what they caught, or what reached the device uncaptured meanwhile.
// Hold the device's scope_mutex() around it.
class ErrorScope {
 public:
  explicit ErrorScope(DeviceContext& device);
  ~ErrorScope();
  ErrorScope(const ErrorScope&) = delete;
  ErrorScope& operator=(const ErrorScope&) = delete;

  // The first error caught, if any.
  std::optional<std::string> pop();
  // Throws Error(gpu, what + the error), or Error(device_lost) when the error
  // says the device is gone.
  void check(std::string_view what);

 private:
  DeviceContext& device_;
  uint64_t uncaptured_before_;
  bool open_ = true;
};

}  // namespace vyre::gpu
