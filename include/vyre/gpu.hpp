// The GPU backend on wgpu-native (WebGPU over Vulkan and the other native
// APIs): adapter and device selection, the backend fingerprint, and
// pipeline-mode dispatch: compile once, then dispatch many times, with
// outputs returned, written into caller memory, or kept on the GPU for the
// next dispatch, one dispatch at a time or many per wait (Batch).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vyre/aot.hpp"
#include "vyre/checked.hpp"
#include "vyre/dispatch.hpp"
#include "vyre/export.hpp"
#include "vyre/lower.hpp"
#include "vyre/program.hpp"

namespace vyre::gpu {

struct VYRE_API AdapterInfo {
  uint32_t index = 0;         // position in enumeration order
  std::string name;           // device name, e.g. "NVIDIA H200"
  std::string vendor;         // vendor name as the driver reports it (may be empty)
  std::string driver;         // driver description, e.g. "Mesa 22.3.6 (LLVM 15.0.6)"
  std::string backend;        // "vulkan", "gl", "metal", "dx12"
  std::string type;           // "discrete", "integrated", "cpu", "unknown"
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  std::string fingerprint;    // the adapter's real fingerprint (no override)
};

// Vector widening when neither BackendOptions::widen nor VYRE_WIDEN says.
inline constexpr bool kWidenByDefault = true;

struct VYRE_API BackendOptions {
  // Backend name ("vulkan", "gl", "metal", "dx12"); default: $WGPU_BACKEND,
  // else the platform's primary backends.
  std::optional<std::string> backend;
  // Adapter: an index from `vyre devices` or a case-insensitive substring of
  // its name; default: $VYRE_WGPU_ADAPTER, else the best (discrete first).
  std::optional<std::string> adapter;
  // The AOT cache; default: aot::Cache::from_environment().
  std::shared_ptr<aot::Cache> cache;
  // Replaces the adapter's fingerprint in AOT cache keys (to share a cache
  // across machines that produce the same WGSL); default:
  // $VYRE_BACKEND_FINGERPRINT_OVERRIDE, else the adapter's own.
  std::optional<std::string> fingerprint_override;
  // How long a dispatch (or any wait for the GPU) may take; past it the call
  // fails with Error(device_lost), the device is given up (its work cannot be
  // stopped) and the next call opens a new one. Default:
  // $VYRE_DISPATCH_TIMEOUT (a duration such as 90s or 5m), else unbounded.
  std::optional<std::chrono::milliseconds> dispatch_timeout;
  // Vector widening: an element-wise program's dispatches whose lengths
  // allow it run a shader taking four elements per invocation with vec4
  // accesses (docs/lowering.md, "Vector widening"); results are the same.
  // Default: $VYRE_WIDEN ("1" on, "0" off), else on (kWidenByDefault).
  std::optional<bool> widen;
  // GPU timing, for benchmarks: open the device with WebGPU's
  // timestamp-query where the adapter has it, so that
  // Backend::set_gpu_timing can time submissions on the GPU. Off by
  // default: no other device asks for the feature.
  bool gpu_timestamps = false;

