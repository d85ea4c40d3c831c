// Removing a name in a directory that a hostile user may have shaped: a
// directory planted where a file belongs is removed with its contents only
// when it is a plain directory of an accepted owner, through descriptors
// and without following any symbolic link; anything the system refuses is
// reported, never counted as removed.
#pragma once

#include <string>

#include "sys/result.hpp"
#include "sys/safe_file.hpp"

namespace vyre::sys {

// How deep a planted directory may nest before removal gives up.
inline constexpr int kMaxRemovalDepth = 16;

// Removes `name` in `dirfd` (never following it): a file, link, FIFO or
// socket is unlinked; a directory owned per `rule` is emptied and removed.
// Gives true when something was removed, false when nothing was there;
// fails with unsafe (a directory of another owner, or nested deeper than
// kMaxRemovalDepth) or io (the errno: read-only, immutable, permission).
Result<bool> remove_at(int dirfd, const std::string& name, OwnerRule rule);

}  // namespace vyre::sys
