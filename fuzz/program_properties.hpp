// What must hold of every valid program, whatever produced it (the JSON
// reader, the wire decoder, the generator): the shared properties of the
// fuzz targets.
#pragma once

#include <string>

#include "vyre/checked.hpp"
#include "vyre/shader_options.hpp"

namespace vyre::fuzz {

// Traps unless: the wire encoding decodes to a program that encodes to the
// same bytes; the digest of the decoded program equals the original's; the
// JSON writer's text reads back to the same wire bytes; lowering with
// `options` succeeds. Returns the WGSL, for a caller that compiles it.
std::string check_valid_program(const CheckedProgram& program, const ShaderOptions& options = {});

}  // namespace vyre::fuzz
