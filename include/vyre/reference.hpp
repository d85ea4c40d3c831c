// The CPU reference interpreter: runs a program with WGSL's semantics
// exactly as docs/program-format.md states them, as the oracle the GPU is
// checked against.
#pragma once

#include "vyre/dispatch.hpp"
#include "vyre/export.hpp"
#include "vyre/program.hpp"

namespace vyre::reference {

// Throws ProgramError for an invalid program and Error(invalid_input) for
// inputs that do not fit it, exactly as the GPU backend does.
VYRE_API Outputs run(const Program& program, const Inputs& inputs, const DispatchConfig& config = {});

}  // namespace vyre::reference
