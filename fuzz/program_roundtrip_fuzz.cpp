// Structure-aware: the fuzzer's bytes are the decisions of the differential
// tester's program generator (tests/differential/random_program.hpp), so
// every input is a valid program and the mutations explore programs, not
// parse errors. Properties (a violation traps):
// - the generator's program validates (else the generator has a bug);
// - encode -> decode -> encode is the identity and the digest is stable
//   (through the wire and through JSON); lowering never fails
//   (program_properties.hpp);
// - naga, wgpu-native's WGSL front end, accepts the text (shader_compiler.hpp).
// Set VYRE_FUZZ_SKIP_NAGA=1 to leave the last out (no GPU, or for speed).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "choice_bytes.hpp"
#include "differential/random_program.hpp"
#include "fuzz_check.hpp"
#include "program_properties.hpp"
#include "shader_compiler.hpp"
#include "vyre/validate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool skip_naga = std::getenv("VYRE_FUZZ_SKIP_NAGA") != nullptr;
  auto choices = vyre::differential::ChoiceStream::replay(vyre::fuzz::decisions_from_bytes(data, size));
  vyre::differential::GeneratedCase generated = vyre::differential::generate_case(choices);

  const std::vector<vyre::Diagnostic> problems = vyre::validate(generated.program);
  for (const auto& d : problems) std::fprintf(stderr, "%s: %s\n", d.path.c_str(), d.message.c_str());
  FUZZ_REQUIRE(problems.empty(), "the generator makes valid programs");

  const std::string wgsl = vyre::fuzz::check_valid_program(generated.program, generated.options);
  if (skip_naga) return 0;
  if (auto error = vyre::fuzz::shader_module_error(wgsl)) {
    std::fprintf(stderr, "%s\n--- WGSL ---\n%s\n", error->c_str(), wgsl.c_str());
    FUZZ_REQUIRE(false, "naga accepts the lowered WGSL");
  }
  return 0;
}
