// One dispatch of each of vyre::lib's pass programs, with inputs as the
// primitive would give them (offsets that are a real scan of real counts, an
// automaton that is a real one), for running the same pass on another
// implementation and comparing with the reference interpreter: Dawn in
// Chromium (tests/dawn_test.cpp) and the local GPU (tests/lib_passes_test.cpp).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vyre/checked.hpp"
#include "vyre/dispatch.hpp"
#include "vyre/program.hpp"

namespace vyre::test {

struct LibPassCase {
  std::string name;  // "reduce/f32/sum/w64_i4"
  CheckedProgram program;
  Inputs inputs;
  Dim3 grid{1, 1, 1};
  // f32 outputs whose values may differ from the reference's by this many
  // units in the last place (exp), a subnormal taken as zero (WGSL lets an
  // implementation flush them); every other output must be bit-equal.
  std::map<std::string, uint32_t> ulps;
};

// Every pass program of every primitive, at a small shape and on a few
// thousand elements, for the types every WebGPU implementation has (no f16
// or f64: Dawn's SwiftShader has neither).
std::vector<LibPassCase> lib_pass_cases();

// Whether `got` (an output's bytes) agrees with the reference's `want` under
// the case's rule for `buffer`; the first difference described in `why`.
bool lib_pass_output_agrees(const LibPassCase& c, const std::string& buffer, const std::vector<uint8_t>& got,
                            const std::vector<uint8_t>& want, std::string& why);

}  // namespace vyre::test
