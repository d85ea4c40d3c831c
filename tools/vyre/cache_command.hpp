// Shared pieces of the `vyre cache` subcommands (cmd_cache*.cpp): each
// subcommand is one add_cache_* function; they run with the cache from the
// environment.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "cli.hpp"
#include "vyre/aot.hpp"
#include "vyre/gpu.hpp"

namespace vyre::cli {

void add_cache_stats(CLI::App* cache_cmd, Action& action);
void add_cache_zero_stats(CLI::App* cache_cmd, Action& action);
void add_cache_ls(CLI::App* cache_cmd, Action& action);
void add_cache_show(CLI::App* cache_cmd, Action& action);
void add_cache_verify(CLI::App* cache_cmd, Action& action);
void add_cache_prune(CLI::App* cache_cmd, Action& action);
void add_cache_clear(CLI::App* cache_cmd, Action& action);
void add_cache_export(CLI::App* cache_cmd, Action& action);
void add_cache_import(CLI::App* cache_cmd, Action& action);
void add_cache_explain(CLI::App* cache_cmd, Action& action);
void add_cache_warm(CLI::App* cache_cmd, Action& action);
void add_cache_remote(CLI::App* cache_cmd, Action& action);

// The device a command's programs are keyed for (gpu::KeyTarget): --fingerprint
// FP (a target machine's, from `vyre devices --json`), else the override
// setting, else the local adapter's; an error without an adapter says how to
// name one.
gpu::KeyTarget key_target(const std::string& given_fingerprint);

// The full fingerprint whose driver data `cache import` takes: `given`,
// else the local adapter's; nullopt (with a note on stderr) when there is no
// adapter.
std::optional<std::string> local_device_fingerprint(const std::string& given);

// A full key, or the entry whose key a unique prefix of at least four hex
// digits starts, as in git.
std::string resolve_key(const aot::Cache& cache, const std::string& given);

void print_json(const nlohmann::json& j);
void print_json_text(const std::string& json_text);  // JSON the library made (aot::to_json)

// Adds a subcommand whose body runs with the cache `open` gives.
template <class Open, class Body>
CLI::App* subcommand_on_cache(CLI::App* parent, Action& action, const std::string& name, const std::string& help,
                              Open open, Body body) {
  auto* cmd = parent->add_subcommand(name, help);
  cmd->callback([&action, open, body] {
    action = [open, body] {
      aot::Cache cache = open();
      return body(cache);
    };
  });
  return cmd;
}

// Adds a subcommand whose body runs with the cache from the environment.
template <class Body>
CLI::App* cache_subcommand(CLI::App* parent, Action& action, const std::string& name, const std::string& help,
                           Body body) {
  return subcommand_on_cache(parent, action, name, help, [] { return aot::Cache::from_environment(); }, body);
}

// The environment's cache for a command that only reads (stats, ls, show,
// explain): a cache directory that does not exist is not made, and the
// command sees it empty (its read-only layers and remote tier still read).
aot::Cache inspected_cache();

// Adds a subcommand that only reads the cache: it runs with inspected_cache().
template <class Body>
CLI::App* inspecting_subcommand(CLI::App* parent, Action& action, const std::string& name, const std::string& help,
                                Body body) {
  return subcommand_on_cache(parent, action, name, help, [] { return inspected_cache(); }, body);
}

}  // namespace vyre::cli
