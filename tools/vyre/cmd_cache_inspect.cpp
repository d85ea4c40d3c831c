// vyre cache stats, zero-stats, ls, show: what the cache holds and has done.
#include <algorithm>
#include <iostream>

#include "cache_command.hpp"
#include "cache_output.hpp"
#include "cache_writes.hpp"
#include "vyre/error.hpp"

namespace vyre::cli {

// vyre cache stats [--json]
void add_cache_stats(CLI::App* cache_cmd, Action& action) {
  auto json_stats = std::make_shared<bool>(false);
  auto* stats =
      inspecting_subcommand(cache_cmd, action, "stats", "Counters of every process that used the cache, and its size",
                       [json_stats](aot::Cache& cache) {
                         aot::CacheStats s = cache.stats();
                         if (*json_stats) {
                           print_json_text(aot::to_json(s, cache));
                         } else {
                           std::cout << format_stats(s, cache);
                         }
                         return kOk;
                       });
  stats->add_flag("--json", *json_stats, "Print one JSON object");
}

// vyre cache zero-stats
void add_cache_zero_stats(CLI::App* cache_cmd, Action& action) {
  cache_subcommand(cache_cmd, action, "zero-stats", "Reset the counters (entries stay)", [](aot::Cache& cache) {
    return writing_to_the_cache(cache, [&cache] {
      cache.zero_stats();
      return kOk;
    });
  });
}

// vyre cache ls [--json]
void add_cache_ls(CLI::App* cache_cmd, Action& action) {
  auto json_ls = std::make_shared<bool>(false);
  auto driver_ls = std::make_shared<bool>(false);
  auto* ls = inspecting_subcommand(cache_cmd, action, "ls", "List entries: key, program, size, age, state, fingerprint",
                              [json_ls, driver_ls](aot::Cache& cache) {
                                if (*driver_ls) {
                                  const auto folders = cache.driver_folders();
                                  if (*json_ls) {
                                    nlohmann::json j = nlohmann::json::array();
                                    for (const auto& f : folders) j.push_back(nlohmann::json::parse(aot::to_json(f)));
                                    print_json(j);
                                  } else {
                                    std::cout << format_driver_table(folders);
                                  }
                                  return kOk;
                                }
                                auto entries = cache.list();
                                aot::order_for_listing(entries);
                                if (*json_ls) {
                                  print_json_text(aot::to_json(entries));
                                } else {
                                  std::cout << format_entry_table(entries);
                                  const auto folders = cache.driver_folders();
                                  if (!folders.empty()) {
                                    uint64_t bytes = 0;
                                    for (const auto& f : folders) bytes += f.bytes;
                                    std::cout << "\ndriver pipeline data: " << folders.size()
                                              << (folders.size() == 1 ? " folder, " : " folders, ")
                                              << aot::units::format_size(bytes) << " (vyre cache ls --driver-data)\n";
                                  }
                                }
                                return kOk;
                              });
  ls->add_flag("--json", *json_ls, "Print a JSON array of entries");
  ls->add_flag("--driver-data", *driver_ls,
               "List the driver's pipeline data folders instead (one per device and driver)");
}

// vyre cache show KEY [--json|--wgsl]
void add_cache_show(CLI::App* cache_cmd, Action& action) {
  struct ShowOptions {
    std::string key;
    bool json = false;
    bool wgsl = false;
  };
  auto show_o = std::make_shared<ShowOptions>();
  auto* show = inspecting_subcommand(cache_cmd, action, "show", "Show one entry, verified: a WGSL entry, or a tuning or shape record with its candidates' timings (the raw text with --wgsl)",
                                [show_o](aot::Cache& cache) {
                                  std::string key = resolve_key(cache, show_o->key);
                                  std::string wgsl;
                                  auto entry = cache.show(key, &wgsl);
                                  if (!entry) throw Error(ErrorKind::invalid_input, "no cache entry " + key);
                                  const bool ok = entry->state == aot::EntryState::ok;
                                  // A tuning record's text is the record; shown decoded.
                                  std::optional<aot::TuningRecord> record;
                                  std::optional<aot::ShapeRecord> shapes;
                                  std::string problem;
                                  if (ok && aot::is_tuning_record(entry->parts))
                                    record = aot::decode_tuning_record(wgsl, &problem);
                                  if (ok && aot::is_shape_record(entry->parts))
                                    shapes = aot::decode_shape_record(wgsl, &problem);
                                  if (show_o->wgsl && ok) {
                                    std::cout << wgsl;
                                  } else if (show_o->json) {
                                    nlohmann::json j = nlohmann::json::parse(aot::to_json(*entry));
                                    if (record) j["tuning"] = to_json(*record);
                                    if (shapes) j["shape_record"] = to_json(*shapes);
                                    if (!problem.empty()) j["tuning_problem"] = problem;
                                    print_json(j);
                                  } else {
                                    std::cout << format_entry(*entry);
                                    if (record) std::cout << format_tuning_record(*record);
                                    if (shapes) std::cout << format_shape_record(*shapes);
                                    if (!problem.empty()) std::cout << "record            unusable: " << problem << "\n";
                                  }
                                  return ok && problem.empty() ? kOk : kFailure;
                                });
  show->add_option("key", show_o->key, "Cache key or a unique prefix of it")->required();
  show->add_flag("--json", show_o->json, "Print one JSON object");
  show->add_flag("--wgsl", show_o->wgsl, "Print the entry's WGSL only");
}

}  // namespace vyre::cli
