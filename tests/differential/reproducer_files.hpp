// Reproducers on disk. A case NAME is three files in one folder:
//   NAME.json        the program (`vyre validate`, `vyre lower`, `vyre run` read it)
//   NAME.run.json    a run file: inputs, sizes, grid, the reference's outputs
//                    as "expect", tolerances of bounded outputs
//                    (`vyre run NAME.json --inputs NAME.run.json --check`)
//   NAME.found.json  what the differential tester knows besides: the seed,
//                    a workgroup override, each output's comparison rule,
//                    which inputs may be shortened, and what was found
//                    (the outcome, its detail, the GPU's outputs then)
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "differential/generated_case.hpp"
#include "vyre/dispatch.hpp"

namespace vyre::differential {

struct Reproducer {
  GeneratedCase c;
  std::string description;          // one line: what it is, and for a regression case the cause and fix
  std::string outcome;              // "mismatch", "gpu error", ...
  std::string detail;               // the differences or the error, when found
  std::optional<Outputs> expect;    // the reference's outputs
  std::optional<Outputs> gpu;       // the GPU's outputs when found
};

// Writes the three files; returns the path of NAME.json.
std::filesystem::path save_reproducer(const std::filesystem::path& folder, const std::string& name, const Reproducer& r);

// Reads NAME.json and the two files beside it. Throws vyre::Error(io or
// invalid_input) naming the file that is wrong.
Reproducer load_reproducer(const std::filesystem::path& program_file);

// True for NAME.json, false for the NAME.run.json and NAME.found.json beside it.
bool is_reproducer_program(const std::filesystem::path& file);

// The NAME.json files of a folder (not the .run.json and .found.json ones), sorted.
std::vector<std::filesystem::path> list_reproducers(const std::filesystem::path& folder);

}  // namespace vyre::differential
