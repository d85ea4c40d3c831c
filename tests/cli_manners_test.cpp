// The command line's manners (docs/cli.md): an unknown command or flag named
// with the nearest one, `vyre help` and `vyre version`, shell completions
// that complete (bash run here; zsh and fish checked by their own parsers)
// and a man page that renders, all made from the command tree.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "support/test_support.hpp"

using vyre::test::contains;
using vyre::test::run_process;
using vyre::test::run_vyre;
using vyre::test::TempDir;
using vyre::test::write_file;

namespace {

TEST(CliManners, AnUnknownCommandOrFlagIsNamedWithTheNearest) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"rnu", "x.json"}, "vyre: 'rnu' is not a vyre command. Did you mean 'run'?"},
      {{"vaildate"}, "vyre: 'vaildate' is not a vyre command. Did you mean 'validate'?"},
      {{"cache", "stat"}, "vyre: 'stat' is not a vyre cache command. Did you mean 'stats'?"},
      {{"lib", "sortt"}, "vyre: 'sortt' is not a vyre lib command. Did you mean 'sort'?"},
      {{"run", "--inptu", "a=1", "examples/xor.json"}, "vyre run: unknown option '--inptu'. Did you mean '--input'?"},
      {{"cache", "ls", "--jsno"}, "vyre cache ls: unknown option '--jsno'. Did you mean '--json'?"},
      {{"frobnicate"}, "vyre: 'frobnicate' is not a vyre command. See 'vyre --help'."},
      {{"help", "rnu"}, "vyre: 'rnu' is not a vyre command. Did you mean 'run'?"},
      {{"completions", "fsh"}, "is not a shell vyre completes (bash, zsh, fish)"},
  };
  for (const auto& [args, message] : cases) {
    const auto r = run_vyre(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_TRUE(contains(r.err, message)) << r.err;
    EXPECT_EQ(r.out, "");
  }
  // The valid file after a wrong flag is not blamed.
  EXPECT_FALSE(contains(run_vyre({"run", "--inptu", "a=1", "examples/xor.json"}).err, "xor.json"));
  // A flag's value that looks like a flag, or a negative number, is a value.
  const auto r = run_vyre({"lower", "--fixed-length", "--x", "/nonexistent.json"});
  EXPECT_FALSE(contains(r.err, "unknown option")) << r.err;
}

