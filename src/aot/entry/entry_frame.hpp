// An entry as one string: the value the remote tier stores under a Redis
// key, so that a single SET publishes the whole entry, and the one file
// (`<key>.entry`) a directory on a shared or network file system publishes
// with a single rename. A reader never sees half of it (no torn entry,
// whatever the interleaving of writers):
//
//   "vyre-remote 1 <kind> <metadata bytes> <content bytes>\n" <metadata> <content>
//
// <metadata> is the entry's TOML metadata, exactly as a directory stores it
// (its signature included); <content> is the artifact. <kind> names the
// artifact, "wgsl" today: another kind (a tuning record, keyed by the full
// fingerprint like the WGSL) travels in the same frame under its own Redis
// key, `<prefix><kind>:<key>`, and is checked the same way.
#pragma once

#include <string>
#include <string_view>

#include "aot/entry/entry.hpp"
#include "sys/result.hpp"

namespace vyre::aot {

inline constexpr uint32_t kEntryFrameVersion = 1;
// The kind of a one-file entry in a directory (the remote tier's is "wgsl").
inline constexpr std::string_view kPackedEntryKind = "entry";
inline constexpr uint64_t kMaxFrameHeaderBytes = 128;
// The largest frame a reader takes (GETRANGE stops there; a file read is
// bounded by it): the largest entry a directory accepts, plus the header.
inline constexpr uint64_t kMaxEntryFrameBytes = kMaxFrameHeaderBytes + kMaxMetadataBytes + kMaxWgslBytes;

struct EntryFrame {
  std::string_view kind;
  std::string_view metadata;
  std::string_view content;
};

std::string encode_entry_frame(std::string_view kind, std::string_view metadata, std::string_view content);
// Never reads past `value`'s end or a bound: malformed for anything but an
// exact frame, too_large for parts over the bounds, unsupported for another
// frame version.
sys::Result<EntryFrame> decode_entry_frame(std::string_view value);

}  // namespace vyre::aot
