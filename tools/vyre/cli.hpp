// Shared pieces of the `vyre` command-line program: command registration,
// exit codes (docs/cli.md) and error reporting.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace vyre::cli {

// Exit codes, documented in docs/cli.md.
enum Exit : int {
  kOk = 0,
  kFailure = 1,       // the command ran and the answer is "no": invalid program, bad cache entries
  kUsage = 2,         // bad command line
  kInvalidInput = 3,  // inputs that do not fit the program, unreadable files
  kNoGpu = 4,         // no usable GPU adapter
  kGpuError = 5,      // the GPU reported an error
  kInternal = 70,     // a bug: please report it
};

// A command's body returns an exit code; exceptions are mapped by run_guarded.
using Action = std::function<int()>;

// Each command file adds its subcommand and sets `action` for it.
void add_validate(CLI::App& app, Action& action);
void add_hash(CLI::App& app, Action& action);
void add_lower(CLI::App& app, Action& action);
void add_run(CLI::App& app, Action& action);
void add_devices(CLI::App& app, Action& action);
void add_demo(CLI::App& app, Action& action);

// Runs an action, printing any error as "vyre: error: ..." on stderr and
// mapping it to an exit code.
int run_guarded(const Action& action);

}  // namespace vyre::cli
