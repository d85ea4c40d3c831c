// vyre cache ...: inspect and maintain the AOT specialization cache
// (docs/cache.md): stats, zero-stats, ls, show, verify, prune, clear,
// export, import, explain, warm.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "cache_output.hpp"
#include "cli.hpp"
#include "progress.hpp"
#include "vyre/aot.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"

namespace vyre::cli {
namespace {

// The fingerprint lookups are keyed by: --fingerprint, else the override
// setting, else the local adapter's (opening the GPU backend).
std::string resolve_fingerprint(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* v = std::getenv("VYRE_BACKEND_FINGERPRINT_OVERRIDE"); v != nullptr && *v != '\0') return v;
  try {
    return gpu::Backend().fingerprint();
  } catch (const Error& e) {
    throw Error(e.kind(), std::string(e.what()) +
                              "\n(the local adapter gives the fingerprint; pass --fingerprint FP to name one, for "
                              "example a target machine's from `vyre devices --json`)");
  }
}

std::string resolve_key(const aot::Cache& cache, const std::string& given) {
  if (aot::is_valid_key(given)) return given;
  // A unique prefix of at least four hex digits, as in git.
  if (given.size() < 4 || given.size() > 64 ||
      !std::all_of(given.begin(), given.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }))
    throw Error(ErrorKind::invalid_input,
                "'" + given + "' is not a cache key (64 lowercase hex digits, or a unique prefix of at least 4)");
  std::string found;
  for (const auto& e : cache.list()) {
    if (!e.key.starts_with(given) || e.key == found) continue;
    if (!found.empty()) throw Error(ErrorKind::invalid_input, "key prefix '" + given + "' is ambiguous");
    found = e.key;
  }
  if (found.empty()) throw Error(ErrorKind::invalid_input, "no cache entry has a key starting with '" + given + "'");
  return found;
}

void print_json(const nlohmann::json& j) { std::cout << j.dump() << "\n"; }

// Adds a subcommand whose body runs with the cache from the environment.
template <class Body>
CLI::App* subcommand(CLI::App* parent, Action& action, const std::string& name, const std::string& help, Body body) {
  auto* cmd = parent->add_subcommand(name, help);
  cmd->callback([&action, body] {
    action = [body] {
      aot::Cache cache = aot::Cache::from_environment();
      return body(cache);
    };
  });
  return cmd;
}

}  // namespace

