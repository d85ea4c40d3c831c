// vyre::lib::sort: a stable LSD radix sort of u32, i32 or f32 keys, with or
// without u32 values, on the GPU (docs/lib.md, "sort").
//
//   std::vector<float> sorted = vyre::lib::sort<float>(backend, keys);
//   std::vector<uint32_t> order = vyre::lib::argsort<uint32_t>(backend, keys);
//
// Passes of 4 bits each by default (eight for 32-bit keys; 5 or 6 bits a
// pass where the shape says so), all in one Batch: per pass, each workgroup
// counts its span's digits, the counts are scanned (lib::scan's plan), and
// each workgroup writes its span's keys to their places in digit order. No
// workgroup waits on another.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "vyre/export.hpp"
#include "vyre/gpu.hpp"
#include "vyre/lib/options.hpp"
#include "vyre/lib/reduce.hpp"
#include "vyre/program.hpp"

namespace vyre::lib {

// Ascending: NumPy's order, NaN last; -0.0 before +0.0. Descending: the
// reverse order of keys, NaN first, equal keys still in their input order.
enum class SortOrder : uint8_t { Ascending, Descending };

// Each workgroup takes workgroup * items keys; each invocation `items`
// consecutive ones; each pass sorts by a digit of radix_bits bits (4, 5 or
// 6). Its digit table (2^radix_bits counters an invocation) must fit
// WebGPU's 16 KiB of workgroup memory: workgroup is a power of two from 16
// to 128 at 4 bits, to 64 at 5, to 32 at 6; items 1 to 64. Where the span
// fits there too (32-bit keys and values), the scatter orders it by digit in
// workgroup memory before it writes (docs/lib.md, "sort").
struct VYRE_API SortShape {
  uint32_t workgroup = 128;
  uint32_t items = 8;
  uint32_t radix_bits = 4;

  friend bool operator==(const SortShape&, const SortShape&) = default;
};

// The shape sort runs on `backend` when given none and not tuned: the device
// class's default for these keys and values (docs/lib.md, "sort"); the
// first form, for u32 keys alone.
VYRE_API SortShape default_sort_shape(const gpu::Backend& backend, ScalarType key_type,
                                      std::optional<ScalarType> value_type = std::nullopt);
VYRE_API SortShape default_sort_shape(const gpu::Backend& backend);

// The two programs of one pass, the digit at bit `shift` chosen by the
// one-element buffer `shift` (0, radix_bits, 2 * radix_bits, ...):
//   count:   `keys` to `counts` (2^radix_bits per workgroup, digit-major:
//            counts[d*G+g]);
//   scatter: `keys` (and `values`) to `keys_out` (and `values_out`), each key
//            at offsets[d*G+g] (the exclusive scan of counts) plus its rank.
VYRE_API Program sort_count_pass(ScalarType key_type, SortOrder order, const SortShape& shape = {});
VYRE_API Program sort_scatter_pass(ScalarType key_type, bool with_values, SortOrder order, const SortShape& shape = {});

struct VYRE_API SortedBuffers {
  std::shared_ptr<gpu::DeviceBuffer> keys;
  std::shared_ptr<gpu::DeviceBuffer> values;  // null when none were given
};

// Sorts buffers already on the GPU into new ones, left there. Keys are u32,
// i32, f32, f16 (where the device has it), u8, i8, u16 or i16; `values`, of
// any element type and as many as keys, may be null. Throws
// Error(invalid_input) for another key type, lengths that differ, or a shape
// out of range.
VYRE_API SortedBuffers sort(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& keys,
                            const std::shared_ptr<gpu::DeviceBuffer>& values, SortOrder order = SortOrder::Ascending,
                            const std::optional<SortShape>& shape = std::nullopt,
                            const Options& options = Options::from_environment());

// Host memory in and out: `keys` as bytes of `key_type`; `values` empty or
// one per key. Returns the sorted keys' bytes and the values in their order.
VYRE_API std::pair<std::vector<uint8_t>, std::vector<uint32_t>> sort_bytes(gpu::Backend& backend,
                                                                          std::span<const uint8_t> keys,
                                                                          ScalarType key_type,
                                                                          std::span<const uint32_t> values,
                                                                          SortOrder order = SortOrder::Ascending,
                                                                          const std::optional<SortShape>& shape = std::nullopt,
                                                                          const Options& options = Options::from_environment());

// Keys and values of any element type as bytes; the sorted keys' and values' bytes.
VYRE_API std::pair<std::vector<uint8_t>, std::vector<uint8_t>> sort_pairs_bytes(
    gpu::Backend& backend, std::span<const uint8_t> keys, ScalarType key_type, std::span<const uint8_t> values,
    ScalarType value_type, SortOrder order = SortOrder::Ascending, const std::optional<SortShape>& shape = std::nullopt,
    const Options& options = Options::from_environment());

template <class T>
std::vector<T> sort(gpu::Backend& backend, std::span<const T> keys, SortOrder order = SortOrder::Ascending,
                    const std::optional<SortShape>& shape = std::nullopt,
                    const Options& options = Options::from_environment()) {
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(keys.data()), keys.size_bytes());
  const auto sorted = sort_bytes(backend, bytes, scalar_type_of<T>(), {}, order, shape, options);
  std::vector<T> out(keys.size());
  if (!out.empty()) std::memcpy(out.data(), sorted.first.data(), sorted.first.size());
  return out;
}

