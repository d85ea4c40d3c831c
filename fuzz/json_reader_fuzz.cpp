// The JSON reader on arbitrary text: it either refuses with vyre::Error
// (ProgramError with paths, or invalid_input) or its program, once checked,
// has every property of a valid program (program_properties.hpp). Any other
// exception escapes and aborts: a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "program_properties.hpp"
#include "vyre/error.hpp"
#include "vyre/json.hpp"
#include "vyre/validate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  vyre::Program program;
  try {
    program = vyre::program_from_json_unchecked(text);
  } catch (const vyre::Error&) {
    return 0;
  }
  if (!vyre::validate(program).empty()) return 0;
  vyre::fuzz::check_valid_program(vyre::CheckedProgram(std::move(program)));
  return 0;
}
