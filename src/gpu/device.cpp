#include "gpu/device.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "gpu/kept_forever.hpp"
#include "sys/deadline.hpp"
#include "sys/environment.hpp"
#include "util/log.hpp"
#include "vyre/error.hpp"

namespace vyre::gpu {

// What wgpu-native's device callbacks report, read by the rest of the backend.
struct DeviceContext::CallbackState {
  std::atomic<bool> lost{false};
  std::atomic<uint64_t> uncaptured{0};  // errors no scope caught (internal ones among them)
  std::mutex mutex;
  std::string why;
  std::string last_uncaptured;

  void set_lost(std::string_view reason) {
    std::lock_guard lock(mutex);
    if (!lost.exchange(true)) why = reason;
  }
  void add_uncaptured(std::string_view message) {
    std::lock_guard lock(mutex);
    last_uncaptured = message;
    ++uncaptured;
  }
};

namespace {

std::string_view loss_reason(WGPUDeviceLostReason reason) {
  switch (reason) {
    case WGPUDeviceLostReason_Destroyed: return "destroyed";
    case WGPUDeviceLostReason_CallbackCancelled: return "released";
    case WGPUDeviceLostReason_FailedCreation: return "failed creation";
    default: return "unknown";
  }
}

void on_device_lost(WGPUDevice const*, WGPUDeviceLostReason reason, WGPUStringView message, void* state, void*) {
  if (reason == WGPUDeviceLostReason_CallbackCancelled) return;  // we released it
  const std::string why = std::string(loss_reason(reason)) + ": " + std::string(from_view(message));
  if (reason != WGPUDeviceLostReason_Destroyed) log::warn("GPU device lost ({})", why);
  static_cast<DeviceContext::CallbackState*>(state)->set_lost(why);
}

// wgpu-native aborts on errors no scope catches unless this callback exists.
// Scopes cannot filter internal errors there, so those arrive here too.
void on_uncaptured_error(WGPUDevice const*, WGPUErrorType, WGPUStringView message, void* state, void*) {
  log::debug("GPU error outside an error scope: {}", from_view(message));
  static_cast<DeviceContext::CallbackState*>(state)->add_uncaptured(from_view(message));
}

// wgpu reports work on a destroyed or lost device as a validation error.
bool says_device_lost(std::string_view message) { return message.find("device is lost") != std::string_view::npos; }

}  // namespace

// VYRE_MASK_FEATURES: comma-separated device features vyre does not ask
// for even where the adapter has them, so that the path without one runs on
// a device that has it (tests, and users who want to see that path).
bool feature_masked(std::string_view feature) {
  const auto mask = sys::environment_value("VYRE_MASK_FEATURES");
  if (!mask) return false;
  std::string_view rest = *mask;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == feature) return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

std::shared_ptr<DeviceContext> DeviceContext::open(FoundAdapter found, std::shared_ptr<DeviceCounters> counters,
                                                   bool timestamps) {
  std::shared_ptr<DeviceContext> ctx(new DeviceContext());
  ctx->callbacks_ = std::make_unique<CallbackState>();
  ctx->counters_ = counters ? std::move(counters) : std::make_shared<DeviceCounters>();
  ctx->adapter_ = std::move(found.adapter);
  ctx->adapter_info_ = std::move(found.info);

  WGPULimits adapter_limits{};
  if (wgpuAdapterGetLimits(ctx->adapter_.get(), &adapter_limits) != WGPUStatus_Success)
    throw Error(ErrorKind::no_adapter, "cannot read the limits of adapter '" + ctx->adapter_info_.name + "'");
  adapter_limits.nextInChain = nullptr;

  WGPUDeviceDescriptor descriptor{};
  descriptor.label = to_view("vyre");
  descriptor.requiredLimits = &adapter_limits;
  // The float features a program may need, asked for wherever the adapter
  // has them; a program that needs one the device lacks is refused at
  // compile time (backend.cpp).
  std::vector<WGPUFeatureName> features;
  auto want = [&](WGPUFeatureName feature, const char* name) {
    const bool masked = feature_masked(name);
    if (masked) ctx->masked_features_.emplace_back(name);
    const bool on = wgpuAdapterHasFeature(ctx->adapter_.get(), feature) && !masked;
    if (on) features.push_back(feature);
    return on;
  };
  ctx->shader_f16_ = want(WGPUFeatureName_ShaderF16, "shader-f16");
  ctx->shader_f64_ = want(static_cast<WGPUFeatureName>(WGPUNativeFeature_ShaderF64), "shader-f64");
  // Timestamps only when asked for: no other device asks for the feature.
  ctx->timestamps_asked_ = timestamps;
  const bool timed = timestamps && want(WGPUFeatureName_TimestampQuery, "timestamp-query");
  descriptor.requiredFeatureCount = features.size();
  descriptor.requiredFeatures = features.data();
  descriptor.deviceLostCallbackInfo.mode = WGPUCallbackMode_AllowSpontaneous;
  descriptor.deviceLostCallbackInfo.callback = on_device_lost;
  descriptor.deviceLostCallbackInfo.userdata1 = ctx->callbacks_.get();
  descriptor.uncapturedErrorCallbackInfo.callback = on_uncaptured_error;
  descriptor.uncapturedErrorCallbackInfo.userdata1 = ctx->callbacks_.get();

  struct Request {
    bool done = false;
    WGPUDevice device = nullptr;
    std::string message;
  } request;
  WGPURequestDeviceCallbackInfo callback{};
  callback.mode = WGPUCallbackMode_AllowSpontaneous;
  callback.callback = [](WGPURequestDeviceStatus status, WGPUDevice device, WGPUStringView message, void* r, void*) {
    auto* req = static_cast<Request*>(r);
    if (status == WGPURequestDeviceStatus_Success) req->device = device;
    else req->message = from_view(message);
    req->done = true;
  };
  callback.userdata1 = &request;
  wgpuAdapterRequestDevice(ctx->adapter_.get(), &descriptor, callback);
  if (!request.done) throw Error(ErrorKind::gpu, "wgpu-native did not answer a device request");
  if (request.device == nullptr)
    throw Error(ErrorKind::no_adapter,
                "adapter '" + ctx->adapter_info_.name + "' could not open a device: " + request.message);
  ctx->device_ = wgpu::Device(request.device);
  ctx->queue_ = wgpu::Queue(wgpuDeviceGetQueue(request.device));
  if (wgpuDeviceGetLimits(request.device, &ctx->limits_) != WGPUStatus_Success)
    throw Error(ErrorKind::gpu, "cannot read the device limits of '" + ctx->adapter_info_.name + "'");
  ctx->limits_.nextInChain = nullptr;
  if (timed) ctx->timer_ = std::make_unique<GpuTimer>();
  ++ctx->counters_->devices_opened;
  log::debug("opened GPU device on '{}' ({}, {})", ctx->adapter_info_.name, ctx->adapter_info_.backend,
             ctx->adapter_info_.type);
  return ctx;
}

DeviceContext::~DeviceContext() {
  if (!abandoned_) return;
  // Releasing a device waits for its work, which a timed-out dispatch may
  // not finish for hours: keep it (and its queue) rather than hang here.
  queue_.abandon();
  device_.abandon();
  keep_forever(std::move(callbacks_));  // its callbacks may still come
}

std::shared_ptr<DeviceContext> DeviceContext::reopen() const {
  wgpuAdapterAddRef(adapter_.get());
  auto device = open(FoundAdapter{wgpu::Adapter(adapter_.get()), adapter_info_}, counters_, timestamps_asked_);
  device->set_wait_limit(wait_limit_);
  return device;
}

bool DeviceContext::lost() const { return callbacks_->lost.load(); }

wgpu::Buffer DeviceContext::create_buffer(uint64_t bytes, WGPUBufferUsage usage) {
  WGPUBufferDescriptor descriptor{};
  descriptor.usage = usage;
  descriptor.size = bytes;
  ++counters_->buffers_created;
  return wgpu::Buffer(wgpuDeviceCreateBuffer(device_.get(), &descriptor));
}

wgpu::BindGroup DeviceContext::create_bind_group(const WGPUBindGroupDescriptor& descriptor) {
  ++counters_->bind_groups_created;
  return wgpu::BindGroup(wgpuDeviceCreateBindGroup(device_.get(), &descriptor));
}

WGPUSubmissionIndex DeviceContext::submit(WGPUCommandBuffer commands) {
  ++counters_->submits;
  return wgpuQueueSubmitForIndex(queue_.get(), 1, &commands);
}

void DeviceContext::check_alive() const {
  if (!callbacks_->lost.load()) return;
  std::lock_guard lock(callbacks_->mutex);
  throw Error(ErrorKind::device_lost, "the GPU device on '" + adapter_info_.name + "' was lost (" + callbacks_->why +
                                          "); the work of this call is gone, and so are the DeviceBuffers made on "
                                          "it. The vyre::gpu::Backend opens a new device on its next compile or "
                                          "dispatch: call again");
}

void DeviceContext::mark_lost(std::string_view why) { callbacks_->set_lost(why); }

uint64_t DeviceContext::uncaptured_errors() const { return callbacks_->uncaptured.load(); }

std::string DeviceContext::last_uncaptured_error() const {
  std::lock_guard lock(callbacks_->mutex);
  return callbacks_->last_uncaptured;
}

void DeviceContext::wait_bounded(const std::function<bool()>& done) {
  // Saturated: a limit of milliseconds::max() (or 100 years) never comes.
  const auto deadline = sys::deadline_after(*wait_limit_);
  std::chrono::microseconds pause{0};
  for (;;) {
    check_alive();
    (void)wgpuDevicePoll(device_.get(), WGPU_FALSE, nullptr);  // runs the callbacks of finished work
    if (done()) return;
    if (std::chrono::steady_clock::now() >= deadline) {
      abandoned_ = true;
      mark_lost("a dispatch ran longer than the wait limit of " + std::to_string(wait_limit_->count()) +
                " ms (BackendOptions::dispatch_timeout, VYRE_DISPATCH_TIMEOUT, vyre run --timeout); its work "
                "cannot be stopped, so the device was given up");
      check_alive();
    }
    if (pause.count() == 0) std::this_thread::yield();
    else std::this_thread::sleep_for(pause);
    pause = std::min(std::max(pause * 2, std::chrono::microseconds(10)), std::chrono::microseconds(1000));
  }
}

void DeviceContext::poll_until(const std::function<bool()>& done) {
  if (wait_limit_) return wait_bounded(done);
  // The device may report "idle" a few times before the callback of work it
  // just finished runs; a long run of idle polls means it never will.
  int idle_polls = 0;
  while (!done()) {
    check_alive();  // wgpu-native may abort when polling a lost device
    const bool idle = wgpuDevicePoll(device_.get(), WGPU_TRUE, nullptr);
    if (done()) break;
    if (idle && ++idle_polls > 1000) throw Error(ErrorKind::gpu, "the GPU went idle without completing the request");
    if (idle) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void DeviceContext::wait_for(WGPUSubmissionIndex submission) {
  if (!wait_limit_) {
    check_alive();
    wgpuDevicePoll(device_.get(), WGPU_TRUE, &submission);
    check_alive();
    return;
  }
  // A poll that does not block reports an empty queue while NVIDIA's driver
  // still runs the work (seen on the H200: a Batch returned in 7 us), so the
  // bounded wait waits for the queue's own "work done" callback, which covers
  // everything submitted so far. The flag outlives a wait that gives up.
  auto done = std::make_unique<std::atomic<bool>>(false);
  WGPUQueueWorkDoneCallbackInfo callback{};
  callback.mode = WGPUCallbackMode_AllowSpontaneous;
  callback.callback = [](WGPUQueueWorkDoneStatus, WGPUStringView, void* flag, void*) {
    static_cast<std::atomic<bool>*>(flag)->store(true);
  };
  callback.userdata1 = done.get();
  wgpuQueueOnSubmittedWorkDone(queue_.get(), callback);
  try {
    wait_bounded([&] { return done->load(); });
  } catch (...) {
    keep_forever(std::move(done));
    throw;
  }
}

void DeviceContext::throttle(WGPUSubmissionIndex submission) {
  WGPUSubmissionIndex oldest = 0;
  {
    std::lock_guard lock(throttle_mutex_);
    oldest = std::exchange(in_flight_[in_flight_next_], submission);
    in_flight_next_ = (in_flight_next_ + 1) % kMaxInFlight;
  }
  check_alive();
  // Long done, as a rule; polling also runs the callbacks of finished work.
  // With a wait limit, a full window waits for the whole queue (wait_for).
  if (oldest != 0) wait_for(oldest);
  else wgpuDevicePoll(device_.get(), WGPU_FALSE, nullptr);
}

ErrorScope::ErrorScope(DeviceContext& device) : device_(device), uncaptured_before_(device.uncaptured_errors()) {
  // wgpu-native has no internal-error filter; those arrive as uncaptured.
  wgpuDevicePushErrorScope(device_.device(), WGPUErrorFilter_OutOfMemory);
  wgpuDevicePushErrorScope(device_.device(), WGPUErrorFilter_Validation);
}

ErrorScope::~ErrorScope() {
  if (!open_) return;
  try {
    pop();  // balance the stack when an exception left the section early
  } catch (const std::exception& e) {
    log::debug("discarding an error scope: {}", e.what());
  }
}

std::optional<std::string> ErrorScope::pop() {
  open_ = false;
  struct Popped {
    int answered = 0;
    std::optional<std::string> first;
  } popped;
  WGPUPopErrorScopeCallbackInfo callback{};
  callback.mode = WGPUCallbackMode_AllowSpontaneous;
  callback.callback = [](WGPUPopErrorScopeStatus status, WGPUErrorType type, WGPUStringView message, void* p, void*) {
    auto* out = static_cast<Popped*>(p);
    ++out->answered;
    if (out->first) return;
    if (status != WGPUPopErrorScopeStatus_Success) out->first = "error scope failed: " + std::string(from_view(message));
    else if (type != WGPUErrorType_NoError) out->first = std::string(from_view(message));
  };
  callback.userdata1 = &popped;
  for (int i = 0; i < 2; ++i) wgpuDevicePopErrorScope(device_.device(), callback);
  if (popped.answered != 2) device_.poll_until([&] { return popped.answered == 2; });
  if (!popped.first && device_.uncaptured_errors() != uncaptured_before_) popped.first = device_.last_uncaptured_error();
  return popped.first;
}

void ErrorScope::check(std::string_view what) {
  auto error = pop();
  if (!error) return;
  if (says_device_lost(*error)) {
    device_.mark_lost(*error);
    device_.check_alive();
  }
  throw Error(ErrorKind::gpu, std::string(what) + ": " + *error);
}

}  // namespace vyre::gpu
