// vyre::lib::reduce: one value from many, on the GPU (docs/lib.md, "reduce").
//
//   vyre::gpu::Backend backend;
//   const float total = vyre::lib::reduce<float>(backend, values, vyre::lib::ReduceOp::Sum);
//
// Passes of one program, each leaving one partial per workgroup, run in one
// Batch with the partials kept on the GPU; only the last value comes back.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "vyre/export.hpp"
#include "vyre/gpu.hpp"
#include "vyre/half.hpp"
#include "vyre/lib/options.hpp"
#include "vyre/program.hpp"

namespace vyre::lib {

// sum wraps at 32 bits for u32 and i32 (NumPy's and CuPy's sum widen to 64:
// docs/lib.md says why vyre does not); and, or, xor take integers only.
enum class ReduceOp : uint8_t { Sum, Min, Max, And, Or, Xor };

VYRE_API std::string_view to_string(ReduceOp op);
VYRE_API std::optional<ReduceOp> reduce_op_from_string(std::string_view name);

// The type reduce and scan of `element` accumulate in, and give: u32 for u8,
// u16 and bool (a sum of bools counts the trues); i32 for i8 and i16; f32 for
// f16; the type itself for u32, i32, f32 and f64 (docs/lib.md).
VYRE_API ScalarType accumulator_type(ScalarType element);

// The C++ type of accumulator_type(scalar_type_of<T>()).
template <class T>
struct Accumulator {
  using type = T;
};
template <>
struct Accumulator<uint8_t> {
  using type = uint32_t;
};
template <>
struct Accumulator<uint16_t> {
  using type = uint32_t;
};
template <>
struct Accumulator<bool> {
  using type = uint32_t;
};
template <>
struct Accumulator<int8_t> {
  using type = int32_t;
};
template <>
struct Accumulator<int16_t> {
  using type = int32_t;
};
template <>
struct Accumulator<half> {
  using type = float;
};
template <class T>
using accumulator_t = typename Accumulator<T>::type;

// One pass's shape: invocations per workgroup (a power of two, 1 to 1024)
// and the elements each invocation reads, so a workgroup reduces
// workgroup * items elements to one. A call given none runs the device
// class's default, or with tuning the one measured fastest (options.hpp).
struct VYRE_API ReduceShape {
  uint32_t workgroup = 256;
  uint32_t items = 4;

  friend bool operator==(const ReduceShape&, const ReduceShape&) = default;
};

// The program of one pass: buffer `in` (runtime-sized, `type`) to buffer
// `out` (accumulator_type(type)), element g holding the reduction of
// elements [g*W*I, (g+1)*W*I) of `in`, where workgroup g = wid.x + wid.y *
// nwg.x. Types: u32, i32, f32, u8, i8, u16, i16, bool; f64 and f16 where the
// device has them. Throws Error(invalid_input) for a type or an
// operator it does not take, or a shape out of range.
VYRE_API Program reduce_pass(ScalarType type, ReduceOp op, const ReduceShape& shape = {});

// The reduction of `bytes` (elements of `type`, little-endian), as the bytes
// of one element of accumulator_type(type). Every element counts once; the order of a float sum is
// fixed by the shape (docs/lib.md) and its error bounded there. NaN
// propagates through min and max, as in NumPy. Zero elements give sum's,
// and's, or's and xor's identity (0, all ones, 0, 0); min and max of zero
// elements have no value: Error(invalid_input), as NumPy's. A float sum
// starts from -0.0, so negative zeros sum to -0.0; zero elements sum to +0.
VYRE_API std::vector<uint8_t> reduce_bytes(gpu::Backend& backend, std::span<const uint8_t> bytes, ScalarType type,
                                           ReduceOp op, const std::optional<ReduceShape>& shape = std::nullopt,
                                           const Options& options = Options::from_environment());

// The reduction of a buffer already on the GPU (Backend::upload, or a
// dispatch_resident output), left there as a buffer of one element of
// accumulator_type of the buffer's type. Runs its passes in one Batch of its own.
VYRE_API std::shared_ptr<gpu::DeviceBuffer> reduce(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& values,
                                                   ReduceOp op, const std::optional<ReduceShape>& shape = std::nullopt,
                                                   const Options& options = Options::from_environment());

template <class T>
accumulator_t<T> reduce(gpu::Backend& backend, std::span<const T> values, ReduceOp op,
                        const std::optional<ReduceShape>& shape = std::nullopt,
                        const Options& options = Options::from_environment()) {
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(values.data()), values.size_bytes());
  const std::vector<uint8_t> one = reduce_bytes(backend, bytes, scalar_type_of<T>(), op, shape, options);
  accumulator_t<T> out{};
  std::memcpy(&out, one.data(), sizeof(out));
  return out;
}

template <class T>
accumulator_t<T> reduce(gpu::Backend& backend, const std::vector<T>& values, ReduceOp op,
         const std::optional<ReduceShape>& shape = std::nullopt, const Options& options = Options::from_environment()) {
  return reduce(backend, std::span<const T>(values), op, shape, options);
}

// The shape reduce runs on `backend` when given none and not tuned: the
// device class's default (docs/lib.md, "reduce").
VYRE_API ReduceShape default_reduce_shape(const gpu::Backend& backend);

}  // namespace vyre::lib
