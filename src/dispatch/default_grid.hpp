// When a dispatch given neither a launch domain nor a grid may take the
// default grid, [ceil(n / workgroup_size.x), 1, 1] with n the first
// output's element count (docs/gpu.md, "Launches"): only for a program
// whose invocation i writes element i under a check `i < len(B)` (or after
// `if (i >= len(B)) { return }`), and only
// when the grid runs every i that passes such a check. Then the default grid
// computes what any larger one would. Anything else is refused with what to
// give instead, never run on part of its data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vyre/checked.hpp"
#include "vyre/shader_options.hpp"

namespace vyre {

struct DefaultGridProof {
  bool proven = false;
  std::string why_not;  // when not proven: what the program does instead
  // Per store, the buffers (program().buffers indices) of the checks
  // `i < len(B)` around it; the grid must run i < len(B) for one of them.
  std::vector<std::vector<uint32_t>> store_checks;
};

// The program is proven when its workgroup is one-dimensional, its body
// starts with `let i = gid.x` (or gid.x + gid.y * (nwg.x * W), the same on
// a grid one high) never reassigned, it uses no
// atomic, and every store anywhere is to a storage buffer at exactly index i, inside an `if (i < len(B))` or after an
// `if (i >= len(B)) { return }` in the same block.
DefaultGridProof prove_default_grid(const CheckedProgram& program, const ShaderOptions& options);

}  // namespace vyre
