// The cache's reports as JSON: made here once for `vyre cache ... --json`
// and vyre.cache, so that both say the same (docs/cli.md lists the keys).
#include <nlohmann/json.hpp>

#include <algorithm>

#include "aot/entry/tier_counters.hpp"
#include "vyre/aot.hpp"

namespace vyre::aot {
namespace {

nlohmann::json parts_object(const KeyParts& parts) {
  return {{"program_digest", parts.program_digest},
          {"shaping", parts.shaping},
          {"lowering_version", parts.lowering_version},
          {"vyre_version", parts.vyre_version},
          {"fingerprint", parts.fingerprint}};
}

nlohmann::json tier_object(const TierCounters& t) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& field : kTierCounterFields) j[field.name] = t.*field.member;
  return j;
}

nlohmann::json driver_folder_object(const DriverFolderInfo& f) {
  nlohmann::json j = {{"id", f.id},       {"fingerprint", f.fingerprint},
                      {"path", f.path.string()}, {"bytes", f.bytes},
                      {"files", f.files}, {"last_used_unix_ms", f.last_used_unix_ms},
                      {"ok", f.ok}};
  if (!f.problem.empty()) j["problem"] = f.problem;
  return j;
}

nlohmann::json entry_object(const EntryInfo& e) {
  nlohmann::json j = {{"key", e.key},
                      {"directory", e.directory.string()},
                      {"readonly_layer", e.readonly_layer},
                      {"state", std::string(to_string(e.state))},
                      {"format", e.format},
                      {"program", e.program},
                      {"wgsl_bytes", e.wgsl_bytes},
                      {"metadata_bytes", e.metadata_bytes},
                      {"created_unix_ms", e.created_unix_ms},
                      {"last_used_unix_ms", e.last_used_unix_ms},
                      {"lower_ms", e.lower_ms}};
  if (!e.problem.empty()) j["problem"] = e.problem;
  // What the record gives, when it could be read.
  if (!e.parts.program_digest.empty()) {
    j["parts"] = parts_object(e.parts);
    j["fingerprint"] = e.parts.fingerprint;
    j["spec_hash"] = e.spec_hash;
    j["content_sha256"] = e.content_sha256;
  }
  return j;
}

// Text that is not UTF-8 (a name from a damaged entry) is written with
// U+FFFD in its place rather than failing the report.
std::string text_of(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

}  // namespace

std::string to_json(const CacheStats& s, const Cache& cache) {
  nlohmann::json j = {{"hits", s.hits},
                      {"misses", s.misses},
                      {"writes", s.writes},
                      {"evictions", s.evictions},
                      {"bad_entries", s.bad_entries},
                      {"errors", s.errors},
                      {"entries", s.entries},
                      {"bytes", s.bytes},
                      {"bytes_written", s.bytes_written},
                      {"lowering_ms", s.lowering_ms},
                      {"time_saved_ms", s.time_saved_ms},
                      {"incomplete", s.incomplete},
                      {"incomplete_reason", s.incomplete_reason},
                      {"rejected", s.rejected},
                      {"local", tier_object(s.local)},
                      {"driver_folders", s.driver_folders},
                      {"driver_bytes", s.driver_bytes},
                      {"older_versions", s.older_versions},
                      {"store", s.store},
                      {"store_reason", s.store_reason},
                      {"journal_mode", s.journal_mode},
                      {"file_system", s.file_system},
                      {"shared_file_system", s.shared_file_system},
                      {"directory", cache.directory() ? nlohmann::json(cache.directory()->string()) : nullptr},
                      {"max_bytes", cache.options().max_bytes},
                      {"max_entries", cache.options().max_entries}};
  // Only with a remote tier: remote.hits, remote.misses, remote.rejected, ...
  if (!s.remote_location.empty()) {
    j["remote"] = tier_object(s.remote);
    j["remote"]["location"] = s.remote_location;
  }
  return text_of(j);
}

std::string to_json(const EntryInfo& entry) { return text_of(entry_object(entry)); }

std::string to_json(const std::vector<EntryInfo>& entries) {
  nlohmann::json j = nlohmann::json::array();
  for (const EntryInfo& e : entries) j.push_back(entry_object(e));
  return text_of(j);
}

void order_for_listing(std::vector<EntryInfo>& entries) {
  std::sort(entries.begin(), entries.end(), [](const EntryInfo& a, const EntryInfo& b) {
    if (a.last_used_unix_ms != b.last_used_unix_ms) return a.last_used_unix_ms > b.last_used_unix_ms;
    if (a.key != b.key) return a.key < b.key;
    return a.directory < b.directory;
  });
}

std::string to_json(const DriverFolderInfo& folder) { return text_of(driver_folder_object(folder)); }

std::string to_json(const Explanation& x) {
  nlohmann::json components = nlohmann::json::array();
  for (const auto& c : x.components) components.push_back({{"name", c.name}, {"value", c.value}, {"hash", c.hash}});
  nlohmann::json neighbours = nlohmann::json::array();
  for (const auto& n : x.same_program)
    neighbours.push_back({{"key", n.key}, {"directory", n.directory.string()}, {"differences", n.differences}});
  nlohmann::json j = {{"components", components}, {"spec_hash", x.spec_hash}, {"key", x.key},
                      {"hit", x.hit},             {"same_program", neighbours}};
  if (x.found_in) j["found_in"] = x.found_in->string();
  if (!x.problem.empty()) j["problem"] = x.problem;
  if (!x.device_fingerprint.empty()) {
    j["device_fingerprint"] = x.device_fingerprint;
    j["driver_folder"] = x.driver_folder ? driver_folder_object(*x.driver_folder) : nlohmann::json(nullptr);
  }
  return text_of(j);
}

std::string to_json(const VerifyReport& r) {
  nlohmann::json bad = nlohmann::json::array();
  for (const auto& e : r.bad) bad.push_back(entry_object(e));
  nlohmann::json driver_bad = nlohmann::json::array();
  for (const auto& f : r.driver_bad) driver_bad.push_back(driver_folder_object(f));
  return text_of({{"checked", r.checked},
                  {"good", r.good},
                  {"bad", bad},
                  {"removed", r.removed},
                  {"not_removed", r.not_removed.count},
                  {"not_removed_problem", r.not_removed.problem},
                  {"other_format", r.other_format},
                  {"incomplete", r.incomplete},
                  {"driver_checked", r.driver_checked},
                  {"driver_bad", driver_bad},
                  {"older_versions", r.older_versions}});
}

std::string to_json(const PruneReport& r) {
  return text_of({{"evicted", r.evicted}, {"bytes_freed", r.bytes_freed}, {"swept", r.swept},
                  {"driver_evicted", r.driver_evicted}, {"entries", r.entries}, {"bytes", r.bytes},
                  {"not_removed", r.not_removed.count}, {"not_removed_problem", r.not_removed.problem},
                  {"older_versions_removed", r.older_versions_removed}});
}

std::string to_json(const TransferReport& r) {
  return text_of({{"copied", r.copied}, {"skipped_present", r.skipped_present}, {"skipped_bad", r.skipped_bad},
                  {"refused_unsigned", r.refused_unsigned}, {"refused_reason", r.refused_reason},
                  {"driver_copied", r.driver_copied}, {"driver_skipped_other", r.driver_skipped_other},
                  {"driver_skipped_fingerprints", r.driver_skipped_fingerprints}});
}

}  // namespace vyre::aot
