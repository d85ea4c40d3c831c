// The driver's pipeline data inside vyre's cache: one folder per full
// backend fingerprint (device and driver), which the GPU driver's own
// on-disk shader cache is pointed at (gpu/driver_cache.hpp), so that it is
// bounded, listed, verified, pruned, cleared, exported and imported with the
// WGSL entries. The files inside `data/` are the driver's, opaque to vyre
// (each driver checks its own). docs/cache.md, "Driver pipeline data".
//
//   <dir>/.driver/<id>/fingerprint   the full fingerprint; its mtime is the folder's recency
//   <dir>/.driver/<id>/data/         what the driver's variables point at
//   <dir>/.driver/pending-<pid>-<n>/ a process's data before its adapter was
//                                    known (then marked with a fingerprint file;
//                                    the next process adopts it)
//   <dir>/.driver/selection-<hash>   the folder id an adapter selection resolved to last
//
// <id> is 32 hex digits of SHA-256 over the fingerprint.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sys/result.hpp"

namespace vyre::aot::driver {

inline constexpr std::string_view kFolder = ".driver";
inline constexpr std::string_view kDataFolder = "data";
inline constexpr std::string_view kFingerprintFile = "fingerprint";

std::string folder_id(std::string_view fingerprint);
bool is_folder_id(std::string_view name);

struct Folder {
  std::string id;
  std::string fingerprint;  // as recorded; empty when unreadable
  std::filesystem::path path;
  uint64_t bytes = 0;       // every regular file under the folder
  uint64_t files = 0;
  int64_t last_used_ms = 0;
  bool ok = true;           // its fingerprint file names it; a real directory of this user
  std::string problem;
};

// The fingerprint folders under `cache_dir`, sorted by id (not the pending
// folders or the selection records).
std::vector<Folder> list(const std::filesystem::path& cache_dir);

// The folders as they will be once the first starts that have ended are
// filed (adopt_finished_pending), found without moving anything: for the
// commands that only read. A finished pending folder counts toward the
// folder of its fingerprint (its path: the filed folder's when there is one).
std::vector<Folder> list_as_filed(const std::filesystem::path& cache_dir);

// Pending folders older than `cutoff_ms` (their process ended before it
// could adopt them), for cleanup to sweep.
std::vector<std::filesystem::path> stale_pending(const std::filesystem::path& cache_dir, int64_t cutoff_ms);

// Temporary files older than `cutoff_ms` in the folders (a fingerprint file
// whose writer was killed before its rename), for cleanup to sweep.
std::vector<std::filesystem::path> stale_temporaries(const std::filesystem::path& cache_dir, int64_t cutoff_ms);

// Every byte under <cache_dir>/.driver: the folders, the pending folders of
// first starts and the selection records. What counts towards the byte
// bound beside the entries.
uint64_t total_bytes(const std::filesystem::path& cache_dir);

// The data folder of `fingerprint`'s folder, made (mode 0700) with its
// fingerprint file when absent; recency refreshed.
sys::Result<std::filesystem::path> data_folder(const std::filesystem::path& cache_dir, std::string_view fingerprint);

// A new pending folder's data folder, for a process whose adapter is not
// known yet.
sys::Result<std::filesystem::path> pending_data_folder(const std::filesystem::path& cache_dir);

// Records in a pending folder which fingerprint its data is for, as soon as
// its process knows; a later process adopts it (adopt_finished_pending).
sys::Result<void> mark_pending(const std::filesystem::path& pending_data, std::string_view fingerprint);

// Moves what a pending folder holds into `fingerprint`'s folder (files it
// already has are kept) and removes the pending folder.
sys::Result<void> adopt_pending(const std::filesystem::path& cache_dir, const std::filesystem::path& pending_data,
                                std::string_view fingerprint);

// Adopts every pending folder whose process has ended and which was marked;
// returns how many. Unmarked ones are left for cleanup to sweep.
size_t adopt_finished_pending(const std::filesystem::path& cache_dir);

// Removes a folder (fingerprint folder or pending); fails with the reason it
// is still there.
sys::Result<void> remove_folder(const std::filesystem::path& folder);

// Copies `folder` to `<destination_dir>/.driver/<id>` unless a good folder is
// there already; true when copied. `file_mode` for the files it writes.
sys::Result<bool> copy_folder(const Folder& folder, const std::filesystem::path& destination_dir, unsigned file_mode);

// The selection record: which folder a given adapter selection on this
// machine resolved to last (gpu/driver_cache.cpp names the selection).
std::optional<std::string> read_selection(const std::filesystem::path& cache_dir, std::string_view selection);
void write_selection(const std::filesystem::path& cache_dir, std::string_view selection, std::string_view id);

}  // namespace vyre::aot::driver
