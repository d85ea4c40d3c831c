#include "gpu/driver_cache.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "aot/entry/hashing.hpp"
#include "aot/local/directory.hpp"
#include "aot/local/driver_placement.hpp"
#include "aot/local/store_choice.hpp"
#include "aot/settings.hpp"
#include "sys/environment.hpp"
#include "sys/environment_publish.hpp"
#include "util/log.hpp"

namespace vyre::gpu {
namespace {
namespace fs = std::filesystem;

// What the first placement did, for the Backends that follow.
struct PlacementState {
  std::mutex mutex;
  std::optional<DriverCachePlacement> placement;
  // The cache directory as checked, open for the process's life: every path
  // of the driver's data goes through its descriptor (pinned_root), so no
  // link or rename after the check can send the driver elsewhere.
  std::unique_ptr<aot::CacheDirectory> checked;
  fs::path pinned_root;
  std::string selection;
  aot::driver::Placement folder;  // where placement's data folder came from
  bool noted = false;
};

PlacementState& state() {
  static auto* s = new PlacementState();  // never destroyed: Backends may start during exit
  return *s;
}

// A driver's variables: when the user has set any of them, vyre leaves that
// driver's cache alone.
constexpr std::array<const char*, 6> kMesaVariables{"MESA_SHADER_CACHE_DIR",      "MESA_SHADER_CACHE_DISABLE",
                                                    "MESA_SHADER_CACHE_MAX_SIZE", "MESA_GLSL_CACHE_DIR",
                                                    "MESA_GLSL_CACHE_DISABLE",    "MESA_DISK_CACHE_SINGLE_FILE"};
constexpr std::array<const char*, 4> kNvidiaVariables{"__GL_SHADER_DISK_CACHE", "__GL_SHADER_DISK_CACHE_PATH",
                                                      "__GL_SHADER_DISK_CACHE_SIZE",
                                                      "__GL_SHADER_DISK_CACHE_SKIP_CLEANUP"};

// Set beside the drivers' variables: the pid of the process that set them.
// A child process inherits them; a vyre process that finds another pid
// there knows they are not its user's settings, and places its own.
constexpr const char* kSetterVariable = "VYRE_DRIVER_CACHE_SET_BY";

bool inherited_from_vyre() {
  const char* setter = std::getenv(kSetterVariable);
  return setter != nullptr && std::string(setter) != std::to_string(::getpid());
}

bool any_set(std::span<const char* const> names) {
  if (inherited_from_vyre()) return false;
  for (const char* name : names)
    if (std::getenv(name) != nullptr) return true;
  return false;
}

using Changes = std::vector<sys::EnvironmentChange>;

void set(Changes& changes, const char* name, std::string value) { changes.push_back({name, std::move(value)}); }

void clear(Changes& changes, std::span<const char* const> names) {
  for (const char* name : names) changes.push_back({name, std::nullopt});
}

// One publication, with the setter's pid that any_set() reads: all of it
// visible at once.
void publish(Changes changes) {
  changes.push_back({kSetterVariable, std::to_string(::getpid())});
  sys::publish_environment(changes);
}

std::string first_line_of(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Which folder a start will use is remembered per machine and adapter
// selection: the same settings on the same machine find the same adapter.
std::string selection_name() {
  std::string machine = first_line_of("/etc/machine-id");
  if (machine.empty()) {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    machine = host;
  }
  return aot::KeyEncoder()
      .text("vyre-driver-selection")
      .text(machine)
      .text(sys::environment_value("WGPU_BACKEND").value_or(""))
      .text(sys::environment_value("VYRE_WGPU_ADAPTER").value_or(""))
      .sha256_hex()
      .substr(0, 32);
}

// `single_file`: with vyre's SQLite store, Mesa keeps its data in one file
// too (MESA_DISK_CACHE_SINGLE_FILE). NVIDIA's driver has no such switch; its
// disk cache is a few files of its own format per folder, not one per shader.
void point_driver_at(const fs::path& data, uint64_t max_bytes, bool single_file) {
  // Each driver gets at most half the bound; vyre's cleanup bounds the whole.
  const uint64_t driver_bytes = max_bytes == 0 ? 0 : max_bytes / 2;
  const bool inherited = inherited_from_vyre();
  Changes changes;
  if (!any_set(kMesaVariables)) {
    if (inherited) clear(changes, kMesaVariables);
    set(changes, "MESA_SHADER_CACHE_DIR", data.string());
    if (single_file) set(changes, "MESA_DISK_CACHE_SINGLE_FILE", "1");
    if (driver_bytes != 0)
      set(changes, "MESA_SHADER_CACHE_MAX_SIZE", std::to_string(std::max<uint64_t>(driver_bytes >> 10, 1)) + "K");
  }
  if (!any_set(kNvidiaVariables)) {
    if (inherited) clear(changes, kNvidiaVariables);
    set(changes, "__GL_SHADER_DISK_CACHE", "1");
    set(changes, "__GL_SHADER_DISK_CACHE_PATH", data.string());
    // vyre's LRU bounds the folder; the driver's own cleanup would race it.
    set(changes, "__GL_SHADER_DISK_CACHE_SKIP_CLEANUP", "1");
    if (driver_bytes != 0) set(changes, "__GL_SHADER_DISK_CACHE_SIZE", std::to_string(driver_bytes));
  }
  publish(std::move(changes));
}

// When vyre's own cache is refused, the drivers' caches are turned off too:
// their default folders are under the same XDG_CACHE_HOME or HOME that
// failed the check.
void turn_drivers_off() {
  const bool inherited = inherited_from_vyre();
  Changes changes;
  if (!any_set(kMesaVariables)) {
    if (inherited) clear(changes, kMesaVariables);
    set(changes, "MESA_SHADER_CACHE_DISABLE", "true");
  }
  if (!any_set(kNvidiaVariables)) {
    if (inherited) clear(changes, kNvidiaVariables);
    set(changes, "__GL_SHADER_DISK_CACHE", "0");
  }
  publish(std::move(changes));
}

DriverCachePlacement place(PlacementState& s, const aot::CacheOptions& options) {
  DriverCachePlacement p;
  if (!options.driver_cache) {
    p.reason = "turned off (VYRE_DRIVER_CACHE=0 or CacheOptions::driver_cache)";
    return p;
  }
  if (!options.directory) {
    p.reason = "no writable AOT cache directory";
    return p;
  }
  if (any_set(kMesaVariables) && any_set(kNvidiaVariables)) {
    p.reason = "the drivers' own settings are in the environment (MESA_SHADER_CACHE_*, __GL_SHADER_DISK_CACHE*)";
    return p;
  }
  fs::path dir = *options.directory;
  // The checks of vyre's own cache directory, on the directory opened once.
  // The driver runs what it finds there, checked for damage but not for
  // authorship: never in a directory others can write (docs/cache.md). A
  // team's shared directory sends it to the user's own cache folder.
  auto checked = aot::CacheDirectory::open_writable(dir);
  if (!checked && !options.trusted_keys.empty()) {
    if (auto shared = aot::CacheDirectory::open_writable(dir, /*signatures_trusted=*/true); shared && (*shared)->signed_only())
      checked = std::move(shared);
  }
  if (checked && (*checked)->signed_only())
    if (auto personal = aot::personal_cache_directory(); personal && *personal != dir)
      if (auto own = aot::CacheDirectory::open_writable(*personal); own && !(*own)->signed_only()) {
        dir = *personal;
        checked = std::move(own);
      }
  if (!checked || (*checked)->signed_only()) {
    p.reason = checked ? dir.string() + " is not this user's alone (group- or world-writable)"
                       : "vyre's cache is refused there: " + checked.failure().message;
    p.reason += "; the drivers' own caches are turned off";
    turn_drivers_off();
    return p;
  }
  s.checked = std::move(*checked);
  // /proc/<pid>/fd/<n>: the checked directory itself, whatever happens to
  // its path, for this process and a child that inherits the variables.
  s.pinned_root = fs::path("/proc") / std::to_string(::getpid()) / "fd" / std::to_string(s.checked->fd());
  s.selection = selection_name();
  auto folder = aot::driver::place(s.pinned_root, s.selection);
  if (!folder) {
    p.reason = "cannot make a folder for it: " + folder.failure().message;
    return p;
  }
  s.folder = *folder;
  p.driver_path = folder->data_folder;
  p.data_folder = dir / folder->data_folder.lexically_relative(s.pinned_root);
  p.fingerprint = folder->fingerprint;
  p.files_before = folder->files_before;
  p.bytes_before = folder->bytes_before;
  p.single_file = aot::choose_store(dir, options.store, options.shared_file_system).store == aot::CacheStore::sqlite;
  point_driver_at(p.driver_path, options.max_bytes, p.single_file);
  p.active = true;
  return p;
}

}  // namespace

DriverCachePlacement place_driver_cache(const aot::CacheOptions& options) {
  PlacementState& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.placement) {
    s.placement = place(s, options);
    if (s.placement->active)
      log::debug("driver pipeline cache: {} ({} files already there{})", s.placement->data_folder.string(),
                 s.placement->files_before, s.folder.pending ? ", a first start: filed under its fingerprint later" : "");
    else
      log::debug("driver pipeline cache: not placed: {}", s.placement->reason);
  }
  return *s.placement;
}

std::optional<DriverCachePlacement> driver_cache_placement() {
  PlacementState& s = state();
  std::lock_guard lock(s.mutex);
  return s.placement;
}


void note_driver_fingerprint(const std::string& fingerprint) {
  PlacementState& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.placement || !s.placement->active || s.noted) return;
  s.noted = true;  // the first Backend's adapter owns this process's driver data
  if (!s.folder.pending && fingerprint != s.folder.fingerprint) {
    // The driver was updated, or the selection finds another adapter now:
    // this process's data lands in the old folder; the next start uses the new one.
    log::debug("driver pipeline cache: the adapter's fingerprint changed since the last start; the next start "
               "uses its own folder");
  }
  aot::driver::note_fingerprint(s.pinned_root, s.selection, s.folder, fingerprint);
}

}  // namespace vyre::gpu
