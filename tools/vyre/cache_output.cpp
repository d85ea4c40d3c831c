#include "cache_output.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>

namespace vyre::cli {
namespace {

// `cache ls` fits a terminal of this width.
constexpr size_t kTableColumns = 100;

std::string fixed(double value, int decimals = 1) {
  char buf[64];
  (void)std::snprintf(buf, sizeof buf, "%.*f", decimals, value);  // counts, sizes and seconds: far under 64
  return buf;
}

std::string limit_text(uint64_t value, bool bytes) {
  if (value == 0) return "unbounded";
  return bytes ? aot::units::format_size(value) : std::to_string(value);
}

// Columns a text takes on a terminal, counting UTF-8 code points.
size_t columns(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// At most `width` columns, "..." marking a cut (never inside a UTF-8 sequence).
std::string fit(const std::string& s, size_t width) {
  if (columns(s) <= width) return s;
  if (width <= 3) return std::string(width, '.');
  size_t kept = 0, end = 0;
  while (end < s.size() && kept < width - 3) {
    ++end;
    while (end < s.size() && (s[end] & 0xC0) == 0x80) ++end;
    ++kept;
  }
  return s.substr(0, end) + "...";
}

// A row of left-aligned columns.
std::string row(const std::vector<std::string>& cells, const std::vector<size_t>& widths) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    line += cells[i];
    const size_t used = columns(cells[i]);
    if (i + 1 < cells.size()) line.append(widths[i] > used ? widths[i] - used + 2 : 2, ' ');
  }
  return line + "\n";
}

}  // namespace

std::string format_stats(const aot::CacheStats& s, const aot::Cache& cache) {
  std::ostringstream out;
  const auto& options = cache.options();
  std::string layers;
  for (const auto& d : options.readonly_directories) {
    if (!layers.empty()) layers += ':';
    layers += d.string();
  }
  const uint64_t lookups = s.hits + s.misses;
  // A directory the settings name but nothing has made yet: inspected_cache.
  const auto named = aot::CacheOptions::from_environment().directory;
  out << "directory         "
      << (cache.directory() ? cache.directory()->string()
          : named         ? named->string() + " (not made yet: nothing cached)"
                          : "(none: no disk cache)")
      << "\n"
      << "read-only layers  " << (layers.empty() ? "(none)" : layers) << "\n";
  if (!s.store.empty())
    out << "store             " << s.store << (s.journal_mode.empty() ? "" : " (journal " + s.journal_mode + ")")
        << (s.shared_file_system && s.store == "directory" ? " (one file an entry: shared file system)" : "") << " on "
        << (s.file_system.empty() ? "an unknown file system" : s.file_system) << ": " << printable(s.store_reason) << "\n";
  out
      << "entries           " << s.entries << " of at most " << limit_text(options.max_entries, false) << "\n"
      << "size              " << aot::units::format_size(s.bytes + s.driver_bytes) << " of at most "
      << limit_text(options.max_bytes, true) << " (entries " << aot::units::format_size(s.bytes) << ", driver data "
      << aot::units::format_size(s.driver_bytes) << " in " << s.driver_folders
      << (s.driver_folders == 1 ? " folder" : " folders") << ")\n"
      << "hits              " << s.hits;
  if (lookups > 0) out << " (" << fixed(100.0 * static_cast<double>(s.hits) / static_cast<double>(lookups)) << " %)";
  out << "\n"
      << "misses            " << s.misses << "\n"
      << "writes            " << s.writes << " (" << aot::units::format_size(s.bytes_written) << ")\n"
      << "evictions         " << s.evictions << "\n"
      << "bad entries       " << s.bad_entries << "\n"
      << "errors            " << s.errors << "\n"
      << "time lowering     " << fixed(s.lowering_ms) << " ms\n"
      << "time saved        " << fixed(s.time_saved_ms) << " ms\n";
  if (s.incomplete) out << "incomplete        the counters miss some counts: " << printable(s.incomplete_reason) << "\n";
  if (s.rejected > 0) out << "rejected          " << s.rejected << " (not signed by a trusted key)\n";
  out << "older versions    " << s.older_versions;
  if (s.older_versions > 0) out << " (never served; vyre cache prune --older-versions removes them)";
  out << "\n";
  // Per tier: what each answered (a remote hit is a miss of the local tiers).
  std::vector<std::vector<std::string>> rows{{"tier", "hits", "misses", "writes", "errors", "timeouts", "rejected"}};
  auto add = [&](const std::string& name, const aot::TierCounters& t) {
    rows.push_back({name, std::to_string(t.hits), std::to_string(t.misses), std::to_string(t.writes),
                    std::to_string(t.errors), std::to_string(t.timeouts), std::to_string(t.rejected)});
  };
  add("local", s.local);
  if (!s.remote_location.empty()) add("remote", s.remote);
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) widths[i] = std::max(widths[i], r[i].size());
  out << "\n";
  for (const auto& r : rows) out << row(r, widths);
  if (!s.remote_location.empty()) out << "remote            " << s.remote_location << "\n";
  return out.str();
}

