// vyre::lib::compact and nonzero: the elements an array keeps where a mask is
// nonzero, and the indices of an array's nonzero elements, in their input
// order, on the GPU (docs/lib.md, "compact and nonzero").
//
//   std::vector<float> kept = vyre::lib::compact<float, uint32_t>(backend, values, mask);  // values[mask != 0]
//   std::vector<uint32_t> where = vyre::lib::nonzero<int32_t>(backend, x);                  // np.nonzero(x)[0]
//
// A scan whose first pass computes the keep flags itself: each workgroup
// counts the elements its span keeps, those counts are scanned (lib::scan's
// plan) into where each span's kept elements start, and each workgroup writes
// its kept elements there in order. The count must come back to the host to
// size the output, so a call waits on the GPU once between the two.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "vyre/export.hpp"
#include "vyre/gpu.hpp"
#include "vyre/lib/options.hpp"
#include "vyre/lib/reduce.hpp"
#include "vyre/program.hpp"

namespace vyre::lib {

// A result left on the GPU: a buffer of exactly `count` elements (an empty
// one when nothing is kept), and `count`, which was read back to size it.
struct VYRE_API Compacted {
  std::shared_ptr<gpu::DeviceBuffer> buffer;
  uint32_t count = 0;
};

// The passes' programs (shape: ReduceShape, items at most 32):
//   count:   buffer `mask` (any type; nonzero keeps, -0.0 does not, NaN does)
//            to `counts`, element g the kept elements of workgroup g's span of
//            workgroup * items; counts has one element more than there are
//            workgroups, left 0, so that its exclusive scan ends with the total.
//   scatter: `values`, `mask` and `offsets` (that scan) to `out`, the kept
//            values in order. With `values_type` nullopt (nonzero) there is
//            no `values` and `out` (u32) gets the indices.
VYRE_API Program compact_count_pass(ScalarType mask_type, const ReduceShape& shape = {});
VYRE_API Program compact_scatter_pass(std::optional<ScalarType> values_type, ScalarType mask_type,
                                      const ReduceShape& shape = {});

// The elements of `values` whose `mask` element is nonzero, in order
// (NumPy's values[mask != 0]), left on the GPU. `values` may be any type a
// buffer holds (f64 and f16 where the device has them); `mask` is u32, i32,
// u8 or bool, as long as `values`. Throws Error(invalid_input) for a null
// buffer, another mask type, lengths that differ, or a shape out of range.
VYRE_API Compacted compact(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& values,
                           const std::shared_ptr<gpu::DeviceBuffer>& mask,
                           const std::optional<ReduceShape>& shape = std::nullopt,
                           const Options& options = Options::from_environment());

// The u32 indices of the nonzero elements of `x` (any type), increasing:
// NumPy's np.nonzero(x)[0] for 1-D x. A float is nonzero when x != 0, so
// -0.0 is zero and NaN is not.
VYRE_API Compacted nonzero(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& x,
                           const std::optional<ReduceShape>& shape = std::nullopt,
                           const Options& options = Options::from_environment());

// Host memory in and out: elements as bytes of their types, little-endian.
VYRE_API std::vector<uint8_t> compact_bytes(gpu::Backend& backend, std::span<const uint8_t> values,
                                            ScalarType values_type, std::span<const uint8_t> mask,
                                            ScalarType mask_type, const std::optional<ReduceShape>& shape = std::nullopt,
                                            const Options& options = Options::from_environment());
VYRE_API std::vector<uint32_t> nonzero_bytes(gpu::Backend& backend, std::span<const uint8_t> x, ScalarType type,
                                             const std::optional<ReduceShape>& shape = std::nullopt,
                                             const Options& options = Options::from_environment());

// The shape compact and nonzero run on `backend` when given none and not
// tuned: the device class's default (docs/lib.md).
VYRE_API ReduceShape default_compact_shape(const gpu::Backend& backend);

// bool masks and values: std::span<const bool> (std::vector<bool> holds no
// bools), or uint8_t bytes through compact_bytes with ScalarType::Bool.
template <class T, class M>
std::vector<T> compact(gpu::Backend& backend, std::span<const T> values, std::span<const M> mask,
                       const std::optional<ReduceShape>& shape = std::nullopt,
                       const Options& options = Options::from_environment()) {
  const std::span<const uint8_t> value_bytes(reinterpret_cast<const uint8_t*>(values.data()), values.size_bytes());
  const std::span<const uint8_t> mask_bytes(reinterpret_cast<const uint8_t*>(mask.data()), mask.size_bytes());
  const std::vector<uint8_t> kept =
      compact_bytes(backend, value_bytes, scalar_type_of<T>(), mask_bytes, scalar_type_of<M>(), shape, options);
  std::vector<T> out(kept.size() / sizeof(T));
  if constexpr (std::is_same_v<T, bool>) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = kept[i] != 0;
  } else if (!out.empty()) {
    std::memcpy(out.data(), kept.data(), kept.size());
  }
  return out;
}

template <class T, class M>
std::vector<T> compact(gpu::Backend& backend, const std::vector<T>& values, const std::vector<M>& mask,
                       const std::optional<ReduceShape>& shape = std::nullopt,
                       const Options& options = Options::from_environment()) {
  return compact(backend, std::span<const T>(values), std::span<const M>(mask), shape, options);
}

template <class T>
std::vector<uint32_t> nonzero(gpu::Backend& backend, std::span<const T> x,
                              const std::optional<ReduceShape>& shape = std::nullopt,
                              const Options& options = Options::from_environment()) {
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(x.data()), x.size_bytes());
  return nonzero_bytes(backend, bytes, scalar_type_of<T>(), shape, options);
}

template <class T>
std::vector<uint32_t> nonzero(gpu::Backend& backend, const std::vector<T>& x,
                              const std::optional<ReduceShape>& shape = std::nullopt,
                              const Options& options = Options::from_environment()) {
  return nonzero(backend, std::span<const T>(x), shape, options);
}

}  // namespace vyre::lib
