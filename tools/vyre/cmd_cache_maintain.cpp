// vyre cache verify, prune, clear, export, import: keeping the cache sound
// and bounded, and moving its entries between machines.
#include <iostream>

#include "cache_command.hpp"
#include "cache_output.hpp"
#include "cache_writes.hpp"

namespace vyre::cli {
namespace {

// What a removal left in place, on stderr; exit kWriteError when anything
// that was to go is still there (a read-only or immutable directory).
Exit report_not_removed(const aot::NotRemoved& left) {
  if (left.count == 0) return kOk;
  std::cerr << "vyre: error: " << left.count << " entries or files could not be removed: " << printable(left.problem)
            << "\n";
  return kWriteError;
}

}  // namespace

// vyre cache verify [--json] [--keep]
void add_cache_verify(CLI::App* cache_cmd, Action& action) {
  struct VerifyOptions {
    bool json = false;
    bool keep = false;
  };
  auto verify_o = std::make_shared<VerifyOptions>();
  auto* verify = cache_subcommand(
      cache_cmd, action, "verify", "Recompute every entry's digest; report and remove bad entries (exit 1 if any)",
      [verify_o](aot::Cache& cache) {
        aot::VerifyReport r = cache.verify(!verify_o->keep);
        if (verify_o->json) {
          print_json_text(aot::to_json(r));
        } else {
          for (const auto& e : r.bad)
            std::cout << "bad  " << e.key << "  " << e.problem << (e.readonly_layer ? " (read-only layer: kept)" : "")
                      << "\n";
          std::cout << r.checked << " checked, " << r.good << " good, " << r.bad.size() << " bad (" << r.removed
                    << " removed";
          if (r.not_removed.count > 0) std::cout << ", " << r.not_removed.count << " could not be removed";
          std::cout << ")";
          if (r.other_format > 0) std::cout << ", " << r.other_format << " of another format (left alone)";
          if (r.older_versions > 0)
            std::cout << ", " << r.older_versions
                      << " good but of another version (never served; prune --older-versions removes them)";
          if (r.incomplete > 0)
            std::cout << ", " << r.incomplete << " incomplete (swept by prune after the grace period)";
          std::cout << "\n";
          for (const auto& f : r.driver_bad) std::cout << "bad  driver data " << f.id << "  " << printable(f.problem) << "\n";
          std::cout << r.driver_checked << " driver data folders checked, " << r.driver_bad.size() << " bad\n";
        }
        if (r.not_removed.count > 0)
          std::cerr << "vyre: error: " << r.not_removed.count << " bad entries are still there: "
                    << printable(r.not_removed.problem) << "\n";
        return r.bad.empty() && r.driver_bad.empty() ? kOk : kFailure;
      });
  verify->add_flag("--json", verify_o->json, "Print one JSON object");
  verify->add_flag("--keep", verify_o->keep, "Report bad entries without removing them");
}

// vyre cache prune [--max-bytes N] [--max-entries N] [--older-than D] [--older-versions] [--json]
void add_cache_prune(CLI::App* cache_cmd, Action& action) {
  struct PruneOptions {
    std::string max_bytes;
    std::string max_entries;
    std::string older_than;
    bool older_versions = false;
    bool json = false;
  };
  auto prune_o = std::make_shared<PruneOptions>();
  auto* prune = cache_subcommand(
      cache_cmd, action, "prune",
      "Evict least recently used entries down to the bounds (the configured ones by default) and sweep orphans",
      [prune_o](aot::Cache& cache) {
        aot::PruneOptions options;
        auto usage_error = [](const std::string& message) {
          std::cerr << "vyre: error: " << message << "\n";
          return kUsage;
        };
        if (!prune_o->max_bytes.empty() && !(options.max_bytes = aot::units::parse_size(prune_o->max_bytes)))
          return usage_error("--max-bytes '" + prune_o->max_bytes + "' is not a size (e.g. 500M, 2G, 1000000)");
        if (!prune_o->max_entries.empty() && !(options.max_entries = aot::units::parse_count(prune_o->max_entries)))
          return usage_error("--max-entries '" + prune_o->max_entries + "' is not a count");
        if (!prune_o->older_than.empty() && !(options.older_than = aot::units::parse_duration(prune_o->older_than)))
          return usage_error("--older-than '" + prune_o->older_than + "' is not a duration (e.g. 30d, 12h, 90m, 60s)");
        options.older_versions = prune_o->older_versions;
        return writing_to_the_cache(cache, [&] {
          aot::PruneReport r = cache.prune(options);
          if (prune_o->json)
            print_json_text(aot::to_json(r));
          else
            std::cout << (prune_o->older_versions
                              ? std::to_string(r.older_versions_removed) + " of other versions removed, "
                              : std::string())
                      << r.evicted << " evicted and " << r.driver_evicted << " driver data folders ("
                      << aot::units::format_size(r.bytes_freed) << "), " << r.swept << " orphaned files swept; "
                      << r.entries << " entries and driver data (" << aot::units::format_size(r.bytes) << ") left\n";
          return report_not_removed(r.not_removed);
        });
      });
  prune->add_option("--max-bytes", prune_o->max_bytes, "Evict down to this size (e.g. 500M, 2G; 0 empties)");
  prune->add_option("--max-entries", prune_o->max_entries, "Evict down to this many entries");
  prune->add_option("--older-than", prune_o->older_than, "Evict entries unused for longer (e.g. 30d, 12h)");
  prune->add_flag("--older-versions", prune_o->older_versions,
                  "Also remove every entry another vyre version or lowering version wrote (never served by this one)");
  prune->add_flag("--json", prune_o->json, "Print one JSON object");
}

// vyre cache clear
void add_cache_clear(CLI::App* cache_cmd, Action& action) {
  cache_subcommand(cache_cmd, action, "clear", "Remove every entry of the writable directory", [](aot::Cache& cache) {
    aot::NotRemoved left;
    uint64_t folders = 0;
    const uint64_t removed = cache.clear(&left, &folders);
    std::cout << removed << " entries and " << folders << " driver data folders removed";
    if (left.count > 0) std::cout << ", " << left.count << " could not be removed";
    std::cout << "\n";
    return report_not_removed(left);
  });
}

// vyre cache export DIR
void add_cache_export(CLI::App* cache_cmd, Action& action) {
  auto export_dir = std::make_shared<std::string>();
  auto* exp = cache_subcommand(cache_cmd, action, "export", "Copy every verified entry into DIR (a layer to ship)",
                               [export_dir](aot::Cache& cache) {
                                 auto r = cache.export_to(*export_dir);
                                 std::cout << format_transfer(r);
                                 return kOk;
                               });
  exp->add_option("dir", *export_dir, "Destination directory (created if absent)")->required();
}

// vyre cache import DIR
void add_cache_import(CLI::App* cache_cmd, Action& action) {
  auto import_dir = std::make_shared<std::string>();
  auto device = std::make_shared<std::string>();
  auto no_driver = std::make_shared<bool>(false);
  auto* imp = cache_subcommand(
      cache_cmd, action, "import", "Copy every verified entry of DIR, and this device's driver data, into the cache",
      [import_dir, device, no_driver](aot::Cache& cache) {
        std::optional<std::string> fingerprint;
        if (!*no_driver) fingerprint = local_device_fingerprint(*device);
        auto r = cache.import_from(*import_dir, fingerprint);
        std::cout << format_transfer(r);
        return r.skipped_bad == 0 && r.refused_unsigned == 0 ? kOk : kFailure;
      });
  imp->add_option("dir", *import_dir, "Source directory (an export, or another cache directory)")->required();
  imp->add_option("--device-fingerprint", *device,
                  "Import the driver data of this full fingerprint (default: the local adapter's, from `vyre devices`)");
  imp->add_flag("--no-driver-data", *no_driver, "Import the WGSL entries only");
}

}  // namespace vyre::cli
