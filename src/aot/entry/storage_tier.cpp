#include "aot/entry/storage_tier.hpp"

#include <exception>
#include <new>
#include <utility>

namespace vyre::aot {
namespace {

// Runs one call of a tier; an exception becomes the tier's failure (io).
template <class F>
auto guarded(const StorageTier& tier, const char* what, F&& call) noexcept -> decltype(call()) {
  try {
    return call();
  } catch (const std::exception& e) {
    return sys::failure(sys::Fault::io, tier.location().string() + ": " + what + " failed: " + e.what());
  } catch (...) {
    return sys::failure(sys::Fault::io, tier.location().string() + ": " + what + " failed");
  }
}

}  // namespace

sys::Result<Entry> StorageTier::get(const std::string& key, Use use) noexcept {
  return guarded(*this, "a lookup", [&] { return do_get(key, use); });
}

sys::Result<Stored> StorageTier::put(const Metadata& meta, std::string_view text) noexcept {
  return guarded(*this, "a write", [&] { return do_put(meta, text); });
}

sys::Result<bool> StorageTier::remove(const std::string& key, bool only_if_bad) noexcept {
  return guarded(*this, "a removal", [&] { return do_remove(key, only_if_bad); });
}

sys::Result<std::vector<EntryInfo>> StorageTier::list(const ListQuery& query) const noexcept {
  return guarded(*this, "a listing", [&] { return do_list(query); });
}

sys::Result<TierStats> StorageTier::stats() const noexcept {
  return guarded(*this, "a size count", [&] { return do_stats(); });
}

}  // namespace vyre::aot
