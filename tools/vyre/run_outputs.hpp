// vyre run --output [NAME=]FILE [--format json|npy|bin|csv]: the outputs
// written to files instead of printed (docs/cli.md, "Output files").
#pragma once

#include <string>
#include <vector>

#include "vyre/dispatch.hpp"
#include "vyre/program.hpp"
#include "vyre/values.hpp"

namespace vyre::cli {

// One --output: a buffer (empty: the program's outputs, as stdout would
// print them) and the file it goes to, in its format.
struct OutputFile {
  std::string buffer;
  std::string path;
  ValuesFormat format = ValuesFormat::json;
};

// The --output options and --format, read before the program is: each
// file's format (--format, else its extension). Throws UsageError for a
// file whose format neither names, --format without --output, or one file
// given twice.
std::vector<OutputFile> parse_output_options(const std::vector<std::string>& outputs, const std::string& format);

// Checks the files against the program before it runs: each named buffer
// is an output (else Error(invalid_input)), a file without a name in a
// format other than JSON goes with a program of one output (else
// UsageError saying to name the buffer), and each file's directory exists
// (else WriteError). Fills in the buffer of a file without a name when the
// program has one output and the format is not JSON.
void check_output_files(const Program& program, std::vector<OutputFile>& files);

// The outputs, in binding order, as one JSON object: what `vyre run` prints.
std::string outputs_json(const Program& program, const Outputs& outputs);

// Writes every file: each whole to a temporary file first, then all renamed
// into place, so that a failed write leaves no file changed. Returns what
// was written, one line a file, for --verbose.
std::string write_output_files(const Program& program, const Outputs& outputs, const std::vector<OutputFile>& files);

}  // namespace vyre::cli
