// The command line as a tree, for what is made from it rather than parsed
// by it: the check of a command line's words before parsing (an unknown
// command or flag named, with the nearest one), `vyre help`, the shell
// completions and the man page.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"

namespace vyre::cli {

// An app's subcommands, in the order they were added (hidden ones left out).
std::vector<const CLI::App*> subcommands_of(const CLI::App& app);
// Their names.
std::vector<std::string> names_of(const std::vector<const CLI::App*>& apps);
// Its flags and options (not positionals, not --help).
std::vector<const CLI::Option*> flags_of(const CLI::App& app);
// "vyre cache stats": the app's path from the root.
std::string path_of(const CLI::App& app);

// The word of `choices` nearest `word` (a few edits away, or one it begins),
// or nullopt when none is near enough to be what was meant.
std::optional<std::string> nearest(const std::string& word, const std::vector<std::string>& choices);

// Reads the command line's words before CLI11 does: a word where a command
// is wanted that names none, or a flag the command does not have, gives
// the message that names it and the nearest one ("vyre: 'rnu' is not a vyre
// command. Did you mean 'run'?"); nullopt when every word is known.
std::optional<std::string> misuse(const CLI::App& root, int argc, const char* const* argv);

}  // namespace vyre::cli
