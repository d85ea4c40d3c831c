// What a dispatch takes and gives back: input buffers, output buffers and
// caller-owned output memory. Shared by the GPU backend and the CPU
// reference interpreter.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "vyre/export.hpp"
#include "vyre/half.hpp"
#include "vyre/program.hpp"
#include "vyre/shader_options.hpp"

namespace vyre {

// The size of a buffer element of the 32-bit types (u32, i32, f32); narrow
// and bool elements take element_bytes(type) (program.hpp).
inline constexpr uint32_t kElementBytes = 4;

// A dispatch's launch (docs/gpu.md, "Launches"): a launch domain, the
// invocations that run (Inputs::dim), or a grid, the number of workgroups,
// given with each dispatch (std::optional<Dim3>). With a domain the grid is
// ceil(domain / workgroup size) and invocations outside the domain have no
// effect: the shader is compiled with ShaderOptions::domain_guard. With
// neither, the grid is [ceil(n / workgroup_size.x), 1, 1], n the element
// count of the first output by binding, and only for a program proven
// element-wise over it (vyre::covers_first_output); any other dispatch is
// refused, never run on part of its data. A grid never shapes the shader or
// its cache key; what does is ShaderOptions.

// A buffer named by its name or by its binding number.
using BufferRef = std::variant<std::string, uint32_t>;

// The scalar type of a C++ element type a buffer can hold: uint32_t, int32_t,
// float, and (format version 4) uint8_t, int8_t, uint16_t, int16_t, bool.
// Typed calls (Inputs::set, Inputs::view, OutputViews::view) are checked
// against the buffer's declared type: each must match it, except that
// uint32_t fits any buffer of 4-byte elements, as its raw words (exact f32
// bits). Byte calls are not checked.
template <class T>
constexpr ScalarType scalar_type_of() {
  static_assert(std::is_same_v<T, uint32_t> || std::is_same_v<T, int32_t> || std::is_same_v<T, float> ||
                    std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t> || std::is_same_v<T, uint16_t> ||
                    std::is_same_v<T, int16_t> || std::is_same_v<T, bool> || std::is_same_v<T, half> ||
                    std::is_same_v<T, double>,
                "vyre buffers hold uint32_t, int32_t, float, double, vyre::half, uint8_t, int8_t, uint16_t, int16_t "
                "or bool elements; use bytes() for raw data");
  if constexpr (std::is_same_v<T, uint32_t>) return ScalarType::U32;
  else if constexpr (std::is_same_v<T, int32_t>) return ScalarType::I32;
  else if constexpr (std::is_same_v<T, float>) return ScalarType::F32;
  else if constexpr (std::is_same_v<T, half>) return ScalarType::F16;
  else if constexpr (std::is_same_v<T, double>) return ScalarType::F64;
  else if constexpr (std::is_same_v<T, uint8_t>) return ScalarType::U8;
  else if constexpr (std::is_same_v<T, int8_t>) return ScalarType::I8;
  else if constexpr (std::is_same_v<T, uint16_t>) return ScalarType::U16;
  else if constexpr (std::is_same_v<T, int16_t>) return ScalarType::I16;
  else return ScalarType::Bool;
}

// Contents that live in GPU memory: vyre::gpu::DeviceBuffer, an output a
// dispatch kept on the GPU. Bound as an input, it is used in place, with no
// copy through host memory.
class VYRE_API DeviceContents {
 public:
  virtual ~DeviceContents() = default;
  virtual uint64_t size_bytes() const = 0;
  virtual ScalarType type() const = 0;
  // A host copy of the contents (waits for the GPU work that writes them).
  virtual std::vector<uint8_t> read() const = 0;
};

// Input contents of a dispatch. Each entry is bytes the Inputs owns, a view
// of caller memory that must stay alive until the dispatch returns, a length
// alone, or a buffer already on the GPU. Contents are little-endian arrays of
// the buffer's element type.
class VYRE_API Inputs {
 public:
  struct Entry {
    BufferRef buffer;
    std::vector<uint8_t> owned;
    std::span<const uint8_t> borrowed;  // caller memory, when `is_borrowed`
    bool is_borrowed = false;
    std::optional<uint32_t> elements;   // length only (no contents): zero-filled
    std::optional<ScalarType> type;     // the element type a typed call gave
    std::shared_ptr<DeviceContents> device;  // contents on the GPU, when set

    bool has_contents() const { return !elements.has_value(); }
    bool on_device() const { return device != nullptr; }
    std::span<const uint8_t> contents() const { return is_borrowed ? borrowed : std::span<const uint8_t>(owned); }
  };

