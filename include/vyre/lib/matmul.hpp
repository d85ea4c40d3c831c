// vyre::lib::matmul: the product C = A * B of row-major f32 matrices, A of
// M x K and B of K x N, on the GPU (docs/lib.md, "matmul").
//
//   std::vector<float> c = vyre::lib::matmul(backend, a, b, m, n, k);
//   std::shared_ptr<vyre::gpu::DeviceBuffer> on_gpu = vyre::lib::matmul(backend, a_buffer, b_buffer, m, n, k);
//
// One dispatch. Each workgroup computes a tile_m x tile_n tile of C, each
// invocation a thread_m x thread_n tile of it in registers (a private
// array), from tiles of A and B staged in workgroup memory tile_k columns
// (rows) at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "vyre/export.hpp"
#include "vyre/gpu.hpp"
#include "vyre/lib/options.hpp"
#include "vyre/program.hpp"

namespace vyre::lib {

// The tiles of one dispatch: a workgroup computes tile_m x tile_n elements
// of C with (tile_m / thread_m) x (tile_n / thread_n) invocations, each
// thread_m x thread_n of them, stepping through K tile_k at a time. tile_m,
// tile_n and tile_k are powers of two, thread_m and thread_n 1, 2, 4 or 8 and
// no larger than their tile; the workgroup is at most 256 invocations (what
// WebGPU promises) and the two staged tiles, (tile_m + 1) * tile_k +
// tile_k * tile_n floats, fit 16 KiB of workgroup memory.
struct VYRE_API MatmulShape {
  uint32_t tile_m = 64;
  uint32_t tile_n = 64;
  uint32_t tile_k = 8;
  uint32_t thread_m = 4;
  uint32_t thread_n = 4;

  friend bool operator==(const MatmulShape&, const MatmulShape&) = default;
};

// The shape matmul runs on `backend` when given none and not tuned: the
// device class's default (docs/lib.md, "matmul").
VYRE_API MatmulShape default_matmul_shape(const gpu::Backend& backend);

// The shapes tuning times (options.hpp): every one is valid.
VYRE_API std::vector<MatmulShape> matmul_candidates();

// The program: buffers `a` (M x K f32), `b` (K x N f32) and `dims` (three
// u32: M, N, K) to `c` (M x N f32). Workgroup g = wid.x + wid.y * nwg.x
// computes tile (g / ceil(N / tile_n), g % ceil(N / tile_n)) of C; K is at
// least 1. Throws Error(invalid_input) for a shape out of range, saying
// which limit it passes.
VYRE_API Program matmul_pass(const MatmulShape& shape = {});

// C = A * B for buffers already on the GPU, left there as a new M x N f32
// buffer. C[i][j] is the sum over k = 0, 1, ..., K-1, in that order, of
// A[i][k] * B[k][j], each product added in turn to a sum starting at +0
// (the GPU may fuse a product and its addition into one fma); its error is
// at most K * 2^-23 * sum_k |A[i][k] * B[k][j]|. K = 0 gives zeros; M or N
// = 0 an empty buffer. Throws Error(invalid_input) for buffers that are
// not f32 or whose lengths are not M * K and K * N, and
// Error(limit_exceeded) for M * N past 2^32 - 1 elements.
VYRE_API std::shared_ptr<gpu::DeviceBuffer> matmul(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& a,
                                                   const std::shared_ptr<gpu::DeviceBuffer>& b, uint32_t m, uint32_t n,
                                                   uint32_t k, const std::optional<MatmulShape>& shape = std::nullopt,
                                                   const Options& options = Options::from_environment());

// The same on host memory: uploads A and B, runs, reads C back.
VYRE_API std::vector<float> matmul(gpu::Backend& backend, std::span<const float> a, std::span<const float> b,
                                   uint32_t m, uint32_t n, uint32_t k,
                                   const std::optional<MatmulShape>& shape = std::nullopt,
                                   const Options& options = Options::from_environment());

}  // namespace vyre::lib
