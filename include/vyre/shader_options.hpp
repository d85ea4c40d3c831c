// What shapes a program's shader, apart from the program itself: the
// options the lowering reads. Launch settings (the grid) are not here: they
// belong to each dispatch and never change the shader or its cache key.
//
// Adding an option means adding a field here and teaching the lowering
// (src/lower/) to read it and to name it in shaping_signature(); nothing
// else changes (docs/architecture.md).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "vyre/export.hpp"
#include "vyre/program.hpp"

namespace vyre {

using Dim3 = std::array<uint32_t, 3>;

struct VYRE_API ShaderOptions {
  // Replaces the program's workgroup_size.
  std::optional<Dim3> workgroup_override;
  // None or 0: WGSL's builtins. 1..255: the lowering may use faster
  // transcendentals whose measured maximum error stays within this many ULP.
  std::optional<uint8_t> ulp_budget;
  // The shader reports every loop that did not end by its own condition or
  // a break, and the dispatch then fails instead of returning its results.
  // gpu::Backend sets it on adapters whose shader compiler ends loops early
  // (lavapipe stops an invocation's loops after 65,535 iterations in all:
  // docs/conformance.md, "Driver defects"); it shapes only programs with loops.
  bool loop_guard = false;
  // Elements per invocation: 1, or 4 for a widenable (element-wise) program,
  // whose shader then takes four consecutive elements per invocation with
  // vec4 loads and stores (docs/lowering.md, "Vector widening"). gpu::Backend
  // picks the width per dispatch; a program that cannot be widened refuses 4.
  uint8_t vector_width = 1;
  // Constant folding, dead-code elimination and common-subexpression
  // elimination before the WGSL is written (docs/lowering.md, "Passes").
  // Results are the same either way; off only to compare or to test.
  bool passes = true;
  // Length specialization: a runtime-sized buffer named here has its `len`
  // written into the shader as this element count, so checks against it can
  // fold away (docs/lowering.md, "Length specialization"). A dispatch must
  // then give the buffer exactly that many elements; the planner refuses
  // any other length.
  std::map<std::string, uint32_t> fixed_lengths;
  // The launch-domain guard (docs/gpu.md, "Launches"): the shader reads the
  // dispatch's domain from its lengths uniform, and an invocation outside it
  // has no effect: its stores are skipped and its atomics only read. A
  // Pipeline compiles it for the dispatches given a domain (Inputs::dim);
  // it is never widened (vector_width 1).
  bool domain_guard = false;

  friend bool operator==(const ShaderOptions&, const ShaderOptions&) = default;
};

// The workgroup size a shader of `program` is built and dispatched with: the
// override when given, else the program's own. The one rule for it: each
// size at least 1 and the product at most 1024 invocations. Throws
// Error(invalid_input) naming what is wrong.
VYRE_API Dim3 effective_workgroup_size(const Program& program, const ShaderOptions& options);

// A size or grid as people write it: "64x1x1".
VYRE_API std::string dim3_text(const Dim3& d);

// options.fixed_lengths, after checking that each names a runtime-sized
// buffer bound by `program`; throws Error(invalid_input) naming the first
// that does not.
VYRE_API const std::map<std::string, uint32_t>& checked_fixed_lengths(const Program& program,
                                                                      const ShaderOptions& options);

}  // namespace vyre
