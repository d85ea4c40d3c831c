// The cache's readers of untrusted bytes: the entry frame (a remote value,
// or a one-file entry), the metadata (TOML) and the entry pair read from a
// directory. The input is tried as a frame; then it is split at its first
// NUL byte into metadata and WGSL, written as an entry and read back; then
// it is written as a one-file entry and read back.
//
// Properties (a violation traps):
// - decode_entry_frame accepts only an exact frame: re-encoding its parts
//   gives the input back; it fails with malformed, too_large or unsupported;
// - parse_metadata fails with malformed or unsupported only, and metadata it
//   accepts survives encode_metadata -> parse_metadata unchanged;
// - read_entry returns an entry only when check_entry accepts the pair, with
//   the WGSL as written; a bad pair fails as a bad entry, never as a miss;
// - read_entry returns a one-file entry only when it is a frame of kind
//   "entry" whose parts verify; else a bad entry.
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "aot/entry/entry.hpp"
#include "aot/local/directory.hpp"
#include "aot/entry/entry_frame.hpp"
#include "fuzz_check.hpp"
#include "sys/safe_file.hpp"

namespace {

using vyre::aot::Metadata;
using vyre::sys::Fault;

bool same_number(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

bool same_metadata(const Metadata& a, const Metadata& b) {
  return a.format == b.format && a.key == b.key && a.program == b.program && a.parts == b.parts &&
         a.spec_hash == b.spec_hash && a.content_sha256 == b.content_sha256 && a.wgsl_bytes == b.wgsl_bytes &&
         a.created_unix_ms == b.created_unix_ms && same_number(a.lower_ms, b.lower_ms) && a.signature == b.signature;
}

// Parses, checks the failure kinds and the round trip; true when accepted.
bool check_metadata(std::string_view text, Metadata& meta) {
  auto parsed = vyre::aot::parse_metadata(text, meta);
  if (!parsed) {
    const Fault kind = parsed.failure().kind;
    FUZZ_REQUIRE(kind == Fault::malformed || kind == Fault::unsupported,
                 "parse_metadata fails as malformed or unsupported only");
    return false;
  }
  Metadata again;
  FUZZ_REQUIRE(vyre::aot::parse_metadata(vyre::aot::encode_metadata(meta), again).ok(),
               "encoded metadata parses");
  FUZZ_REQUIRE(same_metadata(meta, again), "metadata survives encode -> parse");
  return true;
}

void check_entry_frame(std::string_view input) {
  auto value = vyre::aot::decode_entry_frame(input);
  if (!value) {
    const Fault kind = value.failure().kind;
    FUZZ_REQUIRE(kind == Fault::malformed || kind == Fault::too_large || kind == Fault::unsupported,
                 "decode_entry_frame fails as malformed, too_large or unsupported only");
    return;
  }
  FUZZ_REQUIRE(vyre::aot::encode_entry_frame(value->kind, value->metadata, value->content) == input,
               "decode_entry_frame accepts only an exact frame");
  Metadata meta;
  if (check_metadata(value->metadata, meta)) (void)vyre::aot::check_entry(meta.key, meta, value->content);
}

bool is_key(std::string_view key) {
  return key.size() == 64 && key.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// One directory for the process: each input overwrites the same two names.
int entry_directory() {
  static const int fd = [] {
    char pattern[] = "/tmp/vyre-cache-entry-fuzz.XXXXXX";
    if (mkdtemp(pattern) == nullptr) std::abort();
    return open(pattern, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }();
  return fd;
}

void write_at(int dirfd, const std::string& name, std::string_view data) {
  const int fd = openat(dirfd, name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) std::abort();
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n <= 0) std::abort();
    done += static_cast<size_t>(n);
  }
  close(fd);
}

void check_entry_pair(std::string_view input) {
  const size_t split = input.find('\0');
  const std::string_view metadata = input.substr(0, split);
  const std::string_view wgsl = split == std::string_view::npos ? std::string_view{} : input.substr(split + 1);

  Metadata meta;
  const bool parsed = check_metadata(metadata, meta);
  // The entry's name is its key; another key in the metadata is a mismatch.
  const std::string key = parsed && is_key(meta.key) ? meta.key : std::string(64, '0');
  const int dirfd = entry_directory();
  write_at(dirfd, vyre::aot::metadata_name(key), metadata);
  write_at(dirfd, vyre::aot::wgsl_name(key), wgsl);

  auto entry = vyre::aot::read_entry(dirfd, key, vyre::sys::OwnerRule::self);
  if (entry) {
    FUZZ_REQUIRE(parsed && vyre::aot::check_entry(key, meta, wgsl).ok(), "read_entry returns only a verified pair");
    FUZZ_REQUIRE(entry->text == wgsl && same_metadata(entry->meta, meta), "read_entry returns what was written");
  } else {
    FUZZ_REQUIRE(vyre::aot::is_bad_entry(entry.failure()), "a complete but bad pair is a bad entry, not a miss");
  }
}

// The input as a one-file entry (a shared file system's form), alone in its
// directory: read only when it is a frame whose parts verify.
void check_packed_entry(std::string_view input) {
  const int dirfd = entry_directory();
  auto frame = vyre::aot::decode_entry_frame(input);
  Metadata meta;
  const bool parsed = frame && vyre::aot::parse_metadata(frame->metadata, meta).ok();
  const std::string key = parsed && is_key(meta.key) ? meta.key : std::string(64, '1');
  for (const std::string& name : {vyre::aot::metadata_name(key), vyre::aot::wgsl_name(key)}) unlinkat(dirfd, name.c_str(), 0);
  write_at(dirfd, vyre::aot::packed_name(key), input);
  auto entry = vyre::aot::read_entry(dirfd, key, vyre::sys::OwnerRule::self);
  if (entry) {
    FUZZ_REQUIRE(frame && frame->kind == vyre::aot::kPackedEntryKind && parsed &&
                     vyre::aot::check_entry(key, meta, frame->content).ok() && entry->text == frame->content,
                 "read_entry returns a one-file entry only when its frame verifies");
  } else {
    FUZZ_REQUIRE(vyre::aot::is_bad_entry(entry.failure()), "a one-file entry that does not verify is a bad entry");
  }
  unlinkat(dirfd, vyre::aot::packed_name(key).c_str(), 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  check_entry_frame(input);
  check_entry_pair(input);
  check_packed_entry(input);
  return 0;
}
