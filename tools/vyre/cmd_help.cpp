// vyre help [COMMAND...] and vyre version: a command's help as its --help
// prints it, and the version as --version does (with --json for scripts).
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "command_tree.hpp"
#include "vyre/program.hpp"
#include "vyre/version.hpp"

namespace vyre::cli {

void add_help(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("help", "Show the help of vyre or of a command: vyre help cache stats");
  auto words = std::make_shared<std::vector<std::string>>();
  cmd->add_option("command", *words, "The command, and its subcommand, whose help to show");
  cmd->callback([&app, &action, words] {
    action = [&app, words] {
      const CLI::App* target = &app;
      for (const std::string& w : *words) {
        const std::vector<const CLI::App*> subs = subcommands_of(*target);
        const auto found =
            std::find_if(subs.begin(), subs.end(), [&](const CLI::App* s) { return s->check_name(w); });
        if (found == subs.end()) {
          const std::optional<std::string> near = nearest(w, names_of(subs));
          std::cerr << "vyre: '" << w << "' is not a " << path_of(*target) << " command."
                    << (near ? " Did you mean '" + *near + "'?" : std::string()) << " See 'vyre help'.\n";
          return static_cast<int>(kUsage);
        }
        target = *found;
      }
      // The formatter itself: App::help would show the help of the command
      // being run (this one) instead.
      std::cout << target->get_formatter()->make_help(target, path_of(*target), CLI::AppFormatMode::Normal);
      return static_cast<int>(kOk);
    };
  });
}

void add_version(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("version", "Print vyre's version (as --version)");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print {\"version\", \"format_version\"}: the newest program format this vyre reads");
  cmd->callback([&action, json] {
    action = [json] {
      if (*json)
        std::cout << nlohmann::json{{"version", kVersion}, {"format_version", kFormatVersion}}.dump() << "\n";
      else
        std::cout << "vyre " << kVersion << "\n";
      return static_cast<int>(kOk);
    };
  });
}

}  // namespace vyre::cli