template <class T>
std::vector<T> sort(gpu::Backend& backend, const std::vector<T>& keys, SortOrder order = SortOrder::Ascending,
                    const std::optional<SortShape>& shape = std::nullopt,
                    const Options& options = Options::from_environment()) {
  return sort(backend, std::span<const T>(keys), order, shape, options);
}

// The keys sorted and `values` (any element type) moved with them.
template <class K, class V>
std::pair<std::vector<K>, std::vector<V>> sort_pairs(gpu::Backend& backend, std::span<const K> keys,
                                                     std::span<const V> values, SortOrder order = SortOrder::Ascending,
                                                     const std::optional<SortShape>& shape = std::nullopt,
                                                     const Options& options = Options::from_environment()) {
  const auto sorted = sort_pairs_bytes(
      backend, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(keys.data()), keys.size_bytes()),
      scalar_type_of<K>(), std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(values.data()), values.size_bytes()),
      scalar_type_of<V>(), order, shape, options);
  std::pair<std::vector<K>, std::vector<V>> out{std::vector<K>(keys.size()), std::vector<V>(values.size())};
  if (!keys.empty()) std::memcpy(out.first.data(), sorted.first.data(), sorted.first.size());
  if (!values.empty()) std::memcpy(out.second.data(), sorted.second.data(), sorted.second.size());
  return out;
}

template <class K, class V>
std::pair<std::vector<K>, std::vector<V>> sort_pairs(gpu::Backend& backend, const std::vector<K>& keys,
                                                     const std::vector<V>& values, SortOrder order = SortOrder::Ascending,
                                                     const std::optional<SortShape>& shape = std::nullopt,
                                                     const Options& options = Options::from_environment()) {
  return sort_pairs(backend, std::span<const K>(keys), std::span<const V>(values), order, shape, options);
}

// The indices that sort `keys`, stably (NumPy's argsort with kind='stable').
template <class T>
std::vector<uint32_t> argsort(gpu::Backend& backend, std::span<const T> keys, SortOrder order = SortOrder::Ascending,
                              const std::optional<SortShape>& shape = std::nullopt,
                              const Options& options = Options::from_environment()) {
  std::vector<uint32_t> index(keys.size());
  for (size_t i = 0; i < index.size(); ++i) index[i] = static_cast<uint32_t>(i);
  return sort_pairs(backend, keys, std::span<const uint32_t>(index), order, shape, options).second;
}

template <class T>
std::vector<uint32_t> argsort(gpu::Backend& backend, const std::vector<T>& keys, SortOrder order = SortOrder::Ascending,
                              const std::optional<SortShape>& shape = std::nullopt,
                              const Options& options = Options::from_environment()) {
  return argsort(backend, std::span<const T>(keys), order, shape, options);
}

}  // namespace vyre::lib