  // The settings the environment gives, read in this one place:
  // WGPU_BACKEND, VYRE_WGPU_ADAPTER, VYRE_BACKEND_FINGERPRINT_OVERRIDE,
  // VYRE_DISPATCH_TIMEOUT and VYRE_WIDEN (unset or empty: nullopt). A Backend fills the options it is not given
  // from these; the cache has its own (aot::CacheOptions::from_environment).
  static BackendOptions from_environment();
};

// wgpu-native's version, "major.minor.patch.build".
VYRE_API std::string wgpu_native_version();

// What the WGSL cache entry of a program on one adapter is made from.
struct VYRE_API WgslTarget {
  ShaderOptions options;  // the options asked for, with the adapter's driver workarounds
  aot::KeyParts parts;    // the entry's key parts
};

// The WgslTarget a Backend on the adapter with this full fingerprint (`vyre
// devices`) would use for `program`: of the adapter, only what shapes the
// text enters the key (docs/cache.md, "Key derivation"). A string not in the
// fingerprint form (an override) stands for the target whole, with no
// workarounds. For `vyre cache warm --fingerprint` and `explain`.
VYRE_API WgslTarget wgsl_target(const CheckedProgram& program, std::string_view adapter_fingerprint,
                                const ShaderOptions& options = {});

// The shader options a compile() of `program` asks for: `options`, with
// vector_width 4 for an element-wise program (vyre::widenable) when `widen`
// is on. `vyre cache warm` and `explain` key what a first dispatch uses
// with it (a Backend's widens(), else VYRE_WIDEN, else kWidenByDefault).
VYRE_API ShaderOptions compiled_options(const CheckedProgram& program, const ShaderOptions& options, bool widen);

// True for a full fingerprint in vyre's form, naming an adapter (`vyre
// devices`); false for an override string.
VYRE_API bool is_adapter_fingerprint(std::string_view fingerprint);

// Adapters of the selected backend(s), in enumeration order.
VYRE_API std::vector<AdapterInfo> enumerate_adapters(const BackendOptions& options = {});

// Timings of a compile, in milliseconds.
struct VYRE_API CompileReport {
  std::string cache_key;
  bool cache_hit = false;
  bool memory_hit = false;  // found in this backend's in-memory pipeline map
  double cache_ms = 0;      // key derivation and cache lookup (or lowering and publication)
  double lower_ms = 0;      // lowering alone (0 on a hit)
  double shader_ms = 0;     // shader module creation
  double pipeline_ms = 0;   // compute pipeline creation
};

// Timings of a dispatch (or of a Batch: its totals), in milliseconds.
struct VYRE_API DispatchReport {
  Dim3 grid{0, 0, 0};      // of the last dispatch, as it ran (a widened shader's is smaller)
  uint8_t vector_width = 1;  // elements per invocation of the last dispatch's shader
  double upload_ms = 0;    // buffers, bind groups and queue writes
  double dispatch_ms = 0;  // encode, submit and wait for completion
  double readback_ms = 0;  // mapping the staging buffers and copying out
  // GPU time from the start of the first compute pass to the end of the
  // last, by timestamps (Backend::set_gpu_timing); -1 when not timed.
  double gpu_ms = -1;
};

// Timings of opening a Backend, in milliseconds.
struct VYRE_API BackendReport {
  double instance_ms = 0;  // the WebGPU instance (created by the first Backend of a process only)
  double adapter_ms = 0;   // adapter enumeration and choice
  double device_ms = 0;    // the device and its queue
  double cache_ms = 0;     // opening the AOT cache
};

// What a Backend has created on its device so far. A warm dispatch creates
// nothing: its buffers, staging buffers and bind groups are reused.
struct VYRE_API BackendCounters {
  uint64_t buffers_created = 0;      // GPU buffers, staging buffers included
  uint64_t bind_groups_created = 0;
  uint64_t submits = 0;              // queue submissions (one per dispatch or Batch, one per DeviceBuffer::read)
  uint64_t devices_opened = 0;       // 1, plus one per recovery from a lost device
  // GPU timing (Backend::set_gpu_timing): the submissions timed, and their
  // GPU time summed, each from its first compute pass's start to its last's end.
  uint64_t timed_submits = 0;
  uint64_t gpu_ns = 0;
};

class Backend;
class Batch;

// What the library keeps behind each handle: defined inside it only. A
// handle hands its state to code holding a StateKey, which only the library
// defines, so no user code can reach it.
namespace detail {
struct BackendState;
struct PipelineState;
struct DeviceBufferState;
struct BatchState;
class StateKey;
}  // namespace detail

// A buffer in GPU memory: an output that a dispatch kept on the GPU
// (Pipeline::dispatch_resident). Bind it as an input of a later dispatch of
// any Pipeline of the same Backend with Inputs::device: it is used in place,
// with no round trip through host memory; a buffer the program writes is
// updated in place. Its memory goes back to the Backend's pool when the last
// shared_ptr to it goes.
class VYRE_API DeviceBuffer final : public DeviceContents {
 public:
  // Made by the library only (Backend::upload, dispatch_resident).
  explicit DeviceBuffer(std::unique_ptr<detail::DeviceBufferState> state);
  ~DeviceBuffer() override;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  uint64_t size_bytes() const override;
  ScalarType type() const override;
  uint32_t elements() const { return static_cast<uint32_t>(size_bytes() / element_bytes(type())); }
  // Copies the contents to host memory. Throws Error(invalid_input) while the
  // Batch that writes it has not run, Error(device_lost) once its device is gone.
  std::vector<uint8_t> read() const override;
  void read_into(std::span<uint8_t> destination) const;  // exactly size_bytes()
  template <class T>
  std::vector<T> read_as() const {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "vyre buffers hold 1-, 2-, 4- or 8-byte elements");
    const std::vector<uint8_t> bytes = read();
    std::vector<T> out(bytes.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
  }

