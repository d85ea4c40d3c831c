// vyre::lib::scan: every prefix of an array under one operator, on the GPU
// (docs/lib.md, "scan").
//
//   vyre::gpu::Backend backend;
//   std::vector<uint32_t> offsets =
//       vyre::lib::scan<uint32_t>(backend, counts, vyre::lib::ReduceOp::Sum, vyre::lib::ScanKind::Exclusive);
//
// Reduce, then scan: one pass sums each workgroup's span, the spans' sums are
// scanned (the same way, recursively), and a last pass scans each span from
// its offset. No workgroup waits on another, which WebGPU does not promise
// to allow; the price is reading the input twice (3N bytes moved, not 2N).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "vyre/export.hpp"
#include "vyre/gpu.hpp"
#include "vyre/lib/reduce.hpp"
#include "vyre/program.hpp"

namespace vyre::lib {

// Inclusive: out[i] = x[0] op ... op x[i] (NumPy's cumsum).
// Exclusive: out[i] = x[0] op ... op x[i-1], and out[0] the identity
// (+0 for a float sum).
enum class ScanKind : uint8_t { Inclusive, Exclusive };

// The program of the last pass: buffer `in` to buffer `out` (of
// accumulator_type(type), as `offsets`), each workgroup g
// (wid.x + wid.y * nwg.x) scanning elements [g*W*I, (g+1)*W*I) from
// offsets[g], combined in front. Types and operators are reduce's; the
// shape too, but the workgroup's span is held in workgroup memory, so
// workgroup * (items + 1) elements must fit WebGPU's 16 KiB.
VYRE_API Program scan_pass(ScalarType type, ReduceOp op, ScanKind kind, const ReduceShape& shape = {});

// The scan of a buffer already on the GPU, as a new buffer of its length and
// its type's accumulator_type (reduce.hpp), left there. Runs its passes in one Batch of its own. Integer sums
// wrap at 32 bits (NumPy's cumsum widens to 64: docs/lib.md). A float sum's
// order is fixed by the shape and its error bounded in docs/lib.md.
VYRE_API std::shared_ptr<gpu::DeviceBuffer> scan(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& values,
                                                 ReduceOp op = ReduceOp::Sum, ScanKind kind = ScanKind::Inclusive,
                                                 const std::optional<ReduceShape>& shape = std::nullopt,
                                                 const Options& options = Options::from_environment());

// The scan of `bytes` (elements of `type`, little-endian), as bytes.
VYRE_API std::vector<uint8_t> scan_bytes(gpu::Backend& backend, std::span<const uint8_t> bytes, ScalarType type,
                                         ReduceOp op = ReduceOp::Sum, ScanKind kind = ScanKind::Inclusive,
                                         const std::optional<ReduceShape>& shape = std::nullopt,
                                         const Options& options = Options::from_environment());

// The shape scan runs on `backend` for `type` when given none and not tuned:
// the device class's default (docs/lib.md, "scan").
VYRE_API ReduceShape default_scan_shape(const gpu::Backend& backend, ScalarType type);

template <class T>
std::vector<accumulator_t<T>> scan(gpu::Backend& backend, std::span<const T> values, ReduceOp op = ReduceOp::Sum,
                                   ScanKind kind = ScanKind::Inclusive,
                                   const std::optional<ReduceShape>& shape = std::nullopt,
                                   const Options& options = Options::from_environment()) {
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(values.data()), values.size_bytes());
  const std::vector<uint8_t> all = scan_bytes(backend, bytes, scalar_type_of<T>(), op, kind, shape, options);
  std::vector<accumulator_t<T>> out(values.size());
  if (!out.empty()) std::memcpy(out.data(), all.data(), all.size());
  return out;
}

template <class T>
std::vector<accumulator_t<T>> scan(gpu::Backend& backend, const std::vector<T>& values, ReduceOp op = ReduceOp::Sum,
                    ScanKind kind = ScanKind::Inclusive, const std::optional<ReduceShape>& shape = std::nullopt,
                    const Options& options = Options::from_environment()) {
  return scan(backend, std::span<const T>(values), op, kind, shape, options);
}

}  // namespace vyre::lib
