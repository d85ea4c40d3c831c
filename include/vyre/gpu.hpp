// The GPU backend on wgpu-native (WebGPU over Vulkan and the other native
// APIs): adapter and device selection, the backend fingerprint, and
// pipeline-mode dispatch (compile once, dispatch many times).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vyre/aot.hpp"
#include "vyre/dispatch.hpp"
#include "vyre/lower.hpp"
#include "vyre/program.hpp"

namespace vyre::gpu {

struct AdapterInfo {
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

struct BackendOptions {
  // Backend name ("vulkan", "gl", "metal", "dx12"); default: $WGPU_BACKEND,
  // else the platform's primary backends.
  std::optional<std::string> backend;
  // Adapter: an index from `vyre devices` or a case-insensitive substring of
  // its name; default: $VYRE_WGPU_ADAPTER, else the best (discrete first).
  std::optional<std::string> adapter;
  // The AOT cache; default: aot::Cache::from_environment().
  std::shared_ptr<aot::Cache> cache;
};

// wgpu-native's version, "major.minor.patch.build".
std::string wgpu_native_version();

// Adapters of the selected backend(s), in enumeration order.
std::vector<AdapterInfo> enumerate_adapters(const BackendOptions& options = {});

// Timings of a compile, in milliseconds.
struct CompileReport {
  std::string cache_key;
  bool cache_hit = false;
  bool memory_hit = false;  // found in this backend's in-memory pipeline map
  double cache_ms = 0;      // key derivation and cache lookup (or lowering and publication)
  double lower_ms = 0;      // lowering alone (0 on a hit)
  double shader_ms = 0;     // shader module creation
  double pipeline_ms = 0;   // compute pipeline creation
};

// Timings of a dispatch, in milliseconds.
struct DispatchReport {
  Dim3 grid{0, 0, 0};
  double upload_ms = 0;
  double dispatch_ms = 0;  // encode, submit and wait for completion
  double readback_ms = 0;
};

class Backend;

class Pipeline {
 public:
  Pipeline();
  ~Pipeline();
  Pipeline(Pipeline&&) noexcept;
  Pipeline& operator=(Pipeline&&) noexcept;

  // Uploads inputs, runs one dispatch, reads back every output buffer.
  Outputs dispatch(const Inputs& inputs, const std::optional<Dim3>& grid = std::nullopt,
                   DispatchReport* report = nullptr);

  const CompileReport& compile_report() const;
  const ShaderInterface& interface() const;
  const std::string& wgsl() const;

  struct Impl;

 private:
  friend class Backend;
  explicit Pipeline(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

class Backend {
 public:
  // Throws Error(no_adapter) with what to install when no adapter is usable.
  explicit Backend(const BackendOptions& options = {});
  ~Backend();
  Backend(Backend&&) noexcept;
  Backend& operator=(Backend&&) noexcept;

  const AdapterInfo& adapter() const;
  // $VYRE_BACKEND_FINGERPRINT_OVERRIDE when set, else the adapter's.
  const std::string& fingerprint() const;

  // The in-memory pipeline map first, then the AOT cache, then lowering.
  Pipeline compile(const Program& program, const DispatchConfig& config = {});

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace vyre::gpu