  // For the library only: its key cannot be named outside it.
  detail::DeviceBufferState& state(const detail::StateKey&) const { return *impl_; }

 private:
  std::unique_ptr<detail::DeviceBufferState> impl_;
};

// The outputs of Pipeline::dispatch_resident, by name.
class VYRE_API DeviceOutputs {
 public:
  DeviceOutputs() = default;
  // The library makes them whole, from each output's buffer by name.
  explicit DeviceOutputs(std::map<std::string, std::shared_ptr<DeviceBuffer>> buffers) : buffers_(std::move(buffers)) {}

  // Throws Error(invalid_input) for an unknown name.
  const std::shared_ptr<DeviceBuffer>& get(const std::string& name) const;
  bool has(const std::string& name) const { return buffers_.count(name) != 0; }
  const std::map<std::string, std::shared_ptr<DeviceBuffer>>& all() const { return buffers_; }

 private:
  std::map<std::string, std::shared_ptr<DeviceBuffer>> buffers_;
};

class VYRE_API Pipeline {
 public:
  Pipeline();
  ~Pipeline();
  Pipeline(Pipeline&&) noexcept;
  Pipeline& operator=(Pipeline&&) noexcept;

  // Uploads inputs, runs one dispatch, reads back every output buffer.
  Outputs dispatch(const Inputs& inputs, const std::optional<Dim3>& grid = std::nullopt,
                   DispatchReport* report = nullptr);
  // As dispatch(), reading only the outputs named in `outputs`, straight into
  // the caller's memory. Once warm (same sizes as an earlier dispatch) it
  // allocates nothing, on the GPU or on the host heap.
  void dispatch_into(const Inputs& inputs, const OutputViews& outputs, const std::optional<Dim3>& grid = std::nullopt,
                     DispatchReport* report = nullptr);
  // As dispatch(), keeping every output on the GPU: no readback. Bind them as
  // inputs of the next dispatch (Inputs::device) to chain kernels.
  DeviceOutputs dispatch_resident(const Inputs& inputs, const std::optional<Dim3>& grid = std::nullopt,
                                  DispatchReport* report = nullptr);

  const CompileReport& compile_report() const;
  // Every compile this Pipeline has made so far: compile_report(), then the
  // one-element variant's when a dispatch needed it.
  std::vector<CompileReport> compile_reports() const;
  const ShaderInterface& interface() const;
  const std::string& wgsl() const;

  // Made by the library only (Backend::compile).
  explicit Pipeline(std::shared_ptr<detail::PipelineState> state);
  // For the library only: its key cannot be named outside it.
  const std::shared_ptr<detail::PipelineState>& state(const detail::StateKey&) const { return impl_; }

 private:
  std::shared_ptr<detail::PipelineState> impl_;
};

// Autotuning (docs/tuning.md): what Backend::tune times, and what it gives.
struct VYRE_API TuneOptions {
  unsigned warmup = 2;       // untimed dispatches of each candidate
  unsigned repetitions = 7;  // timed dispatches of each candidate; the median decides
  // A candidate replaces the program's own configuration only when its
  // median is at least this share faster (so noise does not change shaders).
  double min_gain = 0.03;
  bool retune = false;       // tune again and replace the cached record

