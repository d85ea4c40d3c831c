// vyre::lib::bincount: how many times each value 0, 1, ..., bins-1 occurs
// in an array of u32 or i32, on the GPU (docs/lib.md, "bincount").
//
//   std::vector<uint32_t> counts = vyre::lib::bincount<uint32_t>(backend, labels);       // max + 1 bins
//   std::vector<uint32_t> fixed = vyre::lib::bincount<uint32_t>(backend, labels, 256);
//
// Each workgroup counts its span into bins of its own in workgroup memory
// (atomics there), then adds them to the result with one atomic per bin;
// beyond 4,095 bins each value goes straight to the result's atomics.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "vyre/export.hpp"
#include "vyre/gpu.hpp"
#include "vyre/lib/options.hpp"
#include "vyre/lib/reduce.hpp"
#include "vyre/program.hpp"

namespace vyre::lib {

// The most bins counted in workgroup memory (4,096 words with the value
// beyond them, within WebGPU's 16 KiB).
constexpr uint32_t kWorkgroupBins = 4095;

// The program: buffer `values` (u32 or i32) to `counts` (u32, `bins`
// elements, zeroed) and `outside` (one u32: how many values are not in
// [0, bins); an i32 below 0 is not). Each workgroup takes workgroup * items
// values.
VYRE_API Program bincount_pass(ScalarType type, uint32_t bins, const ReduceShape& shape = {});

// The counts of a buffer already on the GPU, as a u32 buffer of `bins`
// elements left there; without `bins`, max + 1 (a reduction first, read
// back). Counts are u32 (NumPy's are int64): they wrap past 2^32 - 1
// occurrences of one value. Throws Error(invalid_input) when a value is
// negative or not below `bins` (NumPy's bincount grows instead; a count
// silently left out would be worse), for another type, or no bins.
VYRE_API std::shared_ptr<gpu::DeviceBuffer> bincount(gpu::Backend& backend,
                                                     const std::shared_ptr<gpu::DeviceBuffer>& values,
                                                     std::optional<uint32_t> bins = std::nullopt,
                                                     const std::optional<ReduceShape>& shape = std::nullopt,
                                                     const Options& options = Options::from_environment());

template <class T>
std::vector<uint32_t> bincount(gpu::Backend& backend, std::span<const T> values,
                               std::optional<uint32_t> bins = std::nullopt,
                               const std::optional<ReduceShape>& shape = std::nullopt,
                               const Options& options = Options::from_environment()) {
  if (values.empty()) return std::vector<uint32_t>(bins.value_or(0), 0);
  return bincount(backend, backend.upload(values), bins, shape, options)->template read_as<uint32_t>();
}

template <class T>
std::vector<uint32_t> bincount(gpu::Backend& backend, const std::vector<T>& values,
                               std::optional<uint32_t> bins = std::nullopt,
                               const std::optional<ReduceShape>& shape = std::nullopt,
                               const Options& options = Options::from_environment()) {
  return bincount(backend, std::span<const T>(values), bins, shape, options);
}

}  // namespace vyre::lib
