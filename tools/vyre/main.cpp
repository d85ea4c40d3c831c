// vyre: validate, hash, lower and run vyre programs; inspect devices and the cache.
#include <cstdio>
#include <exception>
#include <iostream>

#include "cli.hpp"
#include "command_tree.hpp"
#include "runtime_dir.hpp"
#include "vyre/error.hpp"
#include "vyre/version.hpp"

// Every command's failures are handled in run_guarded; what throws outside it
// (setting the commands up) is an internal error too, not std::terminate.
int main(int argc, char** argv) try {
  using namespace vyre::cli;
  const HeadlessRuntimeDir runtime_dir;  // single-threaded here: setenv is safe
  vyre::set_caller_language(vyre::CallerLanguage::cli);
  CLI::App app{"vyre: portable GPU compute programs, lowered to WGSL, cached ahead of time, run through WebGPU"};
  app.name("vyre");
  app.set_version_flag("--version", std::string("vyre ") + vyre::kVersion);
  app.require_subcommand(1);
  app.footer("Run `vyre COMMAND --help` for a command's options. Exit codes and settings: docs/cli.md, docs/configuration.md.");

  Action action;
  add_validate(app, action);
  add_hash(app, action);
  add_lower(app, action);
  add_run(app, action);
  add_devices(app, action);
  add_demo(app, action);
  add_cache(app, action);
  add_export(app, action);
  add_lib(app, action);
  add_help(app, action);
  add_version(app, action);
  add_completions(app, action);

  // An unknown command or flag is named with the nearest one before CLI11
  // parses (whose message would blame the first word it could not place).
  if (const std::optional<std::string> wrong = misuse(app, argc, argv)) {
    std::cerr << *wrong << "\n";
    return kUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version print to stdout, which is checked like any output.
    const int code = app.exit(e);
    return finish_stdout(code == 0 ? kOk : kUsage);
  }
  return finish_stdout(run_guarded(action));
} catch (const std::exception& e) {
  std::cerr << "vyre: internal error: " << e.what() << " (please report this)\n";
  return vyre::cli::kInternal;
} catch (...) {
  std::cerr << "vyre: internal error (please report this)\n";
  return vyre::cli::kInternal;
}
