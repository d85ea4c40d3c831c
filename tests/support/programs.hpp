// Programs shared by several tests, built with the C++ builder.
#pragma once

#include <vector>

#include "samples/programs.hpp"
#include "vyre/builder.hpp"
#include "vyre/checked.hpp"
#include "vyre/program.hpp"

namespace vyre::test {

// The spec's xor example, as the benchmarks run it.
using samples::xor_program;

// One program touching every statement and every expression of the format
// (every operator, every builtin, atomics, barriers, uniform and workgroup
// buffers), valid.
Program every_construct_program();

// Programs whose constant sub-expressions would be WGSL shader-creation
// errors if lowered naively (division by a zero literal, overflow, shifts
// past the width, out-of-range constant indices, special floats...).
std::vector<Program> constant_hazard_programs();

// out[gid.y * width + gid.x] = a[i] * 3 + i, width from a uniform: reads
// nothing of its workgroup (8 x 8), so tuning may re-tile it.
CheckedProgram grid_2d_program();

// out[i] = a[i] * 2 over u32, in workgroups of 64: the cache tests' small
// program.
CheckedProgram doubler_program();

// Reads examples/NAME.json.
Program example(const std::string& name);

}  // namespace vyre::test
