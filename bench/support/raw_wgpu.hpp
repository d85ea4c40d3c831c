// The floor the overhead figures compare against: a plain loop of
// wgpu-native calls with pipeline and buffers made once, and nothing of
// vyre in it. Benchmarks only; the library's own GPU code is src/gpu/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <webgpu.h>

namespace vyre::bench {

class RawWgpu {
 public:
  // Its own WebGPU instance and device, on the adapter named `adapter_name`
  // (the one vyre chose; empty: the first discrete one, else the first),
  // with the adapter's limits as vyre asks for them.
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

  // Saxpy kernels on buffers made once (x = 1, y = i % 1000, alpha = 0.5),
  // for finding where saxpy's time goes: vyre's own WGSL, with and without
  // the shader's runtime checks, or handwritten WGSL.
  void prepare_saxpy(uint64_t elements);
  // A pipeline for `wgsl` (bindings: alpha, x, y; with `lengths`, vyre's
  // lengths uniform holding the element count); returns its number.
  int add_saxpy_kernel(std::string_view wgsl, const uint32_t grid[3], bool checked, bool lengths);
  // Wall seconds of `dispatches` dispatches of kernel `k`, each in its own
  // compute pass or all in one, in one submission, waited for.
  double saxpy_seconds(int k, int dispatches, bool one_pass);
  // y read back (to check the arithmetic).
  std::vector<float> saxpy_y();

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

  struct Kernel {
    WGPUShaderModule module = nullptr;
    WGPUComputePipeline pipeline = nullptr;
    WGPUBindGroup group0 = nullptr, group1 = nullptr;
    uint32_t grid[3] = {1, 1, 1};
  };
  uint64_t saxpy_n_ = 0;
  WGPUBuffer saxpy_alpha_ = nullptr, saxpy_x_ = nullptr, saxpy_y_ = nullptr, saxpy_lengths_ = nullptr;
  std::vector<Kernel> kernels_;
};

}  // namespace vyre::bench
