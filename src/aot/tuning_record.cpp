// Tuning records: their key parts and their text (TOML). The cache stores a
// record as an entry's text, so everything that guards an entry (the content
// digest, atomic publication, signatures) guards a record too; this file only
// has to refuse text that is no record.
#include <toml++/toml.h>

#include "aot/record_fields.hpp"

#include <cmath>
#include <limits>
#include <sstream>

#include "vyre/aot.hpp"
#include "vyre/lower.hpp"
#include "vyre/version.hpp"
#include "vyre/wire.hpp"

namespace vyre::aot {
namespace {

constexpr std::string_view kTuningRecordPrefix = "tuning record; size class ";
constexpr size_t kMaxTuningCandidates = 1024;

toml::array dim3_array(const Dim3& d) { return toml::array{int64_t{d[0]}, int64_t{d[1]}, int64_t{d[2]}}; }

toml::table candidate_table(const TuningCandidate& c) {
  return toml::table{
      {"workgroup", dim3_array(c.workgroup)},
      {"vector_width", int64_t{c.vector_width}},
      {"ran", c.ran},
      {"median_ms", c.median_ms},
      {"min_ms", c.min_ms},
      {"note", c.note},
  };
}

// The record's fields, and the two kinds of its own.
struct Reader : RecordFields {
  bool dim3(std::string_view name, Dim3& out) {
    const toml::array* a = table[name].as_array();
    if (a == nullptr || a->size() != 3) return fail(name, "three integers");
    for (size_t i = 0; i < 3; ++i) {
      const toml::node* n = a->get(i);
      if (n == nullptr || !n->is_integer() || n->as_integer()->get() < 1 || n->as_integer()->get() > 1024)
        return fail(name, "three integers from 1 to 1024");
      out[i] = static_cast<uint32_t>(n->as_integer()->get());
    }
    return true;
  }
  bool width(std::string_view name, uint8_t& out) {
    int64_t v = 0;
    if (!integer(name, 1, 4, v) || (v != 1 && v != 4)) return fail(name, "1 or 4");
    out = static_cast<uint8_t>(v);
    return true;
  }
};

}  // namespace

KeyParts tuning_key_parts(const CheckedProgram& program, std::string_view device_fingerprint,
                          std::string_view size_class, const ShaderOptions& options) {
  KeyParts parts;
  parts.program_digest = digest(program.program()).hex();
  const std::string from = shaping_signature(program, options);
  parts.shaping = std::string(kTuningRecordPrefix) + std::string(size_class) + "; tuned from: " +
                  (from.empty() ? "the default options" : from);
  parts.lowering_version = kTuningRecordFormat;
  parts.vyre_version = kVersion;
  parts.fingerprint = std::string(device_fingerprint);
  return parts;
}

bool is_tuning_record(const KeyParts& parts) { return parts.shaping.starts_with(kTuningRecordPrefix); }

std::string encode_tuning_record(const TuningRecord& r) {
  toml::array candidates;
  for (const TuningCandidate& c : r.candidates) candidates.push_back(candidate_table(c));
  toml::table table{
      {"size_class", r.size_class},
      {"own_workgroup", dim3_array(r.own_workgroup)},
      {"workgroup", dim3_array(r.workgroup)},
      {"vector_width", int64_t{r.vector_width}},
      {"reason", r.reason},
      {"warmup", int64_t{r.warmup}},
      {"repetitions", int64_t{r.repetitions}},
      {"batch", int64_t{r.batch}},
      {"tuning_ms", r.tuning_ms},
      {"candidate", std::move(candidates)},
  };
  std::ostringstream out;
  out << "# vyre tuning record (docs/tuning.md)\nformat = " << r.format << '\n' << table << '\n';
  return out.str();
}

std::optional<TuningRecord> decode_tuning_record(std::string_view text, std::string* problem) {
  std::string why;
  auto refuse = [&](const std::string& reason) -> std::optional<TuningRecord> {
    if (problem) *problem = "not a tuning record: " + reason;
    return std::nullopt;
  };
  if (text.size() > kMaxWgslBytes) return refuse("larger than an entry may be");
  toml::table table;
  try {
    table = toml::parse(text);
  } catch (const toml::parse_error& e) {
    return refuse("invalid TOML (" + std::string(e.description()) + ")");
  }
  TuningRecord r;
  Reader read{table, why};
  int64_t format = 0, warmup = 0, repetitions = 0, batch = 0;
  if (!read.integer("format", 0, std::numeric_limits<uint32_t>::max(), format)) return refuse(why);
  if (format != kTuningRecordFormat)
    return refuse("format " + std::to_string(format) + ", this vyre reads format " +
                  std::to_string(kTuningRecordFormat));
  r.format = static_cast<uint32_t>(format);
  const bool ok = read.text("size_class", r.size_class) && read.dim3("own_workgroup", r.own_workgroup) &&
                  read.dim3("workgroup", r.workgroup) && read.width("vector_width", r.vector_width) &&
                  read.text("reason", r.reason) && read.integer("warmup", 0, 1'000'000, warmup) &&
                  read.integer("repetitions", 0, 1'000'000, repetitions) && read.integer("batch", 1, 1024, batch) &&
                  read.number("tuning_ms", r.tuning_ms);
  if (!ok) return refuse(why);
  r.warmup = static_cast<unsigned>(warmup);
  r.repetitions = static_cast<unsigned>(repetitions);
  r.batch = static_cast<unsigned>(batch);
  const toml::array* list = table["candidate"].as_array();
  if (list == nullptr) return refuse("field `candidate` is missing or not an array of tables");
  if (list->size() > kMaxTuningCandidates) return refuse("more than " + std::to_string(kMaxTuningCandidates) + " candidates");
  for (const toml::node& node : *list) {
    const toml::table* t = node.as_table();
    if (t == nullptr) return refuse("a candidate is not a table");
    TuningCandidate c;
    Reader in{*t, why};
    if (!(in.dim3("workgroup", c.workgroup) && in.width("vector_width", c.vector_width) && in.flag("ran", c.ran) &&
          in.number("median_ms", c.median_ms) && in.number("min_ms", c.min_ms) && in.text("note", c.note)))
      return refuse("candidate " + std::to_string(r.candidates.size() + 1) + ": " + why);
    r.candidates.push_back(std::move(c));
  }
  const uint64_t invocations = uint64_t{r.workgroup[0]} * r.workgroup[1] * r.workgroup[2];
  if (invocations > 1024) return refuse("the chosen workgroup has more than 1024 invocations");
  return r;
}

}  // namespace vyre::aot
