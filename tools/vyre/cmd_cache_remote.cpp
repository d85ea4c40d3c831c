// vyre cache remote ping: whether the remote tier's server, or every node of
// its cluster, answers, and how fast.
#include <iomanip>
#include <iostream>

#include "cache_command.hpp"

namespace vyre::cli {

void add_cache_remote(CLI::App* cache_cmd, Action& action) {
  auto* remote = cache_cmd->add_subcommand("remote", "The remote tier (Redis, Redis Cluster: VYRE_AOT_REMOTE)");
  remote->require_subcommand(1);
  auto json = std::make_shared<bool>(false);
  auto* ping = cache_subcommand(
      remote, action, "ping", "PING the remote server or each cluster node", [json](aot::Cache& cache) {
        const auto pings = cache.remote_ping();
        if (pings.empty()) {
          std::cerr << "vyre: no remote tier: set VYRE_AOT_REMOTE (redis://HOST:PORT, redis+unix:///PATH or "
                       "redis-cluster://HOST:PORT,...; docs/configuration.md)\n";
          return kFailure;
        }
        bool all_ok = true;
        nlohmann::json nodes = nlohmann::json::array();
        for (const auto& p : pings) {
          all_ok = all_ok && p.ok;
          nodes.push_back({{"node", p.node}, {"role", p.role}, {"ok", p.ok}, {"ms", p.ms}, {"problem", p.problem}});
          if (!*json)
            std::cout << p.node << "  " << p.role << "  "
                      << (p.ok ? "ok" : "FAILED") << "  " << std::fixed << std::setprecision(2) << p.ms << " ms"
                      << (p.problem.empty() ? "" : "  " + p.problem) << "\n";
        }
        if (*json) print_json({{"ok", all_ok}, {"nodes", nodes}});
        return all_ok ? kOk : kFailure;
      });
  ping->add_flag("--json", *json, "Print one JSON object");
}

}  // namespace vyre::cli
