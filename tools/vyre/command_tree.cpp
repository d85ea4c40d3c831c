#include "command_tree.hpp"

#include <algorithm>
#include <cctype>

namespace vyre::cli {
namespace {

// Edits (insertions, deletions, substitutions and swaps of neighbours)
// between a and b: "rnu" is one from "run".
size_t edits(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

bool is_flag_word(const std::string& w) {
  // "-5" and "-0.5" are values, not flags.
  return w.size() > 1 && w[0] == '-' && !std::isdigit(static_cast<unsigned char>(w[1])) && w[1] != '.';
}

const CLI::Option* find_flag(const CLI::App& app, const std::string& word) {
  for (const CLI::Option* o : app.get_options()) {
    if (!o->nonpositional()) continue;
    if (word.rfind("--", 0) == 0) {
      const std::string name = word.substr(2);
      for (const std::string& l : o->get_lnames())
        if (l == name) return o;
    } else {
      for (const std::string& s : o->get_snames())
        if (s == word.substr(1, 1)) return o;
    }
  }
  return nullptr;
}

std::string did_you_mean(const std::optional<std::string>& near) {
  return near ? " Did you mean '" + *near + "'?" : "";
}

}  // namespace

std::vector<const CLI::App*> subcommands_of(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* a) { return !a->get_group().empty(); });
}

std::vector<std::string> names_of(const std::vector<const CLI::App*>& apps) {
  std::vector<std::string> names;
  names.reserve(apps.size());
  for (const CLI::App* a : apps) names.push_back(a->get_name());
  return names;
}

std::vector<const CLI::Option*> flags_of(const CLI::App& app) {
  const CLI::Option* help = app.get_help_ptr();
  return app.get_options(
      [help](const CLI::Option* o) { return o->nonpositional() && o != help && !o->get_group().empty(); });
}

std::string path_of(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* a = app.get_parent(); a != nullptr; a = a->get_parent()) path = a->get_name() + " " + path;
  return path;
}

std::optional<std::string> nearest(const std::string& word, const std::vector<std::string>& choices) {
  std::optional<std::string> best;
  size_t best_edits = std::max<size_t>(1, word.size() / 3) + 1;
  for (const std::string& c : choices) {
    const size_t e = edits(word, c);
    if (e < best_edits) best = c, best_edits = e;
  }
  if (best) return best;
  // A beginning of one choice alone ("ca" for "cache").
  std::vector<std::string> starting;
  for (const std::string& c : choices)
    if (word.size() >= 2 && c.rfind(word, 0) == 0) starting.push_back(c);
  if (starting.size() == 1) return starting.front();
  return std::nullopt;
}

std::optional<std::string> misuse(const CLI::App& root, int argc, const char* const* argv) {
  const CLI::App* app = &root;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;
    if (is_flag_word(word)) {
      const std::string flag = word.substr(0, word.find('='));
      const bool help = flag == "--help" || flag == "-h";
      const bool version = app == &root && flag == "--version";
      if (help || version) continue;
      const CLI::Option* o = find_flag(*app, flag.rfind("--", 0) == 0 ? flag : flag.substr(0, 2));
      if (o == nullptr) {
        std::vector<std::string> names{"--help"};
        for (const CLI::Option* f : flags_of(*app))
          for (const std::string& l : f->get_lnames()) names.push_back("--" + l);
        return path_of(*app) + ": unknown option '" + flag + "'." + did_you_mean(nearest(flag, names)) + " See '" +
               path_of(*app) + " --help'.";
      }
      // A value given as the next word ("--input a=1"), not after '='.
      const bool short_with_value = flag.rfind("--", 0) != 0 && word.size() > 2;
      if (o->get_type_size_min() > 0 && o->get_expected_min() > 0 && word.find('=') == std::string::npos &&
          !short_with_value)
        ++i;
      continue;
    }
    // Hidden commands (vyre manpage) are found, never suggested.
    const std::vector<const CLI::App*> all = app->get_subcommands([](const CLI::App*) { return true; });
    if (all.empty()) continue;  // a positional of this command
    const auto found = std::find_if(all.begin(), all.end(), [&](const CLI::App* s) { return s->check_name(word); });
    if (found != all.end()) {
      app = *found;
      continue;
    }
    const std::vector<const CLI::App*> subs = subcommands_of(*app);
    if (app->get_require_subcommand_min() == 0) continue;
    const std::vector<std::string> names = names_of(subs);
    const std::string where = app == &root ? "vyre" : path_of(*app);
    return "vyre: '" + word + "' is not a " + where + " command." + did_you_mean(nearest(word, names)) + " See '" +
           where + " --help'.";
  }
  return std::nullopt;
}

}  // namespace vyre::cli
