#include "aot/entry.hpp"

#include <toml++/toml.h>

#include <limits>
#include <sstream>

#include "aot/directory.hpp"
#include "aot/hashing.hpp"

namespace vyre::aot {

Metadata make_metadata(const KeyParts& parts, std::string_view program, std::string_view wgsl, double lower_ms) {
  Metadata meta;
  meta.format = kCacheVersion;
  meta.parts = parts;
  meta.spec_hash = parts.spec_hash();
  meta.key = cache_key(meta.spec_hash, parts.fingerprint);
  meta.program = std::string(program);
  meta.content_sha256 = sha256_hex(wgsl);
  meta.wgsl_bytes = wgsl.size();
  meta.created_unix_ms = now_unix_ms();
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

ParsedMetadata parse_metadata(std::string_view text) {
  ParsedMetadata parsed;
  toml::table table;
  try {
    table = toml::parse(text);
  } catch (const toml::parse_error& e) {
    parsed.problem = std::string("metadata is not valid TOML: ") + std::string(e.description());
    return parsed;
  }
  FieldReader read{table, {}};
  int64_t format = 0;
  if (!read.integer("format", 0, std::numeric_limits<uint32_t>::max(), format)) {
    parsed.problem = read.problem;
    return parsed;
  }
  parsed.meta.format = static_cast<uint32_t>(format);
  if (parsed.meta.format != kCacheVersion) {
    parsed.status = ParsedMetadata::Status::other_format;
    return parsed;
  }
  Metadata& m = parsed.meta;
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
  if (!ok) {
    parsed.problem = read.problem;
    return parsed;
  }
  m.parts.lowering_version = static_cast<uint32_t>(lowering_version);
  m.wgsl_bytes = static_cast<uint64_t>(wgsl_bytes);
  parsed.status = ParsedMetadata::Status::ok;
  return parsed;
}

std::optional<std::string> check_entry(std::string_view key, const Metadata& meta, std::string_view wgsl) {
  if (meta.key != key) return "metadata belongs to key " + meta.key.substr(0, 16) + "...";
  std::string spec = meta.parts.spec_hash();
  if (meta.spec_hash != spec) return std::string("metadata spec_hash does not match its components");
  if (cache_key(spec, meta.parts.fingerprint) != key) return std::string("metadata components do not hash to this key");
  if (wgsl.size() != meta.wgsl_bytes)
    return "WGSL has " + std::to_string(wgsl.size()) + " bytes, metadata says " + std::to_string(meta.wgsl_bytes);
  if (sha256_hex(wgsl) != meta.content_sha256) return std::string("WGSL content does not match its SHA-256");
  return std::nullopt;
}

EntryRead read_entry(int dirfd, const std::string& key, OwnerRule rule, bool verify_content) {
  EntryRead entry;
  FileRead meta_file = read_file_at(dirfd, metadata_name(key), kMaxMetadataBytes, rule);
  switch (meta_file.outcome) {
    case FileRead::Outcome::ok: break;
    case FileRead::Outcome::missing: entry.status = EntryRead::Status::missing; return entry;
    case FileRead::Outcome::error:
      entry.status = EntryRead::Status::error;
      entry.problem = meta_file.problem;
      return entry;
    case FileRead::Outcome::unsafe:
    case FileRead::Outcome::too_large:
      entry.status = EntryRead::Status::bad;
      entry.problem = meta_file.problem;
      return entry;
  }
  entry.metadata_bytes = meta_file.size;
  entry.metadata_mtime_ms = meta_file.mtime_ms;
  ParsedMetadata parsed = parse_metadata(meta_file.data);
  entry.meta = std::move(parsed.meta);
  if (parsed.status == ParsedMetadata::Status::other_format) {
    entry.status = EntryRead::Status::other_format;
    entry.problem = "entry format " + std::to_string(entry.meta.format) + ", this vyre reads format " +
                    std::to_string(kCacheVersion);
    return entry;
  }
  if (parsed.status == ParsedMetadata::Status::malformed) {
    entry.status = EntryRead::Status::bad;
    entry.problem = std::move(parsed.problem);
    return entry;
  }

  if (!verify_content) {
    FileFacts facts = file_facts_at(dirfd, wgsl_name(key), rule);
    if (!facts.exists) {
      entry.status = EntryRead::Status::incomplete;
    } else if (!facts.safe()) {
      entry.status = EntryRead::Status::bad;
      entry.problem = wgsl_name(key) + " is not a regular file of an accepted owner";
    } else if (facts.size != entry.meta.wgsl_bytes || entry.meta.key != key) {
      entry.status = EntryRead::Status::bad;
      entry.problem = entry.meta.key != key ? "metadata belongs to another key" : "WGSL size differs from metadata";
    } else {
      entry.status = EntryRead::Status::good;
    }
    return entry;
  }

  FileRead wgsl_file = read_file_at(dirfd, wgsl_name(key), kMaxWgslBytes, rule);
  switch (wgsl_file.outcome) {
    case FileRead::Outcome::ok: break;
    case FileRead::Outcome::missing: entry.status = EntryRead::Status::incomplete; return entry;
    case FileRead::Outcome::error:
      entry.status = EntryRead::Status::error;
      entry.problem = wgsl_file.problem;
      return entry;
    case FileRead::Outcome::unsafe:
    case FileRead::Outcome::too_large:
      entry.status = EntryRead::Status::bad;
      entry.problem = wgsl_file.problem;
      return entry;
  }
  if (auto problem = check_entry(key, entry.meta, wgsl_file.data)) {
    entry.status = EntryRead::Status::bad;
    entry.problem = std::move(*problem);
    return entry;
  }
  entry.wgsl = std::move(wgsl_file.data);
  entry.status = EntryRead::Status::good;
  return entry;
}

}  // namespace vyre::aot
