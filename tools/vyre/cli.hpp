// Shared pieces of the `vyre` command-line program: command registration,
// exit codes (docs/cli.md), error reporting, reading programs and the
// options every command that lowers a program takes.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "vyre/checked.hpp"
#include "vyre/dispatch.hpp"
#include "vyre/program.hpp"

namespace vyre::cli {

// Milliseconds from `start` to now, for the timings commands print.
inline double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Exit codes, documented in docs/cli.md.
enum Exit : int {
  kOk = 0,
  kFailure = 1,       // the answer is "no": an invalid program, bad cache entries
  kUsage = 2,         // bad command line
  kInvalidInput = 3,  // inputs that do not fit the program, unreadable files
  kNoGpu = 4,         // no usable GPU adapter
  kGpuError = 5,      // the GPU reported an error (shader, pipeline, device lost, a limit)
  kWriteError = 6,    // a write the system refused: stdout, an output file, the cache directory (full or read-only disk)
  kInternal = 70,     // a bug: please report it
};

// A command's body returns an exit code; exceptions are mapped by run_guarded.
using Action = std::function<int()>;

// Each command file adds its subcommand and sets `action` when it is chosen.
void add_validate(CLI::App& app, Action& action);
void add_hash(CLI::App& app, Action& action);
void add_lower(CLI::App& app, Action& action);
void add_run(CLI::App& app, Action& action);
void add_devices(CLI::App& app, Action& action);
void add_demo(CLI::App& app, Action& action);
void add_cache(CLI::App& app, Action& action);
void add_export(CLI::App& app, Action& action);
void add_lib(CLI::App& app, Action& action);
void add_help(CLI::App& app, Action& action);
void add_version(CLI::App& app, Action& action);
void add_completions(CLI::App& app, Action& action);

// A write of the command's output that the system refused (exit kWriteError).
class WriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A command line that is wrong in a way only the command can tell, once it
// has read its options (exit kUsage): a flag that needs another, a file
// whose format no flag or extension names.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes a whole file (created or truncated), checked through its close;
// throws WriteError naming the file and the system's reason.
void write_output_file(const std::string& path, std::string_view bytes);

// A file written whole beside its destination (a hidden temporary file in
// the same directory, its data synced to disk) and renamed onto it by
// commit(), so that a reader sees the old file or the new one, never part
// of one. A file never committed is removed. Throws WriteError naming the
// destination and the system's reason.
class PendingFile {
 public:
  PendingFile(std::string path, std::string_view bytes);
  ~PendingFile();
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;
  PendingFile(PendingFile&& other) noexcept;
  PendingFile& operator=(PendingFile&&) = delete;
  void commit();

 private:
  std::string path_;
  std::string temporary_;  // empty once committed or moved from
};

// Flushes stdout and checks that everything printed reached it; a failure
// prints why and turns a success into kWriteError.
int finish_stdout(int code);

// Runs an action, printing any error on stderr ("vyre: error: ...", or one
// line per problem for an invalid program) and mapping it to an exit code.
int run_guarded(const Action& action);

// Reads and validates a program file ("-" reads stdin). Problems are
// reported with the file name in front of each JSON path.
CheckedProgram load_program(const std::string& path);

// --workgroup X,Y,Z, --ulp N, --no-passes and --fixed-length NAME=N: the
// ShaderOptions that shape WGSL.
struct ConfigOptions {
  std::string workgroup;
  std::optional<int> ulp;
  bool no_passes = false;
  bool domain_guard = false;
  std::vector<std::string> fixed_lengths;  // NAME=N each
  ShaderOptions to_config() const;
};
void add_config_options(CLI::App* cmd, ConfigOptions& options);

// "64" or "64,1,1" -> {64,1,1}; throws Error(invalid_input) naming `what`.
Dim3 parse_dim3(const std::string& text, const std::string& what);

// The source of a JSON string: "text" with quotes and escapes.
std::string json_quote(const std::string& s);

}  // namespace vyre::cli
