#include "aot/entry/entry_frame.hpp"

#include <charconv>

namespace vyre::aot {
namespace {

constexpr std::string_view kMagic = "vyre-remote ";

sys::Failure malformed(const std::string& why) { return sys::failure(sys::Fault::malformed, "entry frame " + why); }

// The next space-separated field of the header.
std::string_view next_field(std::string_view& rest) {
  size_t space = rest.find(' ');
  std::string_view field = rest.substr(0, space);
  rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
  return field;
}

// A decimal as the encoder writes it: no sign, no leading zero (found by
// cache_entry_fuzz: "0736" was read as 736, so two values framed one entry).
std::optional<uint64_t> number(std::string_view text) {
  if (text.empty() || text.size() > 12 || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

std::string encode_entry_frame(std::string_view kind, std::string_view metadata, std::string_view content) {
  std::string out = std::string(kMagic) + std::to_string(kEntryFrameVersion) + " " + std::string(kind) + " " +
                    std::to_string(metadata.size()) + " " + std::to_string(content.size()) + "\n";
  out.reserve(out.size() + metadata.size() + content.size());
  out.append(metadata);
  out.append(content);
  return out;
}

sys::Result<EntryFrame> decode_entry_frame(std::string_view value) {
  size_t newline = value.substr(0, kMaxFrameHeaderBytes).find('\n');
  if (newline == std::string_view::npos || !value.starts_with(kMagic)) return malformed("has no vyre-remote header");
  std::string_view rest = value.substr(kMagic.size(), newline - kMagic.size());
  auto version = number(next_field(rest));
  if (!version) return malformed("header has no version");
  if (*version != kEntryFrameVersion)
    return sys::failure(sys::Fault::unsupported, "entry frame version " + std::to_string(*version) +
                                                     ", this vyre reads version " + std::to_string(kEntryFrameVersion));
  EntryFrame out;
  out.kind = next_field(rest);
  auto metadata_bytes = number(next_field(rest));
  auto content_bytes = number(next_field(rest));
  if (out.kind.empty() || !metadata_bytes || !content_bytes || !rest.empty()) return malformed("header is not well formed");
  if (*metadata_bytes > kMaxMetadataBytes || *content_bytes > kMaxWgslBytes)
    return sys::failure(sys::Fault::too_large, "entry frame parts are over the bounds");
  // One spelling per frame: a header with any other spacing (a trailing
  // space, found by cache_entry_fuzz) is not the encoder's and is refused.
  const std::string header = std::string(kMagic) + std::to_string(*version) + " " + std::string(out.kind) + " " +
                             std::to_string(*metadata_bytes) + " " + std::to_string(*content_bytes);
  if (value.substr(0, newline) != header) return malformed("header is not well formed");
  std::string_view body = value.substr(newline + 1);
  if (body.size() != *metadata_bytes + *content_bytes)
    return malformed("has " + std::to_string(body.size()) + " bytes after its header, the header says " +
                     std::to_string(*metadata_bytes + *content_bytes));
  out.metadata = body.substr(0, *metadata_bytes);
  out.content = body.substr(*metadata_bytes);
  return out;
}

}  // namespace vyre::aot