void add_cache(CLI::App& app, Action& action) {
  auto* cache_cmd = app.add_subcommand("cache", "Inspect and maintain the AOT specialization cache (docs/cache.md)");
  cache_cmd->require_subcommand(1);
  cache_cmd->footer(
      "The cache lives in $VYRE_AOT_CACHE_DIR, else $XDG_CACHE_HOME/vyre/aot, else ~/.cache/vyre/aot; "
      "settings: docs/configuration.md.");

  // ---- stats, zero-stats ----
  auto json_stats = std::make_shared<bool>(false);
  auto* stats = subcommand(cache_cmd, action, "stats", "Counters of every process that used the cache, and its size",
                           [json_stats](aot::Cache& cache) {
                             aot::CacheStats s = cache.stats();
                             if (*json_stats) {
                               nlohmann::json j = to_json(s);
                               j["directory"] = cache.directory() ? cache.directory()->string() : "";
                               j["max_bytes"] = cache.options().max_bytes;
                               j["max_entries"] = cache.options().max_entries;
                               print_json(j);
                             } else {
                               std::cout << format_stats(s, cache);
                             }
                             return kOk;
                           });
  stats->add_flag("--json", *json_stats, "Print one JSON object");

  subcommand(cache_cmd, action, "zero-stats", "Reset the counters (entries stay)", [](aot::Cache& cache) {
    cache.zero_stats();
    return kOk;
  });

  // ---- ls ----
  auto json_ls = std::make_shared<bool>(false);
  auto* ls = subcommand(cache_cmd, action, "ls", "List entries: key, program, size, age, state, fingerprint",
                        [json_ls](aot::Cache& cache) {
                          auto entries = cache.list();
                          std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
                            return a.last_used_unix_ms > b.last_used_unix_ms;
                          });
                          if (*json_ls) {
                            nlohmann::json j = nlohmann::json::array();
                            for (const auto& e : entries) j.push_back(to_json(e));
                            print_json(j);
                          } else {
                            std::cout << format_entry_table(entries);
                          }
                          return kOk;
                        });
  ls->add_flag("--json", *json_ls, "Print a JSON array of entries");

  // ---- show ----
  struct ShowOptions {
    std::string key;
    bool json = false;
    bool wgsl = false;
  };
  auto show_o = std::make_shared<ShowOptions>();
  auto* show = subcommand(cache_cmd, action, "show", "Show one entry, verified (its WGSL with --wgsl)",
                          [show_o](aot::Cache& cache) {
                            std::string key = resolve_key(cache, show_o->key);
                            std::string wgsl;
                            auto entry = cache.show(key, &wgsl);
                            if (!entry) throw Error(ErrorKind::invalid_input, "no cache entry " + key);
                            if (show_o->wgsl && entry->state == aot::EntryState::ok)
                              std::cout << wgsl;
                            else if (show_o->json)
                              print_json(to_json(*entry));
                            else
                              std::cout << format_entry(*entry);
                            return entry->state == aot::EntryState::ok ? kOk : kFailure;
                          });
  show->add_option("key", show_o->key, "Cache key or a unique prefix of it")->required();
  show->add_flag("--json", show_o->json, "Print one JSON object");
  show->add_flag("--wgsl", show_o->wgsl, "Print the entry's WGSL only");

  // ---- verify ----
  struct VerifyOptions {
    bool json = false;
    bool keep = false;
  };
  auto verify_o = std::make_shared<VerifyOptions>();
  auto* verify = subcommand(
      cache_cmd, action, "verify", "Recompute every entry's digest; report and remove bad entries (exit 1 if any)",
      [verify_o](aot::Cache& cache) {
        aot::VerifyReport r = cache.verify(!verify_o->keep);
        if (verify_o->json) {
          print_json(to_json(r));
        } else {
          for (const auto& e : r.bad)
            std::cout << "bad  " << e.key << "  " << e.problem << (e.readonly_layer ? " (read-only layer: kept)" : "")
                      << "\n";
          std::cout << r.checked << " checked, " << r.good << " good, " << r.bad.size() << " bad (" << r.removed
                    << " removed)";
          if (r.other_format > 0) std::cout << ", " << r.other_format << " of another format (left alone)";
          if (r.incomplete > 0) std::cout << ", " << r.incomplete << " incomplete (swept by prune after the grace period)";
          std::cout << "\n";
        }
        return r.bad.empty() ? kOk : kFailure;
      });
  verify->add_flag("--json", verify_o->json, "Print one JSON object");
  verify->add_flag("--keep", verify_o->keep, "Report bad entries without removing them");

  // ---- prune ----
  struct PruneOptions {
    std::string max_bytes;
    std::string max_entries;
    std::string older_than;
    bool json = false;
  };
  auto prune_o = std::make_shared<PruneOptions>();
  auto* prune = subcommand(
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
        aot::PruneReport r = cache.prune(options);
        if (prune_o->json)
          print_json(to_json(r));
        else
          std::cout << r.evicted << " evicted (" << aot::units::format_size(r.bytes_freed) << "), " << r.swept
                    << " orphaned files swept; " << r.entries << " entries (" << aot::units::format_size(r.bytes) << ") left\n";
        return kOk;
      });
  prune->add_option("--max-bytes", prune_o->max_bytes, "Evict down to this size (e.g. 500M, 2G; 0 empties)");
  prune->add_option("--max-entries", prune_o->max_entries, "Evict down to this many entries");
  prune->add_option("--older-than", prune_o->older_than, "Evict entries unused for longer (e.g. 30d, 12h)");
  prune->add_flag("--json", prune_o->json, "Print one JSON object");

  // ---- clear ----
  subcommand(cache_cmd, action, "clear", "Remove every entry of the writable directory", [](aot::Cache& cache) {
    std::cout << cache.clear() << " entries removed\n";
    return kOk;
  });

  // ---- export, import ----
  auto export_dir = std::make_shared<std::string>();
  auto* exp = subcommand(cache_cmd, action, "export", "Copy every verified entry into DIR (a layer to ship)",
                         [export_dir](aot::Cache& cache) {
                           auto r = cache.export_to(*export_dir);
                           std::cout << r.copied << " copied, " << r.skipped_present << " already there, "
                                     << r.skipped_bad << " bad entries skipped\n";
                           return kOk;
                         });
  exp->add_option("dir", *export_dir, "Destination directory (created if absent)")->required();
  auto import_dir = std::make_shared<std::string>();
  auto* imp = subcommand(cache_cmd, action, "import", "Copy every verified entry of DIR into the cache",
                         [import_dir](aot::Cache& cache) {
                           auto r = cache.import_from(*import_dir);
                           std::cout << r.copied << " copied, " << r.skipped_present << " already there, "
                                     << r.skipped_bad << " bad entries skipped\n";
                           return r.skipped_bad == 0 ? kOk : kFailure;
                         });
  imp->add_option("dir", *import_dir, "Source directory (an export, or another cache directory)")->required();

  // ---- explain ----
  struct ExplainOptions {
    std::string file;
    std::string fingerprint;
    ConfigOptions config;
    bool json = false;
  };
  auto explain_o = std::make_shared<ExplainOptions>();
  auto* explain = subcommand(
      cache_cmd, action, "explain", "Print each component of a program's key and its hash; on a miss, what differs",
      [explain_o](aot::Cache& cache) {
        const Program program = load_program(explain_o->file);
        const DispatchConfig config = explain_o->config.to_config();
        const auto parts = aot::key_parts(program, resolve_fingerprint(explain_o->fingerprint), config);
        aot::Explanation x = cache.explain(parts);
        if (explain_o->json)
          print_json(to_json(x));
        else
          std::cout << format_explanation(x);
        return kOk;
      });
  explain->add_option("program", explain_o->file, "Program file (JSON; - reads stdin)")->required();
  explain->add_option("--fingerprint", explain_o->fingerprint, "Backend fingerprint (default: the local adapter's)");
  add_config_options(explain, explain_o->config);
  explain->add_flag("--json", explain_o->json, "Print one JSON object");

  // ---- warm ----
  struct WarmOptions {
    std::vector<std::string> files;
    std::string fingerprint;
    ConfigOptions config;
  };
  auto warm_o = std::make_shared<WarmOptions>();
  auto* warm = subcommand(
      cache_cmd, action, "warm", "Lower programs into the cache without running them (for this or a target machine)",
      [warm_o](aot::Cache& cache) {
        const DispatchConfig config = warm_o->config.to_config();
        const std::string fingerprint = resolve_fingerprint(warm_o->fingerprint);
        if (!cache.directory())
          throw Error(ErrorKind::io, "no writable AOT cache directory to warm: set VYRE_AOT_CACHE_DIR");
        ProgressBar progress(warm_o->files.size());
        size_t hits = 0, lowered = 0, failed = 0;
        double lower_ms = 0;
        for (size_t i = 0; i < warm_o->files.size(); ++i) {
          const std::string& file = warm_o->files[i];
          progress.update(i, file);
          try {
            const Program program = load_program(file);
            aot::Artifact a = cache.load_or_compile(program, fingerprint, config);
            (a.cache_hit ? hits : lowered) += 1;
            lower_ms += a.lower_ms;
            progress.clear();
            std::cout << (a.cache_hit ? "cached   " : "lowered  ") << a.key.substr(0, 16) << "  " << file << "\n";
          } catch (const Error& e) {
            // Report and go on with the other programs.
            ++failed;
            progress.clear();
            std::istringstream lines(e.what());
            for (std::string line; std::getline(lines, line);) std::cerr << "vyre: " << file << ": " << line << "\n";
          }
        }
        progress.update(warm_o->files.size(), "done");
        progress.clear();
        cache.flush();
        std::cout << warm_o->files.size() << " programs: " << lowered << " lowered, " << hits << " already cached, "
                  << failed << " failed; lowering took " << std::fixed << std::setprecision(1) << lower_ms << " ms\n";
        return failed == 0 ? kOk : kFailure;
      });
  warm->add_option("programs", warm_o->files, "Program files (JSON)")->required();
  warm->add_option("--fingerprint", warm_o->fingerprint, "Backend fingerprint (default: the local adapter's)");
  add_config_options(warm, warm_o->config);
}

}  // namespace vyre::cli
