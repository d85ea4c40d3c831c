#include "aot/local/readonly_tier.hpp"

namespace vyre::aot {
namespace {

sys::Failure refused(const std::filesystem::path& where) {
  return sys::failure(sys::Fault::read_only,
                      where.string() + " is a read-only layer; write to the cache directory (VYRE_AOT_CACHE_DIR)");
}

}  // namespace

sys::Result<Stored> ReadOnlyDirectoryTier::put(const Metadata&, std::string_view) { return refused(location()); }

sys::Result<bool> ReadOnlyDirectoryTier::remove(const std::string&, bool) { return refused(location()); }

}  // namespace vyre::aot
