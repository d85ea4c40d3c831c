// How `vyre cache` prints the cache's reports: one JSON object per report
// (for --json) or aligned text for people. The JSON of every report is the
// library's (aot::to_json), the one Python returns too; a tuning record's,
// which only `cache show` prints, is made here.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "vyre/aot.hpp"

namespace vyre::cli {

// Control characters escaped (\n, \t, \xNN): names from a cache are text
// someone else wrote, never terminal commands.
std::string printable(const std::string& text);

std::string format_stats(const aot::CacheStats& stats, const aot::Cache& cache);
std::string format_entry_table(const std::vector<aot::EntryInfo>& entries);
std::string format_driver_table(const std::vector<aot::DriverFolderInfo>& folders);
std::string format_entry(const aot::EntryInfo& entry);
// A tuning record's choice and its candidates' timings (`cache show`).
std::string format_tuning_record(const aot::TuningRecord& record);
nlohmann::json to_json(const aot::TuningRecord& record);
// vyre::lib's shape records, as `cache show` prints them.
std::string format_shape_record(const aot::ShapeRecord& record);
nlohmann::json to_json(const aot::ShapeRecord& record);
std::string format_explanation(const aot::Explanation& explanation);
std::string format_transfer(const aot::TransferReport& report);  // export and import

}  // namespace vyre::cli
