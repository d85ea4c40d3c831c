#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <charconv>
#include <utility>
#include <iostream>
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

// Standard input to its end, refused as soon as it passes the program
// limit: `yes | vyre validate -` stops there instead of filling memory.
std::string read_stdin_program() {
  const size_t limit = JsonLimits{}.max_bytes;
  std::string text;
  char chunk[1 << 16];
  while (std::cin.read(chunk, sizeof chunk) || std::cin.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(std::cin.gcount()));
    if (text.size() > limit)
      throw Error(ErrorKind::invalid_input, "<stdin> is larger than " + std::to_string(limit >> 20) +
                                                " MiB, the limit of a program (vyre::JsonLimits::max_bytes)");
  }
  if (std::cin.bad()) throw Error(ErrorKind::io, "cannot read the program from stdin");
  return text;
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
  } catch (const WriteError& e) {
    std::cerr << "vyre: error: " << e.what() << "\n";
    return kWriteError;
  } catch (const UsageError& e) {
    std::cerr << "vyre: error: " << e.what() << "\n";
    return kUsage;
  } catch (const std::exception& e) {
    std::cerr << "vyre: internal error: " << e.what() << " (please report this)\n";
    return kInternal;
  }
}

void write_output_file(const std::string& path, std::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw WriteError("cannot write " + path + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      ::close(fd);
      throw WriteError("cannot write " + path + ": " + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  // Some file systems (NFS, quotas) report a failed write only at close.
  if (::close(fd) != 0) throw WriteError("cannot write " + path + ": " + std::strerror(errno));
}

PendingFile::PendingFile(std::string path, std::string_view bytes) : path_(std::move(path)) {
  const auto fail = [this](int err) {
    return WriteError("cannot write " + path_ + ": " + std::strerror(err));
  };
  const size_t slash = path_.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "" : path_.substr(0, slash + 1);
  // A name short enough for any file system beside the destination's own.
  const std::string base = path_.substr(slash == std::string::npos ? 0 : slash + 1).substr(0, 200);
  static unsigned serial = 0;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    temporary_ = dir + "." + base + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(serial++);
    fd = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && (errno != EEXIST || attempt == 100)) {
      const int err = errno;
      temporary_.clear();
      throw fail(err);
    }
  }
  size_t done = 0;
  int err = 0;
  while (done < bytes.size() && err == 0) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) err = n < 0 ? errno : ENOSPC;
    else done += static_cast<size_t>(n);
  }
  // Synced before the rename: after a crash the name holds the whole new
  // file or the old one. Some file systems (NFS, quotas) report a failed
  // write only at close.
  if (err == 0 && ::fsync(fd) != 0 && errno != EINVAL) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    ::unlink(temporary_.c_str());
    temporary_.clear();
    throw fail(err);
  }
}

PendingFile::PendingFile(PendingFile&& other) noexcept
    : path_(std::move(other.path_)), temporary_(std::exchange(other.temporary_, {})) {}

PendingFile::~PendingFile() {
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
}

void PendingFile::commit() {
  if (::rename(temporary_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    throw WriteError("cannot write " + path_ + ": " +
                     (err == EISDIR ? std::string("it is a directory") : std::string(std::strerror(err))));
  }
  temporary_.clear();
}

int finish_stdout(int code) {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int err = errno;
  if (flushed && !std::cout.fail() && !std::ferror(stdout)) return code;
  std::cerr << "vyre: error: cannot write the output to stdout" << (err != 0 ? std::string(": ") + std::strerror(err) : "")
            << "\n";
  return code == kOk ? kWriteError : code;
}

CheckedProgram load_program(const std::string& path) {
  try {
    if (path == "-") return program_from_json(read_stdin_program());
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
  c.passes = !no_passes;
  c.domain_guard = domain_guard;
  for (const std::string& text : fixed_lengths) {
    const size_t eq = text.find('=');
    uint32_t n = 0;
    const char* end = text.data() + text.size();
    const auto res = eq == std::string::npos ? std::from_chars_result{nullptr, std::errc::invalid_argument}
                                             : std::from_chars(text.data() + eq + 1, end, n);
    if (eq == std::string::npos || eq == 0 || res.ec != std::errc() || res.ptr != end || eq + 1 == text.size())
      throw Error(ErrorKind::invalid_input, "--fixed-length '" + text + "' is not of the form NAME=N (N a u32)");
    c.fixed_lengths[text.substr(0, eq)] = n;
  }
  return c;
}

void add_config_options(CLI::App* cmd, ConfigOptions& options) {
  cmd->add_option("--workgroup", options.workgroup, "Workgroup size override X[,Y,Z] (shapes the shader)");
  cmd->add_option("--ulp", options.ulp, "ULP budget, 0-255: operators get faster forms whose measured error is within it (0: WGSL's builtins)");
  cmd->add_flag("--no-passes", options.no_passes,
                "Write the shader without constant folding, dead-code and common-subexpression elimination");
  cmd->add_flag("--domain-guard", options.domain_guard,
                "Write the launch-domain guard into the shader, as a dispatch given a domain (--dim) has it: "
                "invocations outside the domain have no effect (docs/gpu.md, \"Launches\")");
  cmd->add_option("--fixed-length", options.fixed_lengths,
                  "NAME=N: write len(NAME) into the shader as N (length specialization; dispatches must then give "
                  "NAME exactly N elements). Repeatable");
}

std::string json_quote(const std::string& s) { return nlohmann::json(s).dump(); }

}  // namespace vyre::cli
