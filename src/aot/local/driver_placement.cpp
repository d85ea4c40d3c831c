#include "aot/local/driver_placement.hpp"

#include "aot/local/driver_store.hpp"

namespace vyre::aot::driver {

sys::Result<Placement> place(const std::filesystem::path& cache_dir, std::string_view selection) {
  // Data of earlier first starts, filed under the fingerprints they found.
  adopt_finished_pending(cache_dir);
  if (auto id = read_selection(cache_dir, selection)) {
    for (const auto& f : list(cache_dir)) {
      if (f.id != *id || !f.ok) continue;
      auto data = data_folder(cache_dir, f.fingerprint);
      if (!data) break;  // a pending folder instead
      Placement p{*data, f.fingerprint, false, f.files, f.bytes};
      // The fingerprint file counts in the listing; the driver's files are what matter.
      if (p.files_before > 0) --p.files_before;
      return p;
    }
  }
  auto data = pending_data_folder(cache_dir);
  if (!data) return data.failure();
  return Placement{*data, {}, true, 0, 0};
}

void note_fingerprint(const std::filesystem::path& cache_dir, std::string_view selection, const Placement& placement,
                      std::string_view fingerprint) {
  if (placement.pending) (void)mark_pending(placement.data_folder, fingerprint);
  const std::string id = folder_id(fingerprint);
  if (read_selection(cache_dir, selection) != id) write_selection(cache_dir, selection, id);
}

}  // namespace vyre::aot::driver
