#include <unistd.h>

#include <charconv>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "vyre/error.hpp"
#include "vyre/json.hpp"

namespace vyre::cli {
namespace {

// An invalid program read from a file: the diagnostics carry the file name.
class FileProgramError : public ProgramError {
 public:
  FileProgramError(std::string file, const ProgramError& e) : ProgramError(e.diagnostics()), file_(std::move(file)) {}
  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

int exit_code_for(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid_program: return kFailure;
    case ErrorKind::invalid_wire:
    case ErrorKind::invalid_input:
    case ErrorKind::io: return kInvalidInput;
    case ErrorKind::no_adapter: return kNoGpu;
    case ErrorKind::gpu:
    case ErrorKind::device_lost:
    case ErrorKind::limit_exceeded: return kGpuError;
    case ErrorKind::lowering: return kInternal;
  }
  return kInternal;
}

}  // namespace

int run_guarded(const Action& action) {
  try {
    return action();
  } catch (const FileProgramError& e) {
    for (const auto& d : e.diagnostics())
      std::cerr << e.file() << ": " << (d.path.empty() ? "" : d.path + ": ") << d.message << "\n";
    return kFailure;
  } catch (const ProgramError& e) {
    for (const auto& d : e.diagnostics()) std::cerr << "vyre: " << (d.path.empty() ? "" : d.path + ": ") << d.message << "\n";
    return kFailure;
  } catch (const Error& e) {
    std::cerr << "vyre: error: " << e.what() << "\n";
    return exit_code_for(e.kind());
  } catch (const std::exception& e) {
    std::cerr << "vyre: internal error: " << e.what() << " (please report this)\n";
    return kInternal;
  }
}

CheckedProgram load_program(const std::string& path) {
  try {
    if (path == "-") {
      std::string text(std::istreambuf_iterator<char>(std::cin), {});
      return program_from_json(text);
    }
    return program_from_json_file(path);
  } catch (const ProgramError& e) {
    throw FileProgramError(path == "-" ? "<stdin>" : path, e);
  }
}

Dim3 parse_dim3(const std::string& text, const std::string& what) {
  Dim3 out{1, 1, 1};
  size_t i = 0, start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    uint32_t v = 0;
    auto res = std::from_chars(part.data(), part.data() + part.size(), v);
    if (i >= 3 || part.empty() || res.ec != std::errc() || res.ptr != part.data() + part.size())
      throw Error(ErrorKind::invalid_input, what + " '" + text + "' is not of the form X or X,Y,Z (non-negative integers)");
    out[i++] = v;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

ShaderOptions ConfigOptions::to_config() const {
  ShaderOptions c;
  if (!workgroup.empty()) c.workgroup_override = parse_dim3(workgroup, "--workgroup");
  if (ulp) {
    if (*ulp < 0 || *ulp > 255) throw Error(ErrorKind::invalid_input, "--ulp must be between 0 and 255");
    c.ulp_budget = static_cast<uint8_t>(*ulp);
  }
  return c;
}

void add_config_options(CLI::App* cmd, ConfigOptions& options) {
  cmd->add_option("--workgroup", options.workgroup, "Workgroup size override X[,Y,Z] (shapes the shader)");
  cmd->add_option("--ulp", options.ulp, "ULP budget for approximate transcendentals, 0-255 (0: WGSL's builtins)");
}

std::string json_quote(const std::string& s) { return nlohmann::json(s).dump(); }

}  // namespace vyre::cli
