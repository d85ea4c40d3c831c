#include "aot/entry/entry.hpp"

#include <toml++/toml.h>

#include <limits>
#include <sstream>

#include "aot/entry/entry_frame.hpp"
#include "aot/entry/hashing.hpp"

namespace vyre::aot {

std::string wgsl_name(const std::string& key) { return key + ".wgsl"; }
std::string metadata_name(const std::string& key) { return key + ".toml"; }
std::string packed_name(const std::string& key) { return key + ".entry"; }

Metadata make_metadata(const KeyParts& parts, std::string_view program, std::string_view wgsl, double lower_ms) {
  Metadata meta;
  meta.format = kCacheVersion;
  meta.parts = parts;
  meta.spec_hash = parts.spec_hash();
  meta.key = cache_key(meta.spec_hash, parts.fingerprint);
  meta.program = std::string(program);
  meta.content_sha256 = sha256_hex(wgsl);
  meta.wgsl_bytes = wgsl.size();
  meta.created_unix_ms = sys::now_unix_ms();
  meta.lower_ms = lower_ms;
  return meta;
}

std::string encode_metadata(const Metadata& meta) {
  // toml++ writes tables in key order; the field names are the format.
  toml::table table{
      {"key", meta.key},
      {"program", meta.program},
      {"program_digest", meta.parts.program_digest},
      {"shaping", meta.parts.shaping},
      {"lowering_version", static_cast<int64_t>(meta.parts.lowering_version)},
      {"vyre_version", meta.parts.vyre_version},
      {"fingerprint", meta.parts.fingerprint},
      {"spec_hash", meta.spec_hash},
      {"content_sha256", meta.content_sha256},
      {"wgsl_bytes", static_cast<int64_t>(meta.wgsl_bytes)},
      {"created_unix_ms", meta.created_unix_ms},
      {"lower_ms", meta.lower_ms},
  };
  // Optional (format 1 readers ignore it): present only when signed.
  if (!meta.signature.empty()) table.insert("signature", meta.signature);
  std::ostringstream out;
  // The format first, where a reader of any version looks before anything else.
  out << "# vyre AOT cache entry (docs/cache.md)\nformat = " << meta.format << '\n' << table << '\n';
  return out.str();
}

namespace {

struct FieldReader {
  const toml::table& table;
  std::string problem;

