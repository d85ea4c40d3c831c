// Where one start's driver pipeline data goes inside the cache directory
// (driver_store.hpp has the layout): the folder the same adapter selection
// resolved to last, or a new pending folder until the adapter is known. The
// GPU side names the selection and points the driver's variables at the
// result (gpu/driver_cache.cpp); this side owns the folders.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "sys/result.hpp"

namespace vyre::aot::driver {

struct Placement {
  std::filesystem::path data_folder;
  // The full fingerprint the folder is for; empty in a pending folder.
  std::string fingerprint;
  bool pending = false;       // filed under its fingerprint once the adapter is known (note_fingerprint)
  uint64_t files_before = 0;  // the driver's files already there: 0 is a cold driver cache
  uint64_t bytes_before = 0;
};

// Adopts the finished pending folders of earlier first starts, then picks
// the folder `selection` resolved to last (recency refreshed) or, without
// one, makes a pending folder. Fails with the reason no folder could be made.
sys::Result<Placement> place(const std::filesystem::path& cache_dir, std::string_view selection);

// Once the adapter's full fingerprint is known: marks a pending placement
// with it, and records which folder `selection` resolves to from now on.
void note_fingerprint(const std::filesystem::path& cache_dir, std::string_view selection, const Placement& placement,
                      std::string_view fingerprint);

}  // namespace vyre::aot::driver
