// Writes the programs of the Python round trip (python/tests/test_round_trip.py)
// as JSON files into a folder: every conformance case's two programs (its
// operator on loaded operands and on literals), the conformance scenarios
// (whole constructs), the program using every construct, and the
// differential tester's generated programs for seeds 1..N.
//
//   round_trip_corpus DIR [--generated N]
//
// The Python printer writes each back as a @vyre.kernel and the translator
// reads it again; the test compares digests. Files are named
// <family>.<name>.json, so a failure names its program.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "differential/random_program.hpp"
#include "support/conformance_cases.hpp"
#include "support/programs.hpp"
#include "vyre/json.hpp"

namespace {

namespace fs = std::filesystem;

std::string file_name(std::string text) {
  for (char& c : text)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
  return text;
}

void write(const fs::path& dir, const std::string& family, const std::string& name, const vyre::Program& program) {
  std::ofstream out(dir / (family + "." + file_name(name) + ".json"));
  out << vyre::program_to_json(program) << "\n";
  if (!out) throw std::runtime_error("cannot write into " + dir.string());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help") {
    std::fprintf(stderr, "usage: round_trip_corpus DIR [--generated N]\n");
    return argc < 2 ? 2 : 0;
  }
  const fs::path dir = argv[1];
  uint64_t generated = 200;
  for (int i = 2; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--generated") generated = std::strtoull(argv[i + 1], nullptr, 10);
  try {
    fs::create_directories(dir);
    using namespace vyre::test::conformance;
    for (const auto& c : all_cases()) {
      write(dir, "conformance-loaded", c->name, loaded_program(*c));
      write(dir, "conformance-literal", c->name, literal_program(*c));
    }
    for (const Scenario& s : construct_scenarios()) write(dir, "scenario", s.name, s.program);
    write(dir, "construct", "every_construct", vyre::test::every_construct_program());
    for (uint64_t seed = 1; seed <= generated; ++seed)
      write(dir, "generated", std::to_string(seed), vyre::differential::generate_case(seed).program);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "round_trip_corpus: %s\n", e.what());
    return 1;
  }
  return 0;
}