  bool text(const char* name, std::string& out) {
    auto value = table[name].value<std::string>();
    if (!value) return missing(name, "a string");
    out = std::move(*value);
    return true;
  }
  bool integer(const char* name, int64_t min, int64_t max, int64_t& out) {
    const toml::node* node = table.get(name);
    if (node == nullptr || !node->is_integer()) return missing(name, "an integer");
    int64_t v = node->as_integer()->get();
    if (v < min || v > max) {
      problem = std::string("metadata field `") + name + "` is out of range";
      return false;
    }
    out = v;
    return true;
  }
  bool number(const char* name, double& out) {
    const toml::node* node = table.get(name);
    if (node == nullptr || !(node->is_floating_point() || node->is_integer())) return missing(name, "a number");
    out = node->is_integer() ? static_cast<double>(node->as_integer()->get()) : node->as_floating_point()->get();
    return true;
  }
  bool missing(const char* name, const char* what) {
    problem = std::string("metadata field `") + name + "` is missing or not " + what;
    return false;
  }
};

}  // namespace

sys::Result<void> parse_metadata(std::string_view text, Metadata& m) {
  toml::table table;
  try {
    table = toml::parse(text);
  } catch (const toml::parse_error& e) {
    return sys::failure(sys::Fault::malformed, std::string("metadata is not valid TOML: ") + std::string(e.description()));
  }
  FieldReader read{table, {}};
  int64_t format = 0;
  if (!read.integer("format", 0, std::numeric_limits<uint32_t>::max(), format))
    return sys::failure(sys::Fault::malformed, read.problem);
  m.format = static_cast<uint32_t>(format);
  if (m.format != kCacheVersion)
    return sys::failure(sys::Fault::unsupported, "entry format " + std::to_string(m.format) +
                                                     ", this vyre reads format " + std::to_string(kCacheVersion));
  int64_t lowering_version = 0, wgsl_bytes = 0;
  bool ok = read.text("key", m.key) && read.text("program", m.program) &&
            read.text("program_digest", m.parts.program_digest) && read.text("shaping", m.parts.shaping) &&
            read.integer("lowering_version", 0, std::numeric_limits<uint32_t>::max(), lowering_version) &&
            read.text("vyre_version", m.parts.vyre_version) && read.text("fingerprint", m.parts.fingerprint) &&
            read.text("spec_hash", m.spec_hash) && read.text("content_sha256", m.content_sha256) &&
            read.integer("wgsl_bytes", 0, static_cast<int64_t>(kMaxWgslBytes), wgsl_bytes) &&
            read.integer("created_unix_ms", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                         m.created_unix_ms) &&
            read.number("lower_ms", m.lower_ms);
  if (!ok) return sys::failure(sys::Fault::malformed, read.problem);
  if (const toml::node* signature = table.get("signature")) {
    if (!signature->is_string()) return sys::failure(sys::Fault::malformed, "metadata field `signature` is not a string");
    m.signature = signature->as_string()->get();
  }
  m.parts.lowering_version = static_cast<uint32_t>(lowering_version);
  m.wgsl_bytes = static_cast<uint64_t>(wgsl_bytes);
  return {};
}

sys::Result<void> check_entry(std::string_view key, const Metadata& meta, std::string_view wgsl) {
  auto mismatch = [](std::string why) { return sys::failure(sys::Fault::mismatch, std::move(why)); };
  if (meta.key != key) return mismatch("metadata belongs to key " + meta.key.substr(0, 16) + "...");
  std::string spec = meta.parts.spec_hash();
  if (meta.spec_hash != spec) return mismatch("metadata spec_hash does not match its components");
  if (cache_key(spec, meta.parts.fingerprint) != key) return mismatch("metadata components do not hash to this key");
  if (wgsl.size() != meta.wgsl_bytes)
    return mismatch("WGSL has " + std::to_string(wgsl.size()) + " bytes, metadata says " +
                    std::to_string(meta.wgsl_bytes));
  if (sha256_hex(wgsl) != meta.content_sha256) return mismatch("WGSL content does not match its SHA-256");
  return {};
}

bool is_miss(const sys::Failure& failure) {
  return failure.kind == sys::Fault::missing || failure.kind == sys::Fault::partial;
}

bool is_bad_entry(const sys::Failure& failure) {
  switch (failure.kind) {
    case sys::Fault::unsafe:
    case sys::Fault::too_large:
    case sys::Fault::malformed:
    case sys::Fault::mismatch:
    case sys::Fault::unsupported:
    case sys::Fault::untrusted: return true;
    default: return false;
  }
}

namespace {

// The metadata's failure to read, as the entry's: its absence is a miss.
sys::Failure metadata_failure(sys::Failure f) {
  if (f.kind == sys::Fault::missing) f.message.clear();
  return f;
}

// The WGSL's failure to read, as the entry's: committed metadata without its
// WGSL is an entry removed under the reader.
sys::Failure wgsl_failure(sys::Failure f) {
  if (f.kind == sys::Fault::missing) {
    f.kind = sys::Fault::partial;
    f.message.clear();
  }
  return f;
}

// The one-file form: a frame holding the metadata and the content.
sys::Result<Entry> read_packed(int dirfd, const std::string& key, sys::OwnerRule rule, Metadata& seen) {
  auto file = sys::read_file_at(dirfd, packed_name(key), kMaxEntryFrameBytes, rule);
  if (!file) return metadata_failure(file.failure());
  auto frame = decode_entry_frame(file->data);
  if (!frame) return frame.failure();
  if (frame->kind != kPackedEntryKind) return sys::failure(sys::Fault::malformed, packed_name(key) + " is not an entry");
  if (auto parsed = parse_metadata(frame->metadata, seen); !parsed) return parsed.failure();
  if (auto checked = check_entry(key, seen, frame->content); !checked) return checked.failure();
  Entry entry;
  entry.meta = seen;
  entry.text = std::string(frame->content);
  entry.metadata_bytes = file->data.size() - frame->content.size();
  entry.metadata_mtime_ms = file->mtime_ms;
  return entry;
}

sys::Result<Entry> read_checked(int dirfd, const std::string& key, sys::OwnerRule rule, bool verify_content,
                                Metadata& seen) {
  auto meta_file = sys::read_file_at(dirfd, metadata_name(key), kMaxMetadataBytes, rule);
  if (!meta_file && meta_file.failure().kind == sys::Fault::missing) {
    // No pair committed: the one-file form, if there is one (read whole:
    // its content is verified even for a listing).
    auto packed = read_packed(dirfd, key, rule, seen);
    if (packed && !verify_content) packed->text.clear();
    return packed;
  }
  if (!meta_file) return metadata_failure(meta_file.failure());
  Entry entry;
  entry.metadata_bytes = meta_file->data.size();
  entry.metadata_mtime_ms = meta_file->mtime_ms;
  if (auto parsed = parse_metadata(meta_file->data, seen); !parsed) return parsed.failure();

  if (!verify_content) {
    sys::FileFacts facts = sys::file_facts_at(dirfd, wgsl_name(key), rule);
    if (!facts.exists) return sys::failure(sys::Fault::partial, {});
    if (!facts.safe())
      return sys::failure(sys::Fault::unsafe, wgsl_name(key) + " is not a regular file of an accepted owner");
    if (seen.key != key) return sys::failure(sys::Fault::mismatch, "metadata belongs to another key");
    if (facts.size != seen.wgsl_bytes) return sys::failure(sys::Fault::mismatch, "WGSL size differs from metadata");
    entry.meta = seen;
    return entry;
  }

  auto wgsl_file = sys::read_file_at(dirfd, wgsl_name(key), kMaxWgslBytes, rule);
  if (!wgsl_file) return wgsl_failure(wgsl_file.failure());
  if (auto checked = check_entry(key, seen, wgsl_file->data); !checked) return checked.failure();
  entry.meta = seen;
  entry.text = std::move(wgsl_file->data);
  return entry;
}

}  // namespace

EntryInspection inspect_entry(int dirfd, const std::string& key, sys::OwnerRule rule, bool verify_content) {
  Metadata seen;
  seen.format = kCacheVersion;  // what an entry without readable metadata reports
  auto entry = read_checked(dirfd, key, rule, verify_content, seen);
  return EntryInspection{std::move(entry), std::move(seen)};
}

sys::Result<Entry> read_entry(int dirfd, const std::string& key, sys::OwnerRule rule, bool verify_content) {
  Metadata seen;
  return read_checked(dirfd, key, rule, verify_content, seen);
}

}  // namespace vyre::aot
