// Limits of the program format that are the project's to choose
// (docs/program-format.md records them).
#pragma once

#include <cstddef>
#include <cstdint>

namespace vyre {

inline constexpr uint64_t kMaxWorkgroupInvocations = 1024;
// WebGPU guarantees binding numbers below maxBindingsPerBindGroup (1000).
inline constexpr uint32_t kMaxBinding = 999;
inline constexpr size_t kMaxIdentifierLength = 255;
// Nesting of statements and expressions together.
inline constexpr size_t kMaxNesting = 200;

}  // namespace vyre
