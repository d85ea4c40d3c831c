// What `vyre run` dispatches with: --input/--size/--grid options, or a run
// file (PROG.run.json) holding the same plus the expected outputs:
//   {"inputs": {"a": [1, 2]}, "sizes": {"out": 2}, "dim": [2] or "grid": [1, 1, 1],
//    "expect": {"out": [3, 4]}, "tolerance": {"out": {"abs": 1e-6, "rel": 1e-4}}}
// "dim" (an integer or one to three) is the launch domain, kept in `inputs`
// (Inputs::dim).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vyre/dispatch.hpp"
#include "vyre/export.hpp"
#include "vyre/program.hpp"

namespace vyre {

// How far an f32 output may be from the expected value: |got - want| <=
// abs + rel * |want|. Without one, outputs must match exactly.
struct VYRE_API Tolerance {
  double abs = 0;
  double rel = 0;
};

struct VYRE_API RunInputs {
  Inputs inputs;
  std::optional<Dim3> grid;
  std::map<std::string, std::vector<uint8_t>> expect;  // by output buffer name
  std::map<std::string, Tolerance> tolerance;
};

// The most an @FILE input may hold (a buffer of fixed count: exactly its
// size), refused while reading: /dev/zero or a FIFO stops there.
inline constexpr uint64_t kMaxInputFileBytes = 1ull << 30;

// Reads a run file (at most JsonLimits::max_bytes, 64 MiB) against the
// program's buffers. A buffer in both "inputs" and "sizes" is refused.
VYRE_API RunInputs read_run_file(const Program& program, const std::string& path);

// Applies "NAME=V1,V2,..." or "NAME=@FILE": a file named *.npy, *.csv or
// *.json is read as what it holds (values_from_file, values.hpp), any other
// as raw little-endian bytes; a directory is refused. Throws Error(invalid_input) when `inputs` already
// has an entry for NAME: each buffer is given once.
VYRE_API void apply_input_option(const Program& program, const std::string& option, Inputs& inputs);
// Applies "NAME=N", refused the same way.
VYRE_API void apply_size_option(const Program& program, const std::string& option, Inputs& inputs);

}  // namespace vyre
