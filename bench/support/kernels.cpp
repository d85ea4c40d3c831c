#include "support/kernels.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "samples/programs.hpp"

namespace vyre::bench {

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = d(rng);
  return v;
}

std::vector<Kernel> sample_kernels(gpu::Backend& backend, bool quick) {
  std::vector<Kernel> kernels;
  {
    const uint32_t partials = quick ? 1u << 15 : 1u << 20;
    Kernel k{"partial_sum", samples::partial_sum_program(), {}, std::nullopt, "partial", {}};
    k.inputs.device("x", backend.upload(random_floats(size_t{partials} * samples::kPartialSumTerms, 1)))
        .size("partial", partials);
    kernels.push_back(std::move(k));
  }
  {
    const uint32_t n = quick ? 256 : 2048;
    Kernel k{"matmul", samples::matmul_program(), {}, Dim3{n / 8, n / 8, 1}, "c", {}};
    k.inputs.set<uint32_t>("dims", {n, n, n})
        .device("a", backend.upload(random_floats(size_t{n} * n, 2)))
        .device("b", backend.upload(random_floats(size_t{n} * n, 3)))
        .size("c", n * n);
    kernels.push_back(std::move(k));
  }
  {
    const uint32_t rows = quick ? 4096 : 1u << 17, cols = quick ? 128 : 256;
    Kernel k{"softmax_rows", samples::softmax_rows_program(), {}, std::nullopt, "y", {}};
    k.inputs.set<uint32_t>("dims", {cols})
        .device("x", backend.upload(random_floats(size_t{rows} * cols, 4)))
        .size("y", rows * cols);
    // The default grid follows y's length (one invocation per element):
    // give one invocation per row instead.
    k.grid = Dim3{rows / 64, 1, 1};
    kernels.push_back(std::move(k));
  }
  {
    const uint32_t n = quick ? 1u << 21 : 1u << 24;
    Kernel k{"saxpy", samples::saxpy_program(), {}, samples::saxpy_grid(n), "y", {}};
    const std::vector<float> x = random_floats(n, 5), y = random_floats(n, 6);
    // Timed in place on the GPU (y grows from dispatch to dispatch; its
    // time does not depend on the values); checked on host copies.
    k.inputs.set<float>("alpha", {2.0f}).device("x", backend.upload(x)).device("y", backend.upload(y));
    k.check.set<float>("alpha", {2.0f}).set("x", x).set("y", y);
    kernels.push_back(std::move(k));
  }
  {
    // 2^23 elements: 32,768 workgroups of 256, within every device's 65,535 per axis.
    const uint32_t n = quick ? 1u << 18 : 1u << 23;
    constexpr int kTaps = 16;
    Kernel k{"stencil", samples::stencil_program(kTaps), {}, std::nullopt, "out", {}};
    k.inputs.device("x", backend.upload(random_floats(n + size_t{kTaps} * samples::kStencilStride, 7))).size("out", n);
    kernels.push_back(std::move(k));
  }
  return kernels;
}

std::optional<size_t> first_difference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return std::min(a.size(), b.size());
  float largest = 0;
  for (float v : a) largest = std::max(largest, std::abs(v));
  for (size_t i = 0; i < a.size(); ++i)
    if (!(std::abs(a[i] - b[i]) <= std::ldexp(largest, -20))) return i;
  return std::nullopt;
}

double batch_seconds(gpu::Backend& backend, gpu::Pipeline& pipeline, const Kernel& k, const std::optional<Dim3>& grid,
                     int per) {
  gpu::Batch batch(backend);
  for (int i = 0; i < per; ++i) batch.dispatch_resident(pipeline, k.inputs, grid);
  const auto start = std::chrono::steady_clock::now();
  batch.run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / per;
}

}  // namespace vyre::bench
