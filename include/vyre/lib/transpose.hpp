// vyre::lib::transpose: a rows x cols row-major matrix of any element type
// to its cols x rows transpose, on the GPU (docs/lib.md, "transpose").
//
//   std::vector<float> t = vyre::lib::transpose(backend, x, rows, cols);
//
// One dispatch: each workgroup moves one tile x tile tile through workgroup
// memory, reading rows of x and writing rows of the result, so that both
// its reads and its writes are at neighbouring addresses.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "vyre/export.hpp"
#include "vyre/gpu.hpp"
#include "vyre/lib/options.hpp"
#include "vyre/program.hpp"

namespace vyre::lib {

// A workgroup of tile x (tile / rows_per_invocation) invocations moves a
// tile x tile tile, each invocation rows_per_invocation of its rows (every
// (tile / rows_per_invocation)-th). tile is 8, 16 or 32 (its padded copy,
// tile * (tile + 1) words, must fit 16 KiB of workgroup memory);
// rows_per_invocation a power of two no larger than tile, with
// tile * tile / rows_per_invocation at most 256 invocations.
struct VYRE_API TransposeShape {
  uint32_t tile = 32;
  uint32_t rows_per_invocation = 4;

  friend bool operator==(const TransposeShape&, const TransposeShape&) = default;
};

// The shape transpose runs on `backend` when given none and not tuned.
VYRE_API TransposeShape default_transpose_shape(const gpu::Backend& backend);

// The shapes tuning times.
VYRE_API std::vector<TransposeShape> transpose_candidates();

// The program: buffer `x` (rows x cols of `type`) and `dims` (two u32: rows,
// cols) to `out` (cols x rows). Workgroup g = wid.x + wid.y * nwg.x moves
// tile (g / ceil(cols / tile), g % ceil(cols / tile)) of x. Every element
// type (f16 and f64 where the device has them); the bits move unchanged, NaN
// payloads included.
VYRE_API Program transpose_pass(ScalarType type, const TransposeShape& shape = {});

// The transpose of a buffer already on the GPU, as a new buffer of its type
// left there. rows or cols of 0 give an empty buffer. Throws
// Error(invalid_input) for a length other than rows * cols.
VYRE_API std::shared_ptr<gpu::DeviceBuffer> transpose(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& x,
                                                      uint32_t rows, uint32_t cols,
                                                      const std::optional<TransposeShape>& shape = std::nullopt,
                                                      const Options& options = Options::from_environment());

// Host memory in and out: `bytes`, rows x cols elements of `type`.
VYRE_API std::vector<uint8_t> transpose_bytes(gpu::Backend& backend, std::span<const uint8_t> bytes, ScalarType type,
                                              uint32_t rows, uint32_t cols,
                                              const std::optional<TransposeShape>& shape = std::nullopt,
                                              const Options& options = Options::from_environment());

template <class T>
std::vector<T> transpose(gpu::Backend& backend, std::span<const T> x, uint32_t rows, uint32_t cols,
                         const std::optional<TransposeShape>& shape = std::nullopt,
                         const Options& options = Options::from_environment()) {
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(x.data()), x.size_bytes());
  const std::vector<uint8_t> moved = transpose_bytes(backend, bytes, scalar_type_of<T>(), rows, cols, shape, options);
  std::vector<T> out(moved.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), moved.data(), moved.size());
  return out;
}

template <class T>
std::vector<T> transpose(gpu::Backend& backend, const std::vector<T>& x, uint32_t rows, uint32_t cols,
                         const std::optional<TransposeShape>& shape = std::nullopt,
                         const Options& options = Options::from_environment()) {
  return transpose(backend, std::span<const T>(x), rows, cols, shape, options);
}

}  // namespace vyre::lib