  // VYRE_TUNE_WARMUP and VYRE_TUNE_REPETITIONS over the defaults.
  static TuneOptions from_environment();
};

struct VYRE_API Tuned {
  Pipeline pipeline;          // compiled with the configuration this dispatch runs
  std::optional<Dim3> grid;   // the grid to dispatch it with (the caller's, re-tiled)
  aot::TuningRecord record;   // what tuning chose, and its measurements
  std::string record_key;     // the record's cache key (vyre cache show KEY)
  bool reused = false;        // the record came from the cache: nothing was timed
  bool applied = false;       // the chosen configuration runs this dispatch; false: the program's own
  std::string not_applied;    // why not, when the choice is not the own one and not applied
  double tune_ms = 0;         // this call: record lookup or tuning, and the final compile
};

class VYRE_API Backend {
 public:
  // Throws Error(no_adapter) with what to install when no adapter is usable.
  explicit Backend(const BackendOptions& options = {});
  ~Backend();
  Backend(Backend&&) noexcept;
  Backend& operator=(Backend&&) noexcept;

  const AdapterInfo& adapter() const;
  // $VYRE_BACKEND_FINGERPRINT_OVERRIDE when set, else the adapter's.
  const std::string& fingerprint() const;
  // What of the adapter shapes the WGSL text ("target=wgsl": its driver
  // workarounds enter the key as shader options), or the override when set: the fingerprint component of this backend's
  // WGSL cache keys. A driver update leaves it unchanged.
  const std::string& shaping_fingerprint() const;
  // What compile() lowers `program` with and looks it up by: the driver's
  // workarounds added to `options`, and shaping_fingerprint() in the key.
  WgslTarget wgsl_target(const CheckedProgram& program, const ShaderOptions& options = {}) const;
  // Whether compile() widens element-wise programs (BackendOptions::widen).
  bool widens() const;

  // The in-memory pipeline map first, then the AOT cache, then lowering.
  // An element-wise program (vyre::widenable) gets its widened shader
  // (options.vector_width 4) when BackendOptions::widen is on; a dispatch
  // whose lengths or grid do not allow it runs the one-element shader,
  // compiled at its first such dispatch.
  // Threads compiling the same program at once compile it once. A Program
  // given here is checked here (ProgramError); keep the CheckedProgram
  // that ProgramBuilder::build() or program_from_json() returns to check once.
  Pipeline compile(const CheckedProgram& program, const ShaderOptions& options = {});
  // As compile(), for a caller that knows its first dispatch: the variant
  // that dispatch runs is the one compiled now, and no other (an
  // element-wise program whose lengths or grid do not allow widening gets
  // its one-element shader alone). Later dispatches that need another
  // variant compile it then, as with compile().
  Pipeline compile_for(const CheckedProgram& program, const Inputs& first_inputs,
                       const std::optional<Dim3>& first_grid = std::nullopt, const ShaderOptions& options = {});

  // Compiles `program` for dispatches like this one (its inputs' lengths and
  // grid: the size class) in the fastest configuration measured on this
  // device: workgroup shapes the results cannot depend on, and widening.
  // The choice is kept in the AOT cache for this device and driver; a later
  // process reuses it without timing anything. Tuning never changes results:
  // a candidate is tried only when it runs the same invocations. Dispatch the
  // returned pipeline with the returned grid. Throws what compile() and
  // dispatch() throw for a program or inputs that cannot run.
  Tuned tune(const CheckedProgram& program, const Inputs& inputs, const std::optional<Dim3>& grid = std::nullopt,
             const ShaderOptions& options = {}, const TuneOptions& tuning = TuneOptions::from_environment());

  // Copies host data into a new DeviceBuffer of this Backend's device, for
  // inputs that stay on the GPU across dispatches (Inputs::device). Returns
  // once the copy is queued; dispatches that bind it run after it.
  std::shared_ptr<DeviceBuffer> upload(std::span<const uint8_t> bytes, ScalarType type);
  template <class T>
  std::shared_ptr<DeviceBuffer> upload(std::span<const T> values) {
    return upload(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(values.data()), values.size_bytes()),
                  scalar_type_of<T>());
  }
  template <class T>
  std::shared_ptr<DeviceBuffer> upload(const std::vector<T>& values) {
    return upload(std::span<const T>(values));
  }

