// The value the remote tier stores under a Redis key: one string, so that a
// single SET publishes the whole entry and a reader can never see half of
// it (no torn entry, whatever the interleaving of writers):
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

inline constexpr uint32_t kRemoteValueVersion = 1;
inline constexpr uint64_t kMaxRemoteHeaderBytes = 128;
// The largest value a reader asks for (GETRANGE stops there): the largest
// entry a directory accepts, plus the header.
inline constexpr uint64_t kMaxRemoteValueBytes = kMaxRemoteHeaderBytes + kMaxMetadataBytes + kMaxWgslBytes;

struct RemoteValue {
  std::string_view kind;
  std::string_view metadata;
  std::string_view content;
};

std::string encode_remote_value(std::string_view kind, std::string_view metadata, std::string_view content);
// Never reads past `value`'s end or a bound: malformed for anything but an
// exact frame, too_large for parts over the bounds, unsupported for another
// frame version.
sys::Result<RemoteValue> decode_remote_value(std::string_view value);

}  // namespace vyre::aot