std::string printable(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      (void)std::snprintf(buf, sizeof buf, "\\x%02x", c);  // 4 characters fit
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string format_entry_table(const std::vector<aot::EntryInfo>& entries) {
  // Most columns have a cap; the fingerprint takes what is left of
  // kTableColumns and is cut with "..." (`ls --json` and `show` give it whole).
  const std::vector<size_t> caps{16, 24, 10, 6, 22, SIZE_MAX};
  const int64_t now = aot::units::now_unix_ms();
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"KEY", "PROGRAM", "SIZE", "AGE", "STATE", "FINGERPRINT"});
  for (const auto& e : entries) {
    std::string state(aot::to_string(e.state));
    if (e.readonly_layer) state += " (read-only)";
    std::string program = e.program.empty() ? "-" : printable(e.program);
    if (aot::is_tuning_record(e.parts)) program += " (tuning)";
    if (aot::is_shape_record(e.parts)) program += " (tuning)";
    rows.push_back({e.key.substr(0, 16), program,
                    aot::units::format_size(e.wgsl_bytes + e.metadata_bytes), aot::units::format_age(now - e.last_used_unix_ms),
                    state, e.parts.fingerprint.empty() ? "-" : printable(e.parts.fingerprint)});
  }
  std::vector<size_t> widths(caps.size(), 0);
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) widths[i] = std::min(caps[i], std::max(widths[i], columns(r[i])));
  size_t used = 0;
  for (size_t i = 0; i + 1 < widths.size(); ++i) used += widths[i] + 2;
  widths.back() = kTableColumns > used + 12 ? kTableColumns - used : 12;
  std::string out;
  for (auto& r : rows) {
    for (size_t i = 0; i < r.size(); ++i) r[i] = fit(r[i], widths[i]);
    out += row(r, widths);
  }
  return out;
}

std::string format_entry(const aot::EntryInfo& e) {
  std::ostringstream out;
  const int64_t now = aot::units::now_unix_ms();
  out << "key               " << e.key << "\n"
      << "state             " << aot::to_string(e.state) << (e.problem.empty() ? "" : " (" + e.problem + ")") << "\n"
      << "directory         " << e.directory.string() << (e.readonly_layer ? " (read-only layer)" : "") << "\n";
  if (e.format != 0) out << "format            " << e.format << "\n";
  const bool tuning = aot::is_tuning_record(e.parts) || aot::is_shape_record(e.parts);
  if (aot::is_tuning_record(e.parts)) out << "kind              tuning record (docs/tuning.md)\n";
  if (aot::is_shape_record(e.parts)) out << "kind              shape record of a standard kernel (docs/lib.md)\n";
  if (!e.parts.program_digest.empty()) {
    out << "program           " << (e.program.empty() ? "-" : printable(e.program)) << "\n"
        << "program digest    " << e.parts.program_digest << "\n"
        << "shaping           " << (e.parts.shaping.empty() ? "(none)" : e.parts.shaping) << "\n"
        << (tuning ? "record format     " : "lowering version  ") << e.parts.lowering_version << "\n"
        << "vyre version      " << e.parts.vyre_version << "\n"
        << "fingerprint       " << e.parts.fingerprint << "\n"
        << "spec hash         " << e.spec_hash << "\n"
        << "content sha256    " << e.content_sha256 << "\n"
        << "created           " << aot::units::format_age(now - e.created_unix_ms) << " ago\n"
        << (tuning ? "tuning took       " : "lowering took     ") << fixed(e.lower_ms, 3) << " ms\n";
  }
  out << "size              " << e.wgsl_bytes << (tuning ? " B record + " : " B WGSL + ") << e.metadata_bytes
      << " B metadata\n"
      << "last used         " << aot::units::format_age(now - e.last_used_unix_ms) << " ago\n";
  return out.str();
}