  const BackendReport& report() const;
  BackendCounters counters() const;

  // GPU timing (docs/benchmarks.md): available where BackendOptions::
  // gpu_timestamps asked for it and the device has timestamp-query. While
  // on (off at first), every submission of a dispatch or Batch writes a
  // timestamp at the start and the end of each of its compute passes, waits
  // for its work even when not asked to, reads them back, and adds the time
  // from its first pass's start to its last pass's end to
  // BackendCounters::gpu_ns (and to DispatchReport::gpu_ms). Timed
  // submissions of one device run one at a time. set_gpu_timing(true)
  // throws Error(invalid_input) where timing is not available.
  bool gpu_timing_available() const;
  void set_gpu_timing(bool on);

  // For the library only: its key cannot be named outside it.
  const std::shared_ptr<detail::BackendState>& state(const detail::StateKey&) const { return impl_; }

 private:
  std::shared_ptr<detail::BackendState> impl_;
};

// Many dispatches, of one or several Pipelines of one Backend, recorded into
// one command buffer: one submission and one wait for all of them. A
// dispatch may bind the DeviceBuffers of an earlier dispatch of the same
// Batch (they are written before it runs). Inputs and output views must stay
// alive until run() returns. A Batch can be refilled and run again; once
// warm it allocates nothing.
class VYRE_API Batch {
 public:
  explicit Batch(Backend& backend);
  ~Batch();
  Batch(Batch&&) noexcept;
  Batch& operator=(Batch&&) noexcept;

  // Each checks the inputs at once (the errors of Pipeline::dispatch).
  void dispatch_into(Pipeline& pipeline, const Inputs& inputs, const OutputViews& outputs,
                     const std::optional<Dim3>& grid = std::nullopt);
  // The buffers exist at once; their contents once run() has returned.
  DeviceOutputs dispatch_resident(Pipeline& pipeline, const Inputs& inputs,
                                  const std::optional<Dim3>& grid = std::nullopt);

  // Submits every recorded dispatch, waits once, reads back the views, and
  // empties the batch.
  void run(DispatchReport* report = nullptr);
  // Forgets the recorded dispatches without running them.
  void clear();
  size_t size() const;

 private:
  std::unique_ptr<detail::BatchState> impl_;
};

// The device whose cache entries `vyre cache explain` and `warm` (and
// vyre.cache.explain) name: a fingerprint given (a full one from `vyre
// devices --json`, or an override string), else a Backend's, else
// VYRE_BACKEND_FINGERPRINT_OVERRIDE, else the local adapter's. Settings are
// read through BackendOptions::from_environment() only.
class VYRE_API KeyTarget {
 public:
  // `fingerprint` empty: the override setting, else the fingerprint of the
  // adapter a Backend with `local_options` would open, read without opening
  // a device (Error(no_adapter) without one).
  static KeyTarget resolve(std::string_view fingerprint, const BackendOptions& local_options = {});
  static KeyTarget of_backend(std::shared_ptr<const Backend> backend);

  // The entry a first dispatch of `program` compiled with `requested` uses
  // there: widened for an element-wise program unless the Backend (or
  // VYRE_WIDEN) says not (compiled_options), with the device's workarounds.
  WgslTarget of(const CheckedProgram& program, const ShaderOptions& requested = {}) const;
  // The device's full fingerprint, for its driver data (Cache::explain);
  // nullopt for an override string.
  std::optional<std::string> device_fingerprint() const;

 private:
  KeyTarget() = default;
  std::string fingerprint_;                 // given, or the override setting
  bool is_override_ = false;                // the override setting, taken whole
  std::shared_ptr<const Backend> backend_;  // the backend whose keys these are
  bool widen_ = kWidenByDefault;            // without a backend
};

}  // namespace vyre::gpu
