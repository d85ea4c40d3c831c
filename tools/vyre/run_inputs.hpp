// What `vyre run` dispatches with: --input/--size/--grid options, or a run
// file (PROG.run.json) holding the same plus the expected outputs:
//   {"inputs": {"a": [1, 2]}, "sizes": {"out": 2}, "grid": [1, 1, 1],
//    "expect": {"out": [3, 4]}}
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vyre/dispatch.hpp"
#include "vyre/program.hpp"

namespace vyre::cli {

struct RunInputs {
  Inputs inputs;
  std::optional<Dim3> grid;
  std::map<std::string, std::vector<uint8_t>> expect;  // by output buffer name
};

// Reads a run file against the program's buffers.
RunInputs read_run_file(const Program& program, const std::string& path);

// Applies "NAME=V1,V2,..." or "NAME=@FILE" (raw little-endian bytes).
void apply_input_option(const Program& program, const std::string& option, Inputs& inputs);
// Applies "NAME=N".
void apply_size_option(const Program& program, const std::string& option, Inputs& inputs);

}  // namespace vyre::cli
