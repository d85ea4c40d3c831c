// `vyre cache`: the command and what its subcommands share.
#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "cache_command.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"

namespace vyre::cli {

KeyTarget::KeyTarget(const std::string& given) : fingerprint_(given) {
  if (!fingerprint_.empty()) return;
  if (const char* v = std::getenv("VYRE_BACKEND_FINGERPRINT_OVERRIDE"); v != nullptr && *v != '\0') {
    override_ = v;  // as a Backend takes it: whole
    return;
  }
  try {
    backend_ = std::make_shared<gpu::Backend>();
  } catch (const Error& e) {
    throw Error(e.kind(), std::string(e.what()) +
                              "\n(the local adapter gives the fingerprint; pass --fingerprint FP to name one, for "
                              "example a target machine's from `vyre devices --json`)");
  }
}

std::optional<std::string> KeyTarget::device_fingerprint() const {
  if (backend_) return backend_->adapter().fingerprint;
  if (override_) return std::nullopt;
  if (gpu::is_adapter_fingerprint(fingerprint_)) return fingerprint_;
  return std::nullopt;
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

gpu::WgslTarget KeyTarget::of(const CheckedProgram& program, const ShaderOptions& requested) const {
  // The shader a first dispatch uses: unless VYRE_WIDEN=0, the widened one
  // for an element-wise program, as gpu::Backend::compile picks it
  // (docs/lowering.md).
  const bool widen = backend_ ? backend_->widens()
                              : gpu::BackendOptions::from_environment().widen.value_or(gpu::kWidenByDefault);
  const ShaderOptions options = gpu::compiled_options(program, requested, widen);
  if (backend_) return backend_->wgsl_target(program, options);
  if (override_) return {options, aot::key_parts(program, *override_, options)};
  return gpu::wgsl_target(program, fingerprint_, options);
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

void print_json(const nlohmann::json& j) { std::cout << j.dump() << "\n"; }

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
