// The wire decoder on arbitrary bytes: it either refuses with
// Error(invalid_wire) or accepts only the canonical encoding, so what it
// accepts encodes back to exactly the bytes given; a decoded program that
// validates has every property of a valid program (program_properties.hpp).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fuzz_check.hpp"
#include "program_properties.hpp"
#include "vyre/error.hpp"
#include "vyre/validate.hpp"
#include "vyre/wire.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  vyre::Program program;
  try {
    program = vyre::from_wire(bytes);
  } catch (const vyre::Error& e) {
    FUZZ_REQUIRE(e.kind() == vyre::ErrorKind::invalid_wire, "the decoder refuses with invalid_wire only");
    return 0;
  }
  FUZZ_REQUIRE(vyre::to_wire(program) == std::vector<uint8_t>(bytes.begin(), bytes.end()),
               "only the canonical encoding is accepted: decode -> encode is the identity");
  if (!vyre::validate(program).empty()) return 0;
  vyre::fuzz::check_valid_program(vyre::CheckedProgram(std::move(program)));
  return 0;
}
