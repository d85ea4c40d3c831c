// Where the cache lives and how large it may grow, from the environment
// (docs/configuration.md).
#include "aot/settings.hpp"

#include <chrono>
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

// The longest remote timeout or wait a setting may ask for: a request
// that a day does not bound is refused, not held for years.
constexpr std::chrono::milliseconds kLongestRemoteWait{86'400'000};

// Milliseconds: digits with `ms` or `s` (a bare number is milliseconds), at
// most kLongestRemoteWait however it is written.
std::optional<std::chrono::milliseconds> parse_millis(std::string_view text) {
  uint64_t scale = 1;
  if (text.ends_with("ms")) {
    text.remove_suffix(2);
  } else if (text.ends_with("s")) {
    text.remove_suffix(1);
    scale = 1000;
  }
  auto n = sys::parse_count(text);
  if (!n || *n > static_cast<uint64_t>(kLongestRemoteWait.count()) / scale) return std::nullopt;
  return std::chrono::milliseconds(static_cast<int64_t>(*n * scale));
}

std::chrono::milliseconds millis_from_env(const char* name, std::chrono::milliseconds fallback) {
  auto value = env(name);
  if (!value) return fallback;
  if (auto parsed = parse_millis(*value)) return *parsed;
  log::warn_once(std::string("aot-setting:") + name,
                 std::string("AOT cache: ignoring ") + name + "=" + *value + ": not a duration like 250ms or 2s of at most 86400s; using " +
                     std::to_string(fallback.count()) + "ms");
  return fallback;
}

std::optional<RemoteOptions> remote_from_env() {
  auto url = env("VYRE_AOT_REMOTE");
  if (!url) return std::nullopt;
  RemoteOptions remote;
  remote.url = *url;
  if (auto mode = env("VYRE_AOT_REMOTE_MODE")) {
    if (*mode == "read-only")
      remote.read_only = true;
    else if (*mode != "read-write")
      log::warn_once("aot-setting:VYRE_AOT_REMOTE_MODE", "AOT cache: ignoring VYRE_AOT_REMOTE_MODE=" + *mode +
                                                             ": use read-write or read-only; using read-write");
  }
  if (auto prefix = env("VYRE_AOT_REMOTE_PREFIX")) remote.prefix = *prefix;
  if (auto ttl = env("VYRE_AOT_REMOTE_TTL")) {
    if (auto parsed = sys::parse_duration(*ttl))
      remote.ttl = *parsed;
    else
      log::warn_once("aot-setting:VYRE_AOT_REMOTE_TTL",
                     "AOT cache: ignoring VYRE_AOT_REMOTE_TTL=" + *ttl + ": " + parsed.failure().message);
  }
  remote.connect_timeout = millis_from_env("VYRE_AOT_REMOTE_CONNECT_TIMEOUT", remote.connect_timeout);
  remote.operation_timeout = millis_from_env("VYRE_AOT_REMOTE_TIMEOUT", remote.operation_timeout);
  remote.lease_wait = millis_from_env("VYRE_AOT_REMOTE_LEASE_WAIT", remote.lease_wait);
  remote.breaker_cooldown = millis_from_env("VYRE_AOT_REMOTE_RETRY_AFTER", remote.breaker_cooldown);
  return remote;
}

}  // namespace

std::optional<std::filesystem::path> personal_cache_directory() {
  if (auto xdg = absolute_env_path("XDG_CACHE_HOME")) return *xdg / "vyre" / "aot";
  if (auto home = absolute_env_path("HOME")) return *home / ".cache" / "vyre" / "aot";
  return std::nullopt;
}

std::optional<std::filesystem::path> Cache::default_directory() {
  // An explicit VYRE_AOT_CACHE_DIR may be relative: the user chose it.
  if (auto dir = env("VYRE_AOT_CACHE_DIR")) return std::filesystem::absolute(*dir);
  if (auto personal = personal_cache_directory()) return personal;
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
  options.remote = remote_from_env();
  if (auto store = env("VYRE_AOT_CACHE_STORE")) {
    if (*store == "sqlite")
      options.store = CacheStore::sqlite;
    else if (*store == "directory" || *store == "files")
      options.store = CacheStore::directory;
    else if (*store != "auto" && !store->empty())
      log::warn_once("aot-store-setting", "VYRE_AOT_CACHE_STORE='" + std::string(*store) +
                                              "' is not auto, directory or sqlite: the store is chosen automatically");
  }
  if (auto shared = env("VYRE_AOT_CACHE_SHARED_FS")) {
    if (*shared == "1" || *shared == "on" || *shared == "true")
      options.shared_file_system = true;
    else if (*shared == "0" || *shared == "off" || *shared == "false")
      options.shared_file_system = false;
    else
      log::warn_once("aot-shared-fs-setting", "VYRE_AOT_CACHE_SHARED_FS='" + std::string(*shared) +
                                                  "' is not 1/on/true or 0/off/false: told by the file system's type");
  }
  if (auto wal = env("VYRE_AOT_CACHE_SQLITE_WAL")) options.sqlite_wal = *wal == "1" || *wal == "on" || *wal == "true";
  if (auto driver = env("VYRE_DRIVER_CACHE")) {
    if (*driver == "0" || *driver == "off" || *driver == "false")
      options.driver_cache = false;
    else if (*driver != "1" && *driver != "on" && *driver != "true")
      log::warn_once("driver-cache-setting", "VYRE_DRIVER_CACHE='" + std::string(*driver) +
                                                 "' is not 0/off/false or 1/on/true: the driver cache stays on");
  }
  if (auto key = env("VYRE_AOT_SIGNING_KEY")) options.signing_key = std::filesystem::path(*key);
  if (auto keys = env("VYRE_AOT_TRUSTED_KEYS")) {
    std::string_view rest = *keys;
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      std::string_view item = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      if (!item.empty()) options.trusted_keys.emplace_back(item);
    }
  }
  return options;
}

}  // namespace vyre::aot
