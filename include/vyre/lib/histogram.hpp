// vyre::lib::histogram: how many values fall in each of `bins` equal-width
// bins over [lo, hi], or between given edges, on the GPU, exactly as
// numpy.histogram counts them (docs/lib.md, "histogram").
//
//   vyre::lib::Histogram h = vyre::lib::histogram<float>(backend, x, 10, 0.0, 1.0);
//   // h.counts == numpy.histogram(x, bins=10, range=(0, 1))[0]; h.outside: values not counted
//
// The edges are computed on the host as NumPy computes them, and turned into
// thresholds of the values' own type (the smallest value at or above each
// edge), so that the GPU finds each value's bin by a binary search with exact
// comparisons. Each workgroup counts into bins of its own in workgroup memory
// (bincount's method), then adds them to the result with device atomics.
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

// Counts are u32 (NumPy's are int64): a bin wraps past 2^32 - 1 values.
// `outside` counts the values no bin holds: outside [lo, hi] (or the edges),
// and NaN. NumPy leaves them out without saying how many.
struct VYRE_API Histogram {
  std::vector<uint32_t> counts;
  uint32_t outside = 0;
};

// A histogram left on the GPU: `counts` (u32, one per bin) and `outside`
// (u32, one element).
struct VYRE_API DeviceHistogram {
  std::shared_ptr<gpu::DeviceBuffer> counts;
  std::shared_ptr<gpu::DeviceBuffer> outside;
};

// numpy.histogram_bin_edges(x, bins, range=(lo, hi)) for integer x (float64):
// numpy.linspace's lo + i * ((hi - lo) / bins), the last edge exactly hi; lo
// == hi widens to [lo - 0.5, hi + 0.5], as NumPy does. Throws
// Error(invalid_input) for no bins, lo > hi, or a range not finite.
VYRE_API std::vector<double> histogram_edges(uint32_t bins, double lo, double hi);

// The program: buffer `values` (u32, i32, f32, u8, u16, i8, i16) and
// `edges` (u32 for unsigned values and for f32, whose bits are mapped to
// keys of the same order; i32 for signed values) to `counts` (u32, `bins`
// elements, zeroed) and `outside` (one u32). `edges` holds m thresholds
// then the largest value kept: a value v not below edges[0] nor above
// edges[m] goes in the last bin i < m whose threshold is at most v.
VYRE_API Program histogram_pass(ScalarType type, uint32_t bins, const ReduceShape& shape = {});

// The histogram of a buffer on the GPU in `bins` equal bins over [lo, hi]:
// numpy.histogram(x, bins, range=(lo, hi)). Bin i holds edges[i] <= v <
// edges[i+1], the last also v == hi. For f32 values the edges are rounded to
// f32 and compared in f32 (NumPy 2 with a range of Python floats); for
// integers they stay f64. Throws Error(invalid_input) for a null buffer,
// another type, no bins, lo > hi, a range not finite (for f32: beyond f32's),
// or edges that are not increasing in f32 (NumPy: "too many bins for data
// range").
VYRE_API DeviceHistogram histogram(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& values,
                                   uint32_t bins, double lo, double hi,
                                   const std::optional<ReduceShape>& shape = std::nullopt,
                                   const Options& options = Options::from_environment());

// Between given edges, non-decreasing, at least two: numpy.histogram(x,
// bins=edges), compared as NumPy compares f64 edges with the values (exactly,
// in f64). Bin i holds edges[i] <= v < edges[i+1], the last also v ==
// edges.back(). Throws Error(invalid_input) for fewer than two edges, a NaN
// edge, or edges that decrease.
VYRE_API DeviceHistogram histogram(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& values,
                                   std::span<const double> edges,
                                   const std::optional<ReduceShape>& shape = std::nullopt,
                                   const Options& options = Options::from_environment());

// Host memory in: `bytes` elements of `type`, little-endian.
VYRE_API Histogram histogram_bytes(gpu::Backend& backend, std::span<const uint8_t> bytes, ScalarType type,
                                   uint32_t bins, double lo, double hi,
                                   const std::optional<ReduceShape>& shape = std::nullopt,
                                   const Options& options = Options::from_environment());
VYRE_API Histogram histogram_bytes(gpu::Backend& backend, std::span<const uint8_t> bytes, ScalarType type,
                                   std::span<const double> edges,
                                   const std::optional<ReduceShape>& shape = std::nullopt,
                                   const Options& options = Options::from_environment());

template <class T>
Histogram histogram(gpu::Backend& backend, std::span<const T> values, uint32_t bins, double lo, double hi,
                    const std::optional<ReduceShape>& shape = std::nullopt,
                    const Options& options = Options::from_environment()) {
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(values.data()), values.size_bytes());
  return histogram_bytes(backend, bytes, scalar_type_of<T>(), bins, lo, hi, shape, options);
}

template <class T>
Histogram histogram(gpu::Backend& backend, const std::vector<T>& values, uint32_t bins, double lo, double hi,
                    const std::optional<ReduceShape>& shape = std::nullopt,
                    const Options& options = Options::from_environment()) {
  return histogram(backend, std::span<const T>(values), bins, lo, hi, shape, options);
}

template <class T>
Histogram histogram(gpu::Backend& backend, std::span<const T> values, std::span<const double> edges,
                    const std::optional<ReduceShape>& shape = std::nullopt,
                    const Options& options = Options::from_environment()) {
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(values.data()), values.size_bytes());
  return histogram_bytes(backend, bytes, scalar_type_of<T>(), edges, shape, options);
}

template <class T>
Histogram histogram(gpu::Backend& backend, const std::vector<T>& values, std::span<const double> edges,
                    const std::optional<ReduceShape>& shape = std::nullopt,
                    const Options& options = Options::from_environment()) {
  return histogram(backend, std::span<const T>(values), edges, shape, options);
}

}  // namespace vyre::lib