namespace {

// A record's candidates under their heading, each column as wide as its
// widest cell.
std::string candidates_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) widths[i] = std::max(widths[i], columns(r[i]));
  std::string out = "candidates\n";
  for (const auto& r : rows) out += "  " + row(r, widths);
  return out;
}

}  // namespace

std::string format_tuning_record(const aot::TuningRecord& r) {
  std::ostringstream out;
  out << "size class        " << r.size_class << "\n"
      << "chosen            workgroup " << dim3_text(r.workgroup) << ", " << int{r.vector_width} << " per invocation"
      << (r.chose_own() ? " (the program's own: " + r.reason + ")" : "") << "\n"
      << "own               workgroup " << dim3_text(r.own_workgroup) << ", 1 per invocation\n"
      << "timing            " << r.warmup << " warm-up dispatches, then " << r.repetitions << " samples of " << r.batch
      << (r.batch == 1 ? " dispatch" : " dispatches") << " per candidate, in rotating rounds; the median decides\n";
  std::vector<std::vector<std::string>> rows{{"WORKGROUP", "WIDTH", "MEDIAN MS", "MIN MS", "NOTE"}};
  for (const aot::TuningCandidate& c : r.candidates) {
    const bool chosen = c.workgroup == r.workgroup && c.vector_width == r.vector_width;
    rows.push_back({dim3_text(c.workgroup), std::to_string(c.vector_width), c.ran ? fixed(c.median_ms, 4) : "-",
                    c.ran ? fixed(c.min_ms, 4) : "-", chosen ? "chosen" : fit(printable(c.note), 72)});
  }
  out << candidates_table(rows);
  return out.str();
}

nlohmann::json to_json(const aot::TuningRecord& r) {
  nlohmann::json candidates = nlohmann::json::array();
  for (const aot::TuningCandidate& c : r.candidates)
    candidates.push_back({{"workgroup", {c.workgroup[0], c.workgroup[1], c.workgroup[2]}},
                          {"vector_width", c.vector_width},
                          {"ran", c.ran},
                          {"median_ms", c.median_ms},
                          {"min_ms", c.min_ms},
                          {"note", c.note}});
  return {{"size_class", r.size_class},
          {"workgroup", {r.workgroup[0], r.workgroup[1], r.workgroup[2]}},
          {"vector_width", r.vector_width},
          {"own_workgroup", {r.own_workgroup[0], r.own_workgroup[1], r.own_workgroup[2]}},
          {"reason", r.reason},
          {"warmup", r.warmup},
          {"repetitions", r.repetitions},
          {"batch", r.batch},
          {"tuning_ms", r.tuning_ms},
          {"candidates", candidates}};
}

std::string format_shape_record(const aot::ShapeRecord& r) {
  std::ostringstream out;
  out << "family            " << printable(r.family) << "\n"
      << "size class        " << printable(r.size_class) << "\n"
      << "chosen            " << printable(r.shape) << (r.shape == r.fallback ? " (the device class's default)" : "")
      << "\n"
      << "default           " << printable(r.fallback) << "\n"
      << "timing            " << r.warmup << " untimed call(s), then " << r.repetitions
      << " timed calls per candidate, in rotating rounds; the median decides\n";
  std::vector<std::vector<std::string>> rows{{"SHAPE", "MEDIAN MS", "MIN MS", "NOTE"}};
  for (const aot::ShapeCandidate& c : r.candidates)
    rows.push_back({printable(c.shape), c.ran ? fixed(c.median_ms, 4) : "-", c.ran ? fixed(c.min_ms, 4) : "-",
                    c.shape == r.shape ? "chosen" : fit(printable(c.note), 72)});
  out << candidates_table(rows);
  return out.str();
}

