// What a dispatch takes and gives back: the per-dispatch policy
// (DispatchConfig), input buffers and output buffers. Shared by the GPU
// backend and the CPU reference interpreter.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace vyre {

using Dim3 = std::array<uint32_t, 3>;

struct DispatchConfig {
  // Replaces the program's workgroup_size (shapes the WGSL).
  std::optional<Dim3> workgroup_override;
  // Number of workgroups; default: [ceil(n / workgroup_size.x), 1, 1] with n
  // the element count of the first output buffer by binding. Not part of the
  // shader: it never changes the cache key.
  std::optional<Dim3> grid;
  // None or 0: WGSL's builtins. 1..255: the lowering may use faster
  // transcendentals whose measured maximum error stays within this many ULP.
  std::optional<uint8_t> ulp_budget;

  friend bool operator==(const DispatchConfig&, const DispatchConfig&) = default;
};

// A buffer named by its name or by its binding number.
using BufferRef = std::variant<std::string, uint32_t>;

// Input contents of a dispatch. Each entry is either bytes the Inputs owns or
// a view of caller memory that must stay alive until the dispatch returns.
// Contents are little-endian arrays of the buffer's element type.
class Inputs {
 public:
  struct Entry {
    BufferRef buffer;
    std::vector<uint8_t> owned;
    std::span<const uint8_t> borrowed;  // caller memory, when `is_borrowed`
    bool is_borrowed = false;
    std::optional<uint32_t> elements;   // length only (no contents): zero-filled

    bool has_contents() const { return !elements.has_value(); }
    std::span<const uint8_t> contents() const { return is_borrowed ? borrowed : std::span<const uint8_t>(owned); }
  };

  Inputs& bytes(BufferRef buffer, std::vector<uint8_t> data);
  Inputs& view(BufferRef buffer, std::span<const uint8_t> data);
  template <class T>
  Inputs& set(BufferRef buffer, std::span<const T> values) {
    std::vector<uint8_t> data(values.size_bytes());
    if (!data.empty()) std::memcpy(data.data(), values.data(), data.size());
    return bytes(std::move(buffer), std::move(data));
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

  const std::vector<Entry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }

 private:
  Entry& upsert(BufferRef buffer);
  std::vector<Entry> entries_;
};

// Output buffers read back after a dispatch, by name.
class Outputs {
 public:
  void put(std::string name, std::vector<uint8_t> data) { buffers_[std::move(name)] = std::move(data); }
  bool has(const std::string& name) const { return buffers_.count(name) != 0; }
  // Throws Error(invalid_input) for an unknown name.
  const std::vector<uint8_t>& bytes(const std::string& name) const;
  template <class T>
  std::vector<T> get(const std::string& name) const {
    const auto& b = bytes(name);
    std::vector<T> out(b.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), b.data(), out.size() * sizeof(T));
    return out;
  }
  const std::map<std::string, std::vector<uint8_t>>& all() const { return buffers_; }
  friend bool operator==(const Outputs&, const Outputs&) = default;

 private:
  std::map<std::string, std::vector<uint8_t>> buffers_;
};

}  // namespace vyre
