#include "program_properties.hpp"

#include "fuzz_check.hpp"
#include "vyre/error.hpp"
#include "vyre/json.hpp"
#include "vyre/lower.hpp"
#include "vyre/wire.hpp"

namespace vyre::fuzz {

std::string check_valid_program(const CheckedProgram& program, const ShaderOptions& options) {
  const std::vector<uint8_t> bytes = to_wire(program);
  Program decoded;
  try {
    decoded = from_wire(bytes);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    FUZZ_REQUIRE(false, "the decoder accepts every encoding");
  }
  FUZZ_REQUIRE(to_wire(decoded) == bytes, "encode -> decode -> encode is the identity");
  FUZZ_REQUIRE(digest(decoded) == digest(program), "the digest survives the wire");
  FUZZ_REQUIRE(digest(program) == sha256(bytes), "the digest is SHA-256 of the wire bytes");

  try {
    const Program reread = program_from_json(program_to_json(program));
    FUZZ_REQUIRE(to_wire(reread) == bytes, "JSON write -> read keeps the wire bytes");
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    FUZZ_REQUIRE(false, "the JSON reader accepts what the writer wrote");
  }

  try {
    return lower(program, options).wgsl;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    FUZZ_REQUIRE(false, "lowering never fails for a valid program");
  }
  return {};
}

}  // namespace vyre::fuzz