  Inputs& bytes(BufferRef buffer, std::vector<uint8_t> data);
  Inputs& view(BufferRef buffer, std::span<const uint8_t> data);
  // A typed view of caller memory: no copy; checked against the buffer's type.
  template <class T>
  Inputs& view(BufferRef buffer, std::span<const T> values) {
    put_view(std::move(buffer), std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(values.data()),
                                                         values.size_bytes()))
        .type = scalar_type_of<T>();
    return *this;
  }
  template <class T>
  Inputs& view(BufferRef buffer, const std::vector<T>& values) {
    return view(std::move(buffer), std::span<const T>(values));
  }
  template <class T>
  Inputs& set(BufferRef buffer, std::span<const T> values) {
    std::vector<uint8_t> data(values.size_bytes());
    if (!data.empty()) std::memcpy(data.data(), values.data(), data.size());
    put_bytes(std::move(buffer), std::move(data)).type = scalar_type_of<T>();
    return *this;
  }
  template <class T>
  Inputs& set(BufferRef buffer, const std::vector<T>& values) {
    return set(std::move(buffer), std::span<const T>(values));
  }
  template <class T>
  Inputs& set(BufferRef buffer, std::initializer_list<T> values) {
    return set(std::move(buffer), std::span<const T>(values.begin(), values.size()));
  }
  // Gives a runtime-sized buffer its length without contents (zero-filled).
  Inputs& size(BufferRef buffer, uint32_t elements);
  // Binds contents already on the GPU (a vyre::gpu::DeviceBuffer), without a
  // copy. A buffer the program writes is updated in place.
  Inputs& device(BufferRef buffer, std::shared_ptr<DeviceContents> contents);
  // The launch domain: this many invocations along x, y and z, or n along x
  // (a 0 runs nothing). A dispatch given a domain takes no grid.
  Inputs& dim(Dim3 invocations);
  Inputs& dim(uint32_t n) { return dim(Dim3{n, 1, 1}); }
  Inputs& dim(std::nullopt_t) {  // no domain: the dispatch's grid, or the default
    domain_.reset();
    return *this;
  }

  const std::vector<Entry>& entries() const { return entries_; }
  const std::optional<Dim3>& domain() const { return domain_; }
  bool empty() const { return entries_.empty(); }

 private:
  // The entry for `buffer`, reset (kept in place, so that refilling an Inputs
  // allocates nothing).
  Entry& upsert(BufferRef buffer);
  Entry& put_bytes(BufferRef buffer, std::vector<uint8_t> data);
  Entry& put_view(BufferRef buffer, std::span<const uint8_t> data);
  std::vector<Entry> entries_;
  std::optional<Dim3> domain_;
};

// Caller-owned host memory that a dispatch reads outputs into
// (gpu::Pipeline::dispatch_into): no allocation, and only the outputs named
// here are read back. Each span must hold exactly the output's bytes and stay
// alive until the dispatch returns.
class VYRE_API OutputViews {
 public:
  struct Entry {
    BufferRef buffer;
    std::span<uint8_t> bytes;
    std::optional<ScalarType> type;  // the element type a typed call gave
  };

  OutputViews& bytes(BufferRef buffer, std::span<uint8_t> destination);
  template <class T>
  OutputViews& view(BufferRef buffer, std::span<T> destination) {
    put(std::move(buffer), std::span<uint8_t>(reinterpret_cast<uint8_t*>(destination.data()), destination.size_bytes()))
        .type = scalar_type_of<T>();
    return *this;
  }
  template <class T>
  OutputViews& view(BufferRef buffer, std::vector<T>& destination) {
    return view(std::move(buffer), std::span<T>(destination));
  }

  const std::vector<Entry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }

 private:
  Entry& put(BufferRef buffer, std::span<uint8_t> destination);
  std::vector<Entry> entries_;
};

// Output buffers read back after a dispatch, by name.
class VYRE_API Outputs {
 public:
  Outputs() = default;
  // Made whole by whoever ran the dispatch, from each output's bytes by name.
  explicit Outputs(std::map<std::string, std::vector<uint8_t>> buffers) : buffers_(std::move(buffers)) {}
  bool has(const std::string& name) const { return buffers_.count(name) != 0; }
  // Throws Error(invalid_input) for an unknown name.
  const std::vector<uint8_t>& bytes(const std::string& name) const;
  // The output as elements of T: uint32_t, int32_t, float, uint8_t, int8_t,
  // uint16_t or int16_t (a bool output reads as uint8_t, 0 or 1: no
  // std::vector<bool>). Throws Error(invalid_input) for an unknown name or
  // bytes that are not a whole number of T.
  template <class T>
  std::vector<T> get(const std::string& name) const {
    static_assert(!std::is_same_v<T, bool>, "Outputs::get<T>: read a bool output as uint8_t (0 or 1)");
    static_assert(scalar_type_of<T>() != ScalarType::Bool, "Outputs::get<T>: see scalar_type_of");
    const auto& b = bytes(name);
    if (b.size() % sizeof(T) != 0) throw_not_whole(name, b.size(), sizeof(T));
    std::vector<T> out(b.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), b.data(), out.size() * sizeof(T));
    return out;
  }
  const std::map<std::string, std::vector<uint8_t>>& all() const { return buffers_; }
  friend bool operator==(const Outputs&, const Outputs&) = default;

 private:
  [[noreturn]] static void throw_not_whole(const std::string& name, size_t bytes, size_t element_bytes);
  std::map<std::string, std::vector<uint8_t>> buffers_;
};

class CheckedProgram;

// Length specialization (ShaderOptions::fixed_lengths) for these inputs: the
// element count each runtime-sized buffer whose `len` the program reads is
// dispatched with. Throws Error(invalid_input) for inputs the program cannot
// take, as a dispatch would.
VYRE_API std::map<std::string, uint32_t> dispatched_lengths(const CheckedProgram& program, const Inputs& inputs,
                                                            const std::optional<Dim3>& grid = std::nullopt);

}  // namespace vyre
