// Settings of the cache that other modules need beside CacheOptions.
#pragma once

#include <filesystem>
#include <optional>

namespace vyre::aot {

// The user's own cache folder, $XDG_CACHE_HOME/vyre/aot, else
// $HOME/.cache/vyre/aot, whatever VYRE_AOT_CACHE_DIR says: where the
// driver's data goes when the cache directory is a team's (driver data is
// never shared: it cannot be signed).
std::optional<std::filesystem::path> personal_cache_directory();

}  // namespace vyre::aot
