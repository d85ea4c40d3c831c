// `vyre cache`: the command and what its subcommands share.
#include <algorithm>
#include <iostream>

#include "cache_command.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"

namespace vyre::cli {

gpu::KeyTarget key_target(const std::string& given) {
  try {
    return gpu::KeyTarget::resolve(given);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::no_adapter && e.kind() != ErrorKind::gpu) throw;
    throw Error(e.kind(), std::string(e.what()) +
                              "\n(the local adapter gives the fingerprint; pass --fingerprint FP to name one, for "
                              "example a target machine's from `vyre devices --json`)");
  }
}

std::optional<std::string> local_device_fingerprint(const std::string& given) {
  if (!given.empty()) return given;
  try {
    return gpu::Backend().adapter().fingerprint;
  } catch (const Error& e) {
    std::cerr << "vyre: no GPU adapter, so no driver data is imported (" << e.what() << ")\n";
    return std::nullopt;
  }
}

std::string resolve_key(const aot::Cache& cache, const std::string& given) {
  if (aot::is_valid_key(given)) return given;
  if (given.size() < 4 || given.size() > 64 ||
      !std::all_of(given.begin(), given.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }))
    throw Error(ErrorKind::invalid_input,
                "'" + given + "' is not a cache key (64 lowercase hex digits, or a unique prefix of at least 4)");
  std::string found;
  for (const auto& e : cache.list()) {
    if (!e.key.starts_with(given) || e.key == found) continue;
    if (!found.empty()) throw Error(ErrorKind::invalid_input, "key prefix '" + given + "' is ambiguous");
    found = e.key;
  }
  if (found.empty()) throw Error(ErrorKind::invalid_input, "no cache entry has a key starting with '" + given + "'");
  return found;
}

aot::Cache inspected_cache() {
  aot::CacheOptions options = aot::CacheOptions::from_environment();
  std::error_code ec;
  // symlink_status: a dangling link is not absent (opening it says why).
  if (options.directory && !std::filesystem::exists(std::filesystem::symlink_status(*options.directory, ec)))
    options.directory.reset();
  return aot::Cache(std::move(options));
}

void print_json(const nlohmann::json& j) { std::cout << j.dump() << "\n"; }

void print_json_text(const std::string& text) { std::cout << text << "\n"; }

void add_cache(CLI::App& app, Action& action) {
  auto* cache_cmd = app.add_subcommand("cache", "Inspect and maintain the AOT specialization cache (docs/cache.md)");
  cache_cmd->require_subcommand(1);
  cache_cmd->footer(
      "The cache lives in $VYRE_AOT_CACHE_DIR, else $XDG_CACHE_HOME/vyre/aot, else ~/.cache/vyre/aot; "
      "settings: docs/configuration.md.");
  add_cache_stats(cache_cmd, action);
  add_cache_zero_stats(cache_cmd, action);
  add_cache_ls(cache_cmd, action);
  add_cache_show(cache_cmd, action);
  add_cache_verify(cache_cmd, action);
  add_cache_prune(cache_cmd, action);
  add_cache_clear(cache_cmd, action);
  add_cache_export(cache_cmd, action);
  add_cache_import(cache_cmd, action);
  add_cache_explain(cache_cmd, action);
  add_cache_warm(cache_cmd, action);
  add_cache_remote(cache_cmd, action);
}

}  // namespace vyre::cli
