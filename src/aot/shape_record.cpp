// Shape records: what tuning chose among one of vyre::lib's families of
// programs, their key parts and their text (TOML). Kept as an entry's text
// like a tuning record, so the cache guards it the same way; this file only
// has to refuse text that is no record.
#include <toml++/toml.h>

#include "aot/record_fields.hpp"

#include <sstream>

#include "vyre/aot.hpp"
#include "vyre/version.hpp"
#include "vyre/wire.hpp"

namespace vyre::aot {
namespace {

constexpr std::string_view kShapeRecordPrefix = "shape record of vyre::lib; size class ";
constexpr size_t kMaxShapeCandidates = 1024;
constexpr size_t kMaxText = 4096;  // a family's name, a shape, a note

// A count read as an unsigned: 0 to a million (warm-ups, repetitions, format).
bool count(RecordFields& fields, std::string_view name, unsigned& out) {
  int64_t v = 0;
  if (!fields.integer(name, 0, 1'000'000, v)) return false;
  out = static_cast<unsigned>(v);
  return true;
}

}  // namespace

KeyParts shape_record_key_parts(std::string_view family, std::string_view size_class,
                                std::string_view device_fingerprint) {
  KeyParts parts;
  // The family stands where a program's digest would: its name says which
  // programs (and which generator, with the vyre version) the shapes make.
  parts.program_digest = sha256("vyre::lib family " + std::string(family)).hex();
  parts.shaping = std::string(kShapeRecordPrefix) + std::string(size_class) + "; family " + std::string(family);
  parts.lowering_version = kShapeRecordFormat;
  parts.vyre_version = kVersion;
  parts.fingerprint = std::string(device_fingerprint);
  return parts;
}

bool is_shape_record(const KeyParts& parts) { return parts.shaping.starts_with(kShapeRecordPrefix); }

std::string encode_shape_record(const ShapeRecord& r) {
  toml::array candidates;
  for (const ShapeCandidate& c : r.candidates)
    candidates.push_back(toml::table{{"shape", c.shape},
                                     {"ran", c.ran},
                                     {"median_ms", c.median_ms},
                                     {"min_ms", c.min_ms},
                                     {"note", c.note}});
  toml::table table{
      {"family", r.family},
      {"size_class", r.size_class},
      {"shape", r.shape},
      {"fallback", r.fallback},
      {"warmup", int64_t{r.warmup}},
      {"repetitions", int64_t{r.repetitions}},
      {"tuning_ms", r.tuning_ms},
      {"candidate", std::move(candidates)},
  };
  std::ostringstream out;
  out << "# vyre::lib shape record (docs/lib.md)\nformat = " << r.format << '\n' << table << '\n';
  return out.str();
}

std::optional<ShapeRecord> decode_shape_record(std::string_view text, std::string* problem) {
  std::string why;
  auto refuse = [&](const std::string& reason) -> std::optional<ShapeRecord> {
    if (problem) *problem = "not a shape record: " + reason;
    return std::nullopt;
  };
  if (text.size() > kMaxWgslBytes) return refuse("larger than an entry may be");
  toml::table table;
  try {
    table = toml::parse(text);
  } catch (const toml::parse_error& e) {
    return refuse("invalid TOML (" + std::string(e.description()) + ")");
  }
  ShapeRecord r;
  RecordFields read{table, why};
  unsigned format = 0;
  if (!count(read, "format", format)) return refuse(why);
  if (format != kShapeRecordFormat)
    return refuse("format " + std::to_string(format) + ", this vyre reads format " +
                  std::to_string(kShapeRecordFormat));
  r.format = format;
  if (!(read.text("family", r.family, kMaxText) && read.text("size_class", r.size_class, kMaxText) &&
        read.text("shape", r.shape, kMaxText) && read.text("fallback", r.fallback, kMaxText) &&
        count(read, "warmup", r.warmup) && count(read, "repetitions", r.repetitions) &&
        read.number("tuning_ms", r.tuning_ms)))
    return refuse(why);
  if (r.shape.empty()) return refuse("field `shape` is empty");
  const toml::array* list = table["candidate"].as_array();
  if (list == nullptr) return refuse("field `candidate` is missing or not an array of tables");
  if (list->size() > kMaxShapeCandidates) return refuse("more than " + std::to_string(kMaxShapeCandidates) + " candidates");
  for (const toml::node& node : *list) {
    const toml::table* t = node.as_table();
    if (t == nullptr) return refuse("a candidate is not a table");
    ShapeCandidate c;
    RecordFields in{*t, why};
    if (!(in.text("shape", c.shape, kMaxText) && in.flag("ran", c.ran) && in.number("median_ms", c.median_ms) &&
          in.number("min_ms", c.min_ms) && in.text("note", c.note, kMaxText)))
      return refuse("candidate " + std::to_string(r.candidates.size() + 1) + ": " + why);
    r.candidates.push_back(std::move(c));
  }
  return r;
}

}  // namespace vyre::aot
