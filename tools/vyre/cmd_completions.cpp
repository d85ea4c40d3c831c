// vyre completions bash|zsh|fish: shell completion scripts, and the hidden
// vyre manpage: the man page, both made from the command tree itself, so
// that they name every command and flag there is (cmake --install installs
// the files the build makes with them).
#include <algorithm>
#include <iostream>
#include <memory>
#include <sstream>

#include "command_tree.hpp"
#include "vyre/version.hpp"

namespace vyre::cli {
namespace {

struct Node {
  std::string path;                  // "" for vyre itself, "cache stats" below it
  std::vector<std::string> commands;  // its subcommands' names
  std::vector<std::pair<std::string, std::string>> flags;  // "--input", its description
  const CLI::App* app = nullptr;
};

void collect(const CLI::App& app, const std::string& path, std::vector<Node>& out) {
  Node n{path, {}, {}, &app};
  for (const CLI::App* s : subcommands_of(app)) n.commands.push_back(s->get_name());
  for (const CLI::Option* o : flags_of(app)) {
    for (const std::string& l : o->get_lnames()) n.flags.emplace_back("--" + l, o->get_description());
    for (const std::string& s : o->get_snames()) n.flags.emplace_back("-" + s, o->get_description());
  }
  n.flags.emplace_back("--help", "Print this help message and exit");
  out.push_back(n);
  for (const CLI::App* s : subcommands_of(app)) collect(*s, path.empty() ? s->get_name() : path + " " + s->get_name(), out);
}

std::string words_of(const Node& n) {
  std::string w;
  for (const std::string& c : n.commands) w += (w.empty() ? "" : " ") + c;
  for (const auto& f : n.flags) w += (w.empty() ? "" : " ") + f.first;
  return w;
}

// A description as one line a shell's quotes hold.
std::string quoted(const std::string& text, char quote) {
  std::string out;
  for (const char original : text) {
    const char c = original == '\n' ? ' ' : original;
    if (c == quote || (quote == '"' && (c == '\\' || c == '$' || c == '`'))) out += '\\';
    out += c;
  }
  return out;
}

// Each shell walks the words typed so far, following those that name a
// subcommand of the command reached, and offers that command's words; where
// none fits, the file names (programs, inputs).
std::string bash(const std::vector<Node>& nodes) {
  std::ostringstream o;
  o << "# bash completion for vyre " << kVersion << " (vyre completions bash)\n"
    << "_vyre_words() {\n  case \"$1\" in\n";
  for (const Node& n : nodes) o << "    \"" << n.path << "\") echo \"" << words_of(n) << "\" ;;\n";
  o << "  esac\n}\n"
    << "_vyre_commands() {\n  case \"$1\" in\n";
  for (const Node& n : nodes)
    if (!n.commands.empty()) {
      std::string c;
      for (const std::string& s : n.commands) c += (c.empty() ? "" : " ") + s;
      o << "    \"" << n.path << "\") echo \"" << c << "\" ;;\n";
    }
  o << "  esac\n}\n"
    << "_vyre() {\n"
    << "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" at=\"\" w i\n"
    << "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
    << "    w=\"${COMP_WORDS[i]}\"\n"
    << "    case \" $(_vyre_commands \"$at\") \" in *\" $w \"*) at=\"${at:+$at }$w\" ;; esac\n"
    << "  done\n"
    << "  COMPREPLY=($(compgen -W \"$(_vyre_words \"$at\")\" -- \"$cur\"))\n"
    << "}\n"
    << "complete -o default -F _vyre vyre\n";
  return o.str();
}

std::string zsh(const std::vector<Node>& nodes) {
  std::ostringstream o;
  o << "#compdef vyre\n# zsh completion for vyre " << kVersion << " (vyre completions zsh)\n"
    << "_vyre() {\n"
    << "  local at=\"\" w\n"
    << "  local -a commands offered\n"
    << "  for w in \"${(@)words[2,CURRENT-1]}\"; do\n"
    << "    case \"$at\" in\n";
  for (const Node& n : nodes) {
    if (n.commands.empty()) continue;
    o << "      \"" << n.path << "\") commands=(";
    for (const std::string& c : n.commands) o << " " << c;
    o << " ) ;;\n";
  }
  o << "      *) commands=() ;;\n    esac\n"
    << "    if (( ${commands[(Ie)$w]} )); then at=\"${at:+$at }$w\"; fi\n"
    << "  done\n"
    << "  case \"$at\" in\n";
  for (const Node& n : nodes) {
    o << "    \"" << n.path << "\") offered=(";
    for (const std::string& c : n.commands) o << " '" << c << "'";
    for (const auto& f : n.flags) o << " '" << f.first << "'";
    o << " ) ;;\n";
  }
  o << "  esac\n"
    << "  compadd -a offered\n"
    << "  _files\n"
    << "}\n"
    << "compdef _vyre vyre\n";
  return o.str();
}

std::string fish(const std::vector<Node>& nodes) {
  std::ostringstream o;
  o << "# fish completion for vyre " << kVersion << " (vyre completions fish)\n"
    << "complete -c vyre -f\n";
  for (const Node& n : nodes) {
    // The command's words as fish sees them: the path typed so far, and none
    // of this command's own subcommands yet.
    std::string condition = n.path.empty() ? "__fish_use_subcommand" : "";
    if (!n.path.empty()) {
      std::istringstream parts(n.path);
      std::string part;
      while (parts >> part) condition += (condition.empty() ? "" : "; and ") + std::string("__fish_seen_subcommand_from ") + part;
      if (!n.commands.empty()) {
        condition += "; and not __fish_seen_subcommand_from";
        for (const std::string& c : n.commands) condition += " " + c;
      }
    }
    for (const std::string& c : n.commands) {
      const CLI::App* sub = n.app->get_subcommand(c);
      o << "complete -c vyre -n '" << condition << "' -a " << c << " -d '" << quoted(sub->get_description(), '\'') << "'\n";
    }
    for (const auto& f : n.flags) {
      const bool long_flag = f.first.rfind("--", 0) == 0;
      o << "complete -c vyre -n '" << condition << "' " << (long_flag ? "-l " + f.first.substr(2) : "-s " + f.first.substr(1))
        << " -d '" << quoted(f.second, '\'') << "'\n";
    }
    if (n.commands.empty() && !n.path.empty()) o << "complete -c vyre -n '" << condition << "' -F\n";
  }
  return o.str();
}

// roff: backslashes and leading dots and quotes made literal.
std::string roff(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

std::string man_page(const std::vector<Node>& nodes) {
  std::ostringstream o;
  o << ".TH VYRE 1 \"\" \"vyre " << kVersion << "\" \"User Commands\"\n"
    << ".SH NAME\nvyre \\- portable GPU compute programs, lowered to WGSL, cached ahead of time, run through WebGPU\n"
    << ".SH SYNOPSIS\n.B vyre\n.I COMMAND\n[\\fIOPTIONS\\fR]\n"
    << ".SH DESCRIPTION\n"
    << "vyre checks compute programs written in a small IR (JSON), gives each a canonical identity, lowers it to "
       "WGSL, keeps the WGSL and the GPU driver's pipelines in an ahead-of-time cache, and runs it through "
       "wgpu-native on any vendor's GPU (lavapipe on a CPU). \\fBvyre help\\fR \\fICOMMAND\\fR prints a command's "
       "options as below.\n"
    << ".SH COMMANDS\n";
  for (const Node& n : nodes) {
    if (n.path.empty()) continue;
    o << ".SS \"vyre " << roff(n.path) << "\"\n" << roff(n.app->get_description()) << "\n";
    for (const auto& f : n.flags) {
      if (f.first == "--help") continue;
      o << ".TP\n.B " << roff(f.first) << "\n" << roff(f.second) << "\n";
    }
  }
  o << ".SH EXIT STATUS\n"
    << ".TP\n.B 0\nsuccess\n.TP\n.B 1\nthe answer is no: an invalid program, bad cache entries\n"
    << ".TP\n.B 2\na bad command line\n.TP\n.B 3\ninputs that do not fit the program, unreadable files\n"
    << ".TP\n.B 4\nno usable GPU adapter\n.TP\n.B 5\nthe GPU reported an error\n"
    << ".TP\n.B 6\na write the system refused (stdout, an output file, the cache directory)\n"
    << ".TP\n.B 70\na bug: please report it\n"
    << ".SH ENVIRONMENT\n"
    << ".TP\n.B VYRE_LOG\nthe log level (default: warnings)\n"
    << ".TP\n.B VYRE_AOT_CACHE_DIR\nthe AOT cache's directory (default: $XDG_CACHE_HOME/vyre/aot)\n"
    << ".TP\n.B WGPU_BACKEND\nthe graphics API (vulkan, gl, metal, dx12)\n"
    << ".TP\n.B VYRE_WGPU_ADAPTER\nthe adapter: an index from vyre devices or part of its name\n"
    << ".TP\n.B VYRE_BACKEND_FINGERPRINT_OVERRIDE\nthe fingerprint in the cache's keys\n"
    << ".TP\n.B VYRE_TUNE\n1: the standard kernels run the shape measured fastest on this device\n"
    << "Every setting is in docs/configuration.md.\n"
    << ".SH SEE ALSO\ndocs/cli.md, docs/configuration.md and docs/lib.md of the vyre sources.\n";
  return o.str();
}

}  // namespace

void add_completions(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("completions", "Print a shell's completion script: bash, zsh or fish");
  auto shell = std::make_shared<std::string>();
  cmd->add_option("shell", *shell, "bash, zsh or fish")->required();
  cmd->footer(
      "bash: vyre completions bash > ~/.local/share/bash-completion/completions/vyre\n"
      "zsh:  vyre completions zsh > ~/.zfunc/_vyre (a folder on $fpath)\n"
      "fish: vyre completions fish > ~/.config/fish/completions/vyre.fish\n"
      "cmake --install puts all three where the shells look.");
  cmd->callback([&app, &action, shell] {
    action = [&app, shell] {
      std::vector<Node> nodes;
      collect(app, "", nodes);
      if (*shell == "bash") std::cout << bash(nodes);
      else if (*shell == "zsh") std::cout << zsh(nodes);
      else if (*shell == "fish") std::cout << fish(nodes);
      else {
        const std::optional<std::string> near = nearest(*shell, {"bash", "zsh", "fish"});
        std::cerr << "vyre completions: '" << *shell << "' is not a shell vyre completes (bash, zsh, fish)."
                  << (near ? " Did you mean '" + *near + "'?" : std::string()) << "\n";
        return static_cast<int>(kUsage);
      }
      return static_cast<int>(kOk);
    };
  });
  // The man page, made at build time (cmake --install installs it as vyre.1).
  auto* man = app.add_subcommand("manpage", "Print the man page (roff)");
  man->group("");
  man->callback([&app, &action] {
    action = [&app] {
      std::vector<Node> nodes;
      collect(app, "", nodes);
      std::cout << man_page(nodes);
      return static_cast<int>(kOk);
    };
  });
}

}  // namespace vyre::cli
