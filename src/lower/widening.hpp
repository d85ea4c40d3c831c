// Vector widening: which programs may run with each invocation taking four
// consecutive elements through vec4 loads and stores, and what the widened
// shader needs to know about them (docs/lowering.md, "Vector widening").
//
// A program is widenable when it is element-wise: its body is
//   let i = <flat invocation index>;  if (i < len(G)) { S }
// where every access S makes to a runtime-sized storage buffer is at index i,
// no two invocations can touch the same element, and S reads nothing of the
// invocation but i. Then invocation j doing S for i = 4j .. 4j+3 (in that
// order, each as one invocation did) computes what four invocations did.
// Whether a dispatch's lengths and grid allow it is decided per dispatch
// (dispatch/widened_grid.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vyre/checked.hpp"
#include "vyre/shader_options.hpp"

namespace vyre {

inline constexpr uint32_t kWideWidth = 4;

// The flat invocation index forms a widenable program may compute i with.
enum class FlatIndex : uint8_t {
  GidX,   // gid.x (a grid of [n, 1, 1])
  GidXY,  // gid.x + gid.y * (nwg.x * W), W the workgroup's x size ([W, 1, 1])
};

// The flat invocation index form of `e` for a workgroup `workgroup_x` wide,
// if it is one.
std::optional<FlatIndex> flat_index(const Expr& e, uint32_t workgroup_x);

struct Widening {
  FlatIndex index = FlatIndex::GidX;
  std::string index_local;  // the `let` that holds i
  uint32_t guard = 0;       // program().buffers index of G in `i < len(G)`
  struct Access {
    uint32_t buffer = 0;        // program().buffers index
    bool loaded = false;
    bool stored = false;
    bool initial_load = false;  // its vec4 is read before the lanes run (loaded, or not stored by every lane)
  };
  std::vector<Access> buffers;  // the runtime-sized storage buffers S reaches at i, by binding
  const Access* find(uint32_t buffer) const;
};

// The widening of `program` under `options`, or nullopt with the reason in
// `why` (for `vyre lower --explain` and the logs).
std::optional<Widening> find_widening(const CheckedProgram& program, const ShaderOptions& options,
                                      std::string* why = nullptr);

}  // namespace vyre
