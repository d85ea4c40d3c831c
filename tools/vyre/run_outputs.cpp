#include "run_outputs.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cli.hpp"
#include "vyre/error.hpp"

namespace vyre::cli {
namespace {

// --format's names: bin is raw little-endian bytes.
std::optional<ValuesFormat> format_named(const std::string& name) {
  if (name == "json") return ValuesFormat::json;
  if (name == "npy") return ValuesFormat::npy;
  if (name == "bin") return ValuesFormat::raw;
  if (name == "csv") return ValuesFormat::csv;
  return std::nullopt;
}

std::string format_flag_name(ValuesFormat format) {
  return format == ValuesFormat::raw ? "bin" : std::string(to_string(format));
}

std::vector<const Buffer*> output_buffers(const Program& program) {
  std::vector<const Buffer*> out;
  for (const Buffer* b : canonical_buffer_order(program))
    if (b->output) out.push_back(b);
  return out;
}

std::string buffer_names(const std::vector<const Buffer*>& buffers) {
  std::string names;
  for (const Buffer* b : buffers) names += (names.empty() ? "" : ", ") + b->name;
  return names;
}

// The directory a file goes into exists and is a directory: checked before
// the program runs, so that a run's results are not lost to a typo.
void check_directory(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    const int err = errno;
    throw WriteError("cannot write " + path + ": " +
                     (err == ENOENT ? "the directory " + dir + " does not exist" : dir + ": " + std::strerror(err)));
  }
  if (!S_ISDIR(st.st_mode)) throw WriteError("cannot write " + path + ": " + dir + " is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw WriteError("cannot write " + path + ": " + dir + ": " + std::strerror(errno));
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw WriteError("cannot write " + path + ": it is a directory");
}

}  // namespace

std::vector<OutputFile> parse_output_options(const std::vector<std::string>& outputs, const std::string& format) {
  if (!format.empty() && outputs.empty())
    throw UsageError("--format " + format + " is the format of --output files: give --output FILE");
  const std::optional<ValuesFormat> forced = format.empty() ? std::nullopt : format_named(format);
  if (!format.empty() && !forced)
    throw UsageError("--format '" + format + "' is not one of json, npy, bin, csv");
  std::vector<OutputFile> files;
  for (const std::string& option : outputs) {
    OutputFile f;
    // NAME=FILE when the word before the first '=' is a buffer's name (no
    // '/'); ./a=b.npy names a file whose name has an '='.
    const size_t eq = option.find('=');
    if (eq != std::string::npos && option.substr(0, eq).find('/') == std::string::npos) {
      f.buffer = option.substr(0, eq);
      f.path = option.substr(eq + 1);
      if (f.buffer.empty()) throw UsageError("--output '" + option + "': the buffer's name before '=' is empty");
    } else {
      f.path = option;
    }
    if (f.path.empty()) throw UsageError("--output '" + option + "': give a file name");
    if (forced) {
      f.format = *forced;
    } else if (const std::optional<ValuesFormat> by_name = values_format_of(f.path)) {
      f.format = *by_name;
    } else {
      throw UsageError("--output " + f.path +
                       ": the file's extension names no format (.json, .npy, .csv, .bin or .raw): give --format "
                       "json|npy|bin|csv");
    }
    for (const OutputFile& other : files)
      if (other.path == f.path) throw UsageError("--output " + f.path + " is given twice: give each file once");
    files.push_back(f);
  }
  return files;
}

void check_output_files(const Program& program, std::vector<OutputFile>& files) {
  const std::vector<const Buffer*> outputs = output_buffers(program);
  for (OutputFile& f : files) {
    if (!f.buffer.empty()) {
      const Buffer* b = program.find_buffer(f.buffer);
      if (b == nullptr || !b->output)
        throw Error(ErrorKind::invalid_input, "--output " + f.buffer + "=" + f.path + ": the program has no output named '" +
                                                  f.buffer + "' (its outputs: " + buffer_names(outputs) + ")");
    } else if (f.format != ValuesFormat::json) {
      if (outputs.size() != 1)
        throw UsageError("--output " + f.path + ": the program has " + std::to_string(outputs.size()) + " outputs (" +
                         buffer_names(outputs) + ") and " +
                         (f.format == ValuesFormat::npy ? "an NPY" : f.format == ValuesFormat::csv ? "a CSV" : "a raw") +
                         " file holds one: name it with --output NAME=FILE, once for each you want"
                         " (a .json file without a name holds them all)");
      f.buffer = outputs.front()->name;
    }
    check_directory(f.path);
  }
}

std::string outputs_json(const Program& program, const Outputs& outputs) {
  std::string out = "{";
  bool first = true;
  for (const Buffer* b : output_buffers(program)) {
    out += (first ? "" : ", ") + json_quote(b->name) + ": " + format_values(b->type, outputs.bytes(b->name));
    first = false;
  }
  return out + "}\n";
}

std::string write_output_files(const Program& program, const Outputs& outputs, const std::vector<OutputFile>& files) {
  std::vector<PendingFile> pending;
  std::string lines;
  pending.reserve(files.size());
  for (const OutputFile& f : files) {
    std::string bytes;
    std::string what;
    if (f.buffer.empty()) {
      bytes = outputs_json(program, outputs);
      what = "every output";
    } else {
      const Buffer* b = program.find_buffer(f.buffer);
      const std::vector<uint8_t>& values = outputs.bytes(f.buffer);
      bytes = values_file(b->type, values, f.format);
      what = "'" + f.buffer + "' (" + std::to_string(values.size() / element_bytes(b->type)) + " " +
             std::string(to_string(b->type)) + ")";
    }
    pending.emplace_back(f.path, bytes);
    lines += "vyre: wrote " + what + " to " + f.path + " (" + format_flag_name(f.format) + ", " +
             std::to_string(bytes.size()) + " bytes)\n";
  }
  // Each file is whole before any is renamed into place.
  for (PendingFile& p : pending) p.commit();
  return lines;
}

}  // namespace vyre::cli
