// The GPU driver's own pipeline cache, kept inside vyre's cache. Naga's
// translation and the driver's pipeline compilation are most of a warm
// start; wgpu-native has no pipeline-cache API, but Mesa's and NVIDIA's
// drivers keep compiled pipelines on disk where their environment variables
// say. vyre points those variables at a folder of its cache per device and
// driver (the full backend fingerprint), so that this data is bounded,
// listed, verified, pruned, cleared, exported and imported with the WGSL
// entries (docs/cache.md, "Driver pipeline data").
//
// The process's first Backend places it; nothing needs calling. The
// variables are published as a new environment array, never freeing the
// old one, so threads that read the environment meanwhile (NumPy's, a
// host's) are safe; a thread that *writes* the environment at the same
// instant is not (POSIX leaves concurrent setenv undefined), so a host
// that writes its environment from several threads calls
// place_driver_cache() itself at the start of main.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "vyre/aot.hpp"
#include "vyre/export.hpp"

namespace vyre::gpu {

struct VYRE_API DriverCachePlacement {
  bool active = false;               // the driver's variables point into vyre's cache
  std::filesystem::path data_folder;  // in the cache directory, as configured
  // What the driver's variables say: the same folder through
  // /proc/<pid>/fd/<n>, a descriptor of the cache directory opened once and
  // checked, so that no link or rename can redirect the driver afterwards.
  std::filesystem::path driver_path;
  // The full fingerprint the folder is for, from the last start with the
  // same adapter selection on this machine; empty on the first start, whose
  // data a later process files under the fingerprint the Backend found.
  std::string fingerprint;
  uint64_t files_before = 0;         // files in the folder when placed: 0 is a cold driver cache
  uint64_t bytes_before = 0;
  // Mesa keeps it in one file (MESA_DISK_CACHE_SINGLE_FILE), as vyre's
  // SQLite store keeps the entries (aot::CacheStore).
  bool single_file = false;
  std::string reason;                // why not active; empty when active
};

// Points Mesa's (MESA_SHADER_CACHE_DIR, MESA_SHADER_CACHE_MAX_SIZE) and
// NVIDIA's (__GL_SHADER_DISK_CACHE, __GL_SHADER_DISK_CACHE_PATH,
// __GL_SHADER_DISK_CACHE_SIZE, __GL_SHADER_DISK_CACHE_SKIP_CLEANUP) shader
// caches at the writable directory of `options`, leaving alone a driver
// whose variables the user has set, and doing nothing when
// options.driver_cache is false or there is no writable directory. Must run
// before the process's first Backend. Only the first call acts; later ones
// return its placement.
VYRE_API DriverCachePlacement place_driver_cache(const aot::CacheOptions& options = aot::CacheOptions::from_environment());

// The placement the first call made; nullopt before any.
VYRE_API std::optional<DriverCachePlacement> driver_cache_placement();

}  // namespace vyre::gpu
