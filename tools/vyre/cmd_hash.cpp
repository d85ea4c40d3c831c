// vyre hash PROG.json: the program's canonical digest (SHA-256 of its wire bytes).
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "vyre/error.hpp"
#include "vyre/wire.hpp"

namespace vyre::cli {

void add_hash(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("hash", "Print a program's canonical digest (its identity)");
  struct Options {
    std::string file;
    std::string wire_out;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("program", o->file, "Program file (JSON; - reads stdin)")->required();
  cmd->add_option("--wire-out", o->wire_out, "Also write the canonical wire bytes to this file");
  cmd->add_flag("--json", o->json, "Print {\"digest\": ..., \"wire_bytes\": N}");
  cmd->callback([&action, o] {
    action = [o] {
      const CheckedProgram p = load_program(o->file);
      const auto wire = to_wire(p);
      const std::string hex = sha256(wire).hex();
      if (!o->wire_out.empty())
        write_output_file(o->wire_out, std::string_view(reinterpret_cast<const char*>(wire.data()), wire.size()));
      if (o->json)
        std::cout << nlohmann::json{{"digest", hex}, {"wire_bytes", wire.size()}}.dump() << "\n";
      else
        std::cout << hex << "\n";
      return kOk;
    };
  });
}

}  // namespace vyre::cli
