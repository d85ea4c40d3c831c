// What a DispatchConfig means for one program: the workgroup size the shader
// is built with, after the override, checked.
#pragma once

#include "vyre/dispatch.hpp"
#include "vyre/program.hpp"

namespace vyre::lower {

// Throws Error(invalid_input) for an override with a zero or more than 1024
// invocations.
Dim3 effective_workgroup_size(const Program& program, const DispatchConfig& config);

// Runtime-sized, bound buffers whose `len` the program reads, in canonical order.
std::vector<const Buffer*> length_slot_buffers(const Program& program);

}  // namespace vyre::lower
