// JSON read and write of programs (docs/program-format.md).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "vyre/checked.hpp"
#include "vyre/export.hpp"
#include "vyre/program.hpp"

namespace vyre {

struct VYRE_API JsonLimits {
  size_t max_bytes = 64u << 20;  // larger documents are refused before parsing (files: while reading)
  size_t max_depth = 256;        // nesting of JSON arrays and objects
};

// Parses and checks; throws ProgramError with every problem found (each
// with its JSON path), Error(io) when the file cannot be read (or is a
// directory), or Error(invalid_input) when it holds more than max_bytes
// (checked while reading: a FIFO or /dev/zero stops at the limit).
VYRE_API CheckedProgram program_from_json(std::string_view text, const JsonLimits& limits = {});
VYRE_API CheckedProgram program_from_json_file(const std::filesystem::path& path, const JsonLimits& limits = {});

// Parses without validating (the validator reports the rest).
VYRE_API Program program_from_json_unchecked(std::string_view text, const JsonLimits& limits = {});

// Writes the program back; buffers keep their declaration order. f32
// literals are written so that they read back to the same bits.
VYRE_API std::string program_to_json(const Program& program, int indent = 2);

}  // namespace vyre
