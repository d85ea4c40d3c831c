// The JSON path of a statement or expression of a program ("body[1].then[0]
// .value.add[1]"), as the checker's diagnostics name it: how the reference
// interpreter's checks (reference::RunChecks) say where a fault is, and how
// a Python kernel's errors find the user's line from it.
#pragma once

#include <string>

#include "vyre/program.hpp"

namespace vyre::reference {

// The path of `node` (a Stmt or an Expr of `program`), or "" when it is none
// of them. Walks the program: for errors only, never on a hot path.
std::string source_path(const Program& program, const void* node);

}  // namespace vyre::reference
