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
// Statements and expressions of one program together. naga's shader
// creation grows quadratically with a program's size (on lavapipe, here:
// 5,000 chained statements 0.4 s, 20,000 3.5 s, 50,000 22 s, 100,000 82 s;
// about six nodes a statement), so larger programs are refused up front
// rather than left to stall a first dispatch for minutes.
inline constexpr size_t kMaxProgramNodes = 100'000;
// Workgroup buffers of one program. Each is a variable of its own in the
// shader, and the first dispatch's pipeline creation grows much faster than
// their count (docs/program-format.md, "Limits", has the figures), while
// their size is left to the device's workgroup storage limit: 4-byte
// buffers alone would allow 4,096 in the 16 KiB every device has.
inline constexpr size_t kMaxWorkgroupBuffers = 64;
// Elements of all the private arrays of one program together
// (docs/program-format.md, "Limits", has the measurements).
inline constexpr uint64_t kMaxPrivateElements = 1024;

}  // namespace vyre