TEST(CliManners, HelpAndVersionAsCommands) {
  EXPECT_EQ(run_vyre({"help"}).out, run_vyre({"--help"}).out);
  const auto stats = run_vyre({"help", "cache", "stats"});
  EXPECT_EQ(stats.exit_code, 0);
  EXPECT_TRUE(contains(stats.out, "Usage: vyre cache stats")) << stats.out;
  EXPECT_TRUE(contains(stats.out, "--json")) << stats.out;
  const auto version = run_vyre({"version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out, run_vyre({"--version"}).out);
  EXPECT_TRUE(std::regex_match(version.out, std::regex("vyre [0-9]+\\.[0-9]+\\.[0-9]+\n"))) << version.out;
  const nlohmann::json j = nlohmann::json::parse(run_vyre({"version", "--json"}).out);
  EXPECT_EQ("vyre " + j["version"].get<std::string>() + "\n", version.out);
  EXPECT_EQ(j["format_version"], 4);
}

// Every command the completions know, as the words that reach it.
std::vector<std::vector<std::string>> every_command() {
  const std::string script = run_vyre({"completions", "bash"}).out;
  std::vector<std::vector<std::string>> out;
  const std::regex label("\n    \"([a-z -]*)\"\\) echo \"");
  std::set<std::string> seen;
  for (auto it = std::sregex_iterator(script.begin(), script.end(), label); it != std::sregex_iterator(); ++it) {
    const std::string path = (*it)[1];
    if (!seen.insert(path).second) continue;  // the second table: the commands under a command
    std::istringstream words(path);
    std::vector<std::string> command;
    for (std::string w; words >> w;) command.push_back(w);
    out.push_back(command);
  }
  return out;
}

TEST(CliManners, EveryCommandHasHelpAndTheCompletionsOfferItsFlags) {
  const auto commands = every_command();
  ASSERT_GE(commands.size(), 30u);  // vyre, its commands, cache's, lib's
  TempDir tmp;
  write_file(tmp / "vyre.bash", run_vyre({"completions", "bash"}).out);
  for (const auto& command : commands) {
    std::vector<std::string> args = command;
    args.push_back("--help");
    const auto help = run_vyre(args);
    EXPECT_EQ(help.exit_code, 0) << args[0];
    // bash offers this command's flags after its words.
    std::string words = "vyre";
    for (const std::string& w : command) words += " " + w;
    const auto r = run_process({"bash", "-c",
                                "source " + (tmp / "vyre.bash").string() + "; COMP_WORDS=(" + words +
                                    " --); COMP_CWORD=" + std::to_string(command.size() + 1) +
                                    "; _vyre; echo \"${COMPREPLY[*]}\""});
    EXPECT_TRUE(contains(r.out, "--help")) << words << ": " << r.out << r.err;
    std::smatch flag;
    const std::string text = help.out;
    if (std::regex_search(text, flag, std::regex("\n  (--[a-z][a-z-]*)"))) {
      EXPECT_TRUE(contains(r.out, flag[1].str())) << words << " offers no " << flag[1] << ": " << r.out;
    }
  }
  // Commands complete from their beginnings, at every level.
  const auto complete = [&](const std::string& words, int at) {
    return run_process({"bash", "-c",
                        "source " + (tmp / "vyre.bash").string() + "; COMP_WORDS=(" + words + "); COMP_CWORD=" +
                            std::to_string(at) + "; _vyre; echo \"${COMPREPLY[*]}\""})
        .out;
  };
  EXPECT_EQ(complete("vyre ca", 1), "cache\n");
  EXPECT_EQ(complete("vyre cache st", 2), "stats\n");
  EXPECT_EQ(complete("vyre lib sort --d", 3), "--dtype --descending\n");
}

bool have(const std::string& program) {
  return run_process({"sh", "-c", "command -v " + program}).exit_code == 0;
}

TEST(CliManners, ZshAndFishReadTheirScripts) {
  TempDir tmp;
  for (const std::string shell : {"zsh", "fish"}) {
    if (!have(shell)) {
      if (std::getenv("CI")) ADD_FAILURE() << shell << " is not installed: scripts/setup installs it for CI";
      continue;
    }
    const std::string file = (tmp / ("vyre." + shell)).string();
    write_file(file, run_vyre({"completions", shell}).out);
    const auto r = shell == "zsh" ? run_process({"zsh", "-n", file}) : run_process({"fish", "--no-execute", file});
    EXPECT_EQ(r.exit_code, 0) << shell << ": " << r.err;
    EXPECT_EQ(r.err, "") << shell;
  }
  const std::string fish = run_vyre({"completions", "fish"}).out;
  EXPECT_TRUE(contains(fish, "__fish_seen_subcommand_from cache; and not __fish_seen_subcommand_from stats"));
  EXPECT_TRUE(contains(fish, "-l dtype"));
  EXPECT_TRUE(contains(run_vyre({"completions", "zsh"}).out, "#compdef vyre"));
}

TEST(CliManners, TheManPageRendersAndNamesEveryCommand) {
  TempDir tmp;
  const auto page = run_vyre({"manpage"});
  ASSERT_EQ(page.exit_code, 0);
  write_file(tmp / "vyre.1", page.out);
  EXPECT_TRUE(page.out.rfind(".TH VYRE 1", 0) == 0);
  for (const auto& command : every_command()) {
    if (command.empty()) continue;
    std::string name = "vyre";
    for (const std::string& w : command) name += " " + w;
    name = std::regex_replace(name, std::regex("-"), "\\-");  // roff's minus, not a hyphen
    EXPECT_TRUE(contains(page.out, ".SS \"" + name + "\"")) << name;
  }
  if (!have("groff")) {
    if (std::getenv("CI")) ADD_FAILURE() << "groff is not installed: scripts/setup installs it for CI";
    return;
  }
  // groff's warnings (-ww) for anything it cannot set.
  const auto r = run_process({"groff", "-man", "-Tutf8", "-ww", "-z", (tmp / "vyre.1").string()});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "") << r.err;
}

}  // namespace
