// Lowering a program to WGSL, and the binding interface the shader expects.
//
// The WGSL is a function of the program's canonical form and of the
// text-shaping fields of the DispatchConfig only; shaping_signature() names
// exactly those, so the cache key can be computed without lowering.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "vyre/dispatch.hpp"
#include "vyre/export.hpp"
#include "vyre/program.hpp"

namespace vyre {

// Bumped whenever the lowering can emit different text for the same input.
inline constexpr uint32_t kLoweringVersion = 6;

enum class BindingKind : uint8_t { StorageRead, StorageReadWrite, Uniform };

struct VYRE_API ShaderBinding {
  std::string buffer;
  uint32_t group = 0;
  uint32_t binding = 0;
  BindingKind kind = BindingKind::StorageRead;
  ScalarType type = ScalarType::U32;
  uint32_t count = 0;  // 0: runtime-sized
  bool output = false;
  bool atomic = false;
  // Bytes the shader's declaration needs for `elements` elements: uniform
  // arrays are packed four to a 16-byte row, so their size rounds up to 16.
  uint64_t binding_bytes(uint64_t elements) const;
};

struct VYRE_API ShaderInterface {
  static constexpr uint32_t kLengthsGroup = 1;
  static constexpr uint32_t kLengthsBinding = 0;
  static constexpr const char* kEntryPoint = "main";

  Dim3 workgroup_size{1, 1, 1};       // effective (override applied)
  std::vector<ShaderBinding> bindings;  // canonical order (by binding)
  // Runtime-sized buffers whose `len` the shader reads: their element counts
  // are passed as u32s, in this order, in a uniform at
  // (kLengthsGroup, kLengthsBinding), packed four to a 16-byte row.
  std::vector<std::string> length_slots;
  uint64_t lengths_bytes() const;
};

// The program must be valid (throws ProgramError otherwise).
VYRE_API ShaderInterface shader_interface(const Program& program, const DispatchConfig& config = {});
VYRE_API std::string lower_to_wgsl(const Program& program, const DispatchConfig& config = {});

// A canonical text naming every DispatchConfig field that changes this
// program's WGSL, with its value; fields that cannot change the text are
// left out (a workgroup_override equal to the program's own size, a ULP
// budget for a program with no transcendental it could shorten).
VYRE_API std::string shaping_signature(const Program& program, const DispatchConfig& config = {});

}  // namespace vyre
