// Where the cache lives and how large it may grow, from the environment
// (docs/configuration.md).
#include <string>

#include "sys/environment.hpp"
#include "sys/units.hpp"
#include "util/log.hpp"
#include "vyre/aot.hpp"

namespace vyre::aot {
namespace {

std::optional<std::string> env(const char* name) { return sys::environment_value(name); }

// XDG: "a relative path ... should be considered invalid and ignored".
std::optional<std::filesystem::path> absolute_env_path(const char* name) {
  auto value = env(name);
  if (!value) return std::nullopt;
  std::filesystem::path path(*value);
  if (!path.is_absolute()) {
    log::warn_once(std::string("aot-relative:") + name,
                   std::string("AOT cache: ignoring ") + name + "=" + *value + ": not an absolute path");
    return std::nullopt;
  }
  return path;
}

template <class Parse>
uint64_t bound_from_env(const char* name, uint64_t fallback, Parse parse) {
  auto value = env(name);
  if (!value) return fallback;
  if (auto parsed = parse(*value)) return *parsed;
  log::warn_once(std::string("aot-setting:") + name, std::string("AOT cache: ignoring ") + name + "=" + *value +
                                                         ": not a valid number; using " + std::to_string(fallback));
  return fallback;
}

}  // namespace

std::optional<std::filesystem::path> Cache::default_directory() {
  // An explicit VYRE_AOT_CACHE_DIR may be relative: the user chose it.
  if (auto dir = env("VYRE_AOT_CACHE_DIR")) return std::filesystem::absolute(*dir);
  if (auto xdg = absolute_env_path("XDG_CACHE_HOME")) return *xdg / "vyre" / "aot";
  if (auto home = absolute_env_path("HOME")) return *home / ".cache" / "vyre" / "aot";
  log::warn_once("aot-no-home",
                 "AOT cache disabled: neither VYRE_AOT_CACHE_DIR, XDG_CACHE_HOME nor HOME is set; programs are "
                 "lowered on every run");
  return std::nullopt;
}

CacheOptions CacheOptions::from_environment() {
  CacheOptions options;
  options.directory = Cache::default_directory();
  if (auto layers = env("VYRE_AOT_CACHE_READONLY_DIRS")) {
    std::string_view rest = *layers;
    while (!rest.empty()) {
      size_t colon = rest.find(':');
      std::string_view item = rest.substr(0, colon);
      rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
      if (item.empty()) continue;
      std::filesystem::path path(item);
      if (!path.is_absolute()) {
        log::warn_once("aot-readonly-relative:" + std::string(item),
                       "AOT cache: ignoring read-only layer " + std::string(item) + ": not an absolute path");
        continue;
      }
      options.readonly_directories.push_back(path);
    }
  }
  options.max_bytes = bound_from_env("VYRE_AOT_CACHE_MAX_BYTES", kDefaultMaxBytes, sys::parse_size);
  options.max_entries = bound_from_env("VYRE_AOT_CACHE_MAX_ENTRIES", kDefaultMaxEntries, sys::parse_count);
  return options;
}

}  // namespace vyre::aot