nlohmann::json to_json(const aot::ShapeRecord& r) {
  nlohmann::json candidates = nlohmann::json::array();
  for (const aot::ShapeCandidate& c : r.candidates)
    candidates.push_back(
        {{"shape", c.shape}, {"ran", c.ran}, {"median_ms", c.median_ms}, {"min_ms", c.min_ms}, {"note", c.note}});
  return {{"family", r.family},       {"size_class", r.size_class},   {"shape", r.shape},
          {"fallback", r.fallback},   {"warmup", r.warmup},           {"repetitions", r.repetitions},
          {"tuning_ms", r.tuning_ms}, {"candidates", candidates}};
}

std::string format_driver_table(const std::vector<aot::DriverFolderInfo>& folders) {
  const int64_t now = aot::units::now_unix_ms();
  std::vector<std::vector<std::string>> rows{{"DRIVER DATA", "FILES", "SIZE", "AGE", "STATE", "FINGERPRINT"}};
  for (const auto& f : folders)
    rows.push_back({f.id.substr(0, 16), std::to_string(f.files), aot::units::format_size(f.bytes),
                    aot::units::format_age(now - f.last_used_unix_ms), f.ok ? "ok" : "bad",
                    f.ok ? printable(f.fingerprint) : printable(f.problem)});
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) widths[i] = std::max(widths[i], columns(r[i]));
  size_t used = 0;
  for (size_t i = 0; i + 1 < widths.size(); ++i) used += widths[i] + 2;
  widths.back() = kTableColumns > used + 12 ? kTableColumns - used : 12;
  std::string out;
  for (auto& r : rows) {
    r.back() = fit(r.back(), widths.back());
    out += row(r, widths);
  }
  return out;
}

std::string format_explanation(const aot::Explanation& x) {
  std::ostringstream out;
  if (!x.device_fingerprint.empty()) {
    // The device tier first: it does not change the WGSL key below.
    out << "driver data:      keyed by the full device fingerprint\n"
        << "device:           " << printable(x.device_fingerprint) << "\n";
    if (x.driver_folder)
      out << "                  " << x.driver_folder->files << " files, "
          << aot::units::format_size(x.driver_folder->bytes) << " in " << x.driver_folder->path.string() << "\n";
    else
      out << "                  none kept yet (the first run on this device and driver fills it)\n";
    out << "wgsl entry:       keyed by what shapes the text:\n";
  }
  for (const auto& c : x.components) {
    std::string name = c.name + ":";
    name.resize(std::max<size_t>(name.size(), 18), ' ');
    out << name << (c.value.empty() ? "(none)" : c.value) << "\n" << std::string(18, ' ') << "sha256 " << c.hash << "\n";
  }
  out << "spec hash:        " << x.spec_hash << "\n"
      << "key:              " << x.key << "\n";
  if (x.hit) {
    out << "result:           hit in " << x.found_in->string() << "\n";
    return out.str();
  }
  if (!x.problem.empty())
    out << "result:           miss: the entry in " << x.found_in->string() << " is bad (" << x.problem
        << "); it is replaced on the next run\n";
  else
    out << "result:           miss\n";
  if (x.same_program.empty()) {
    out << "no entry for this program digest is cached: it was never lowered here, was evicted, or its text\n"
           "changed (a different program digest)\n";
    return out.str();
  }
  out << "entries for the same program differ in:\n";
  for (const auto& n : x.same_program) {
    out << "  " << n.key.substr(0, 16) << " (" << n.directory.string() << ")\n";
    for (const auto& d : n.differences) out << "    " << d << "\n";
  }
  return out.str();
}

std::string format_transfer(const aot::TransferReport& r) {
  std::string out = std::to_string(r.copied) + " copied, " + std::to_string(r.skipped_present) + " already there, " +
                    std::to_string(r.skipped_bad) + " bad entries skipped; driver data: " +
                    std::to_string(r.driver_copied) + " folders copied";
  if (r.driver_skipped_other > 0) out += ", " + std::to_string(r.driver_skipped_other) + " of other devices or drivers skipped";
  out += "\n";
  if (r.refused_unsigned > 0)
    out += std::to_string(r.refused_unsigned) + " refused: not signed by a key of VYRE_AOT_TRUSTED_KEYS (first: " +
           printable(r.refused_reason) + ")\n";
  for (const auto& f : r.driver_skipped_fingerprints) out += "  skipped driver data for " + printable(f) + "\n";
  return out;
}

}  // namespace vyre::cli
