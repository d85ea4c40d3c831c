// The floor the overhead figures compare against: a plain loop of
// wgpu-native calls with pipeline and buffers made once, and nothing of
// vyre in it. Benchmarks only; the library's own GPU code is src/gpu/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <webgpu.h>

namespace vyre::bench {

class RawWgpu {
 public:
  // Its own WebGPU instance and device, on the adapter named `adapter_name`
  // (the one vyre chose), with the adapter's limits as vyre asks for them.
  explicit RawWgpu(std::string_view adapter_name);
  ~RawWgpu();
  RawWgpu(const RawWgpu&) = delete;
  RawWgpu& operator=(const RawWgpu&) = delete;

  // The xor kernel's pipeline (automatic layout) and its buffers for n
  // elements: a, b, out, out's staging buffer and the lengths uniform.
  void prepare_xor(std::string_view wgsl, uint32_t n, uint32_t workgroup_size);
  // One dispatch: write a, b and the length; one compute pass; copy out to
  // staging; submit; map; wait; read into `out`.
  void dispatch_xor(const uint32_t* a, const uint32_t* b, uint32_t* out);

  // Wall seconds of `copies` buffer-to-buffer copies of `bytes` each, in one
  // submission, waited for (buffers made once, outside the time).
  double copy_seconds(uint64_t bytes, int copies);

  const std::string& adapter() const { return adapter_name_; }

 private:
  void wait_mapped(WGPUBuffer buffer, uint64_t bytes);

  std::string adapter_name_;
  WGPUInstance instance_ = nullptr;
  WGPUAdapter adapter_ = nullptr;
  WGPUDevice device_ = nullptr;
  WGPUQueue queue_ = nullptr;

  uint32_t n_ = 0, groups_ = 0;
  WGPUShaderModule module_ = nullptr;
  WGPUComputePipeline pipeline_ = nullptr;
  WGPUBindGroup group0_ = nullptr, group1_ = nullptr;
  WGPUBuffer a_ = nullptr, b_ = nullptr, out_ = nullptr, staging_ = nullptr, lengths_ = nullptr;

  uint64_t copy_bytes_ = 0;
  WGPUBuffer copy_src_ = nullptr, copy_dst_ = nullptr;
};

}  // namespace vyre::bench
