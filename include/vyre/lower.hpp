// Lowering a checked program to WGSL, with the binding interface the
// shader expects: both come out of one step (lower), so they cannot
// disagree.
//
// The WGSL is a function of the program's canonical form and of the
// ShaderOptions only; shaping_signature() names exactly what of the options
// changes the text, so the cache key can be computed without lowering.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "vyre/checked.hpp"
#include "vyre/export.hpp"
#include "vyre/program.hpp"
#include "vyre/shader_options.hpp"

namespace vyre {

// Bumped whenever the lowering can emit different text for the same input.
// A change confined to the programs of one device feature (f16) raises that
// feature's revision in the shaping signature instead, so that every other
// program keeps its key (src/lower/shaping_signature.cpp).
inline constexpr uint32_t kLoweringVersion = 10;

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
  bool wide = false;  // declared as array<vec4<type>> (ShaderOptions::vector_width 4)
  // Bytes the shader's declaration needs for `elements` elements: uniform
  // arrays are packed four to a 16-byte row, so their size rounds up to 16.
  uint64_t binding_bytes(uint64_t elements) const;
};

struct VYRE_API ShaderInterface {
  static constexpr uint32_t kLengthsGroup = 1;
  static constexpr uint32_t kLengthsBinding = 0;
  // ShaderOptions::loop_guard: one atomic u32 the shader sets to 1 when a
  // loop was cut short, at (kLengthsGroup, kLoopGuardBinding).
  static constexpr uint32_t kLoopGuardBinding = 1;
  static constexpr const char* kEntryPoint = "main";

  Dim3 workgroup_size{1, 1, 1};  // effective (override applied)
  // Every bound buffer, in canonical order (by binding): bindings[i] is
  // CheckedProgram::bound_buffers()[i], and the i-th buffer of a dispatch plan.
  std::vector<ShaderBinding> bindings;
  // Runtime-sized buffers whose `len` the shader reads: their element counts
  // are passed as u32s, in this order, in a uniform at
  // (kLengthsGroup, kLengthsBinding), packed four to a 16-byte row.
  std::vector<std::string> length_slots;
  std::vector<uint32_t> length_bindings;  // per slot, its index in `bindings`
  uint8_t vector_width = 1;  // elements per invocation (ShaderOptions::vector_width)
  bool loop_guard = false;  // declares the loop guard (ShaderOptions::loop_guard, a program with loops)
  // ShaderOptions::domain_guard: the launch domain's x, y and z follow the
  // lengths in the same uniform, from slot domain_slot().
  bool domain_guard = false;
  size_t domain_slot() const { return length_slots.size(); }
  // The u32 slots of the lengths uniform, and its size (0: none declared).
  size_t uniform_slots() const { return length_slots.size() + (domain_guard ? 3 : 0); }
  uint64_t lengths_bytes() const;
};

// The shader of a program: its WGSL and the interface the text declares.
struct VYRE_API ShaderSpec {
  std::string wgsl;
  ShaderInterface interface;
};

// Throws Error(invalid_input) for options the program cannot take (see
// effective_workgroup_size; a vector_width other than 1 or 4, or 4 for a
// program that cannot be widened, saying why).
VYRE_API ShaderSpec lower(const CheckedProgram& program, const ShaderOptions& options = {});
// The interface alone, without lowering: the one lower() declares (for a
// shader whose text came from the cache).
VYRE_API ShaderInterface shader_interface(const CheckedProgram& program, const ShaderOptions& options = {});
// lower(program, options).wgsl
VYRE_API std::string lower_to_wgsl(const CheckedProgram& program, const ShaderOptions& options = {});

// True when the program may be lowered with ShaderOptions::vector_width 4
// (an element-wise program: docs/lowering.md, "Vector widening"); else
// false, with the reason in `why` when given.
VYRE_API bool widenable(const CheckedProgram& program, const ShaderOptions& options = {}, std::string* why = nullptr);

// A canonical text naming every ShaderOptions field that changes this
// program's WGSL, with its value; fields that cannot change the text are
// left out (a workgroup_override equal to the program's own size, a ULP
// budget for a program with no transcendental it could shorten).
VYRE_API std::string shaping_signature(const CheckedProgram& program, const ShaderOptions& options = {});

}  // namespace vyre
