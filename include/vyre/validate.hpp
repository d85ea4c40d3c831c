// Validation: every rule of the program format that a program can break.
#pragma once

#include <vector>

#include "vyre/error.hpp"
#include "vyre/export.hpp"
#include "vyre/program.hpp"

namespace vyre {

// Every problem found, in document order; empty means valid.
VYRE_API std::vector<Diagnostic> validate(const Program& program);

// Throws ProgramError when validate() finds anything.
VYRE_API void require_valid(const Program& program);

}  // namespace vyre
