// vyre validate PROG.json...: exit 0 when every program is valid, else 1
// with each problem on stderr as FILE: PATH: message (an unreadable file is
// a problem too, so scripts need only the two codes).
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "vyre/error.hpp"

namespace vyre::cli {

void add_validate(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("validate", "Check programs against the format; exit 1 listing every problem");
  auto files = std::make_shared<std::vector<std::string>>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("programs", *files, "Program files (JSON; - reads stdin)")->required();
  cmd->add_flag("--json", *json, "Print one JSON object per program on stdout");
  cmd->callback([&action, files, json] {
    action = [files, json] {
      int code = kOk;
      for (const auto& file : *files) {
        std::vector<Diagnostic> problems;
        try {
          load_program(file);
        } catch (const ProgramError& e) {
          problems = e.diagnostics();
        } catch (const Error& e) {
          problems.push_back({"", e.what()});  // unreadable: not valid either
        }
        if (*json) {
          nlohmann::json out = {{"file", file}, {"valid", problems.empty()}, {"errors", nlohmann::json::array()}};
          for (const auto& d : problems) out["errors"].push_back({{"path", d.path}, {"message", d.message}});
          std::cout << out.dump() << "\n";
        } else if (problems.empty()) {
          std::cout << file << ": valid\n";
        } else {
          for (const auto& d : problems)
            std::cerr << file << ": " << (d.path.empty() ? "" : d.path + ": ") << d.message << "\n";
        }
        if (!problems.empty()) code = kFailure;
      }
      return code;
    };
  });
}

}  // namespace vyre::cli
