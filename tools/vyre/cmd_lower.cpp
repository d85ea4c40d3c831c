// vyre lower PROG.json [--workgroup X,Y,Z]: print the WGSL.
#include <iostream>

#include "cli.hpp"
#include "vyre/lower.hpp"

namespace vyre::cli {

void add_lower(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("lower", "Print the WGSL a program lowers to");
  struct Options {
    std::string file;
    ConfigOptions config;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("program", o->file, "Program file (JSON; - reads stdin)")->required();
  add_config_options(cmd, o->config);
  cmd->callback([&action, o] {
    action = [o] {
      const CheckedProgram p = load_program(o->file);
      std::cout << lower_to_wgsl(p, o->config.to_config());
      return kOk;
    };
  });
}

}  // namespace vyre::cli
