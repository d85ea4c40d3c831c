#include "aot/remote/redis_cluster.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <thread>

#include "util/log.hpp"

namespace vyre::aot {

uint16_t crc16_xmodem(std::string_view bytes) {
  uint16_t crc = 0;
  for (unsigned char byte : bytes) {
    crc ^= static_cast<uint16_t>(byte) << 8;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021) : static_cast<uint16_t>(crc << 1);
  }
  return crc;
}

int cluster_key_slot(std::string_view key) {
  if (size_t open = key.find('{'); open != std::string_view::npos) {
    size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) key = key.substr(open + 1, close - open - 1);
  }
  return crc16_xmodem(key) % kRedisClusterSlots;
}

namespace {

// "MOVED 3999 127.0.0.1:6381" / "ASK 3999 127.0.0.1:6381": the node.
std::optional<RedisEndpoint> redirect_target(std::string_view error) {
  size_t space = error.rfind(' ');
  if (space == std::string_view::npos) return std::nullopt;
  std::string_view node = error.substr(space + 1);
  size_t colon = node.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  int port = 0;
  auto [end, ec] = std::from_chars(node.data() + colon + 1, node.data() + node.size(), port);
  if (ec != std::errc() || port <= 0) return std::nullopt;
  RedisEndpoint e;
  e.host = std::string(node.substr(0, colon));
  e.port = port;
  return e;
}

std::optional<RedisEndpoint> node_of(const RedisReply& entry, const RedisEndpoint& asked) {
  if (entry.type != RedisReply::Type::array || entry.elements.size() < 2) return std::nullopt;
  RedisEndpoint e;
  e.host = entry.elements[0].text;
  // An empty or "?" host means "the address you reached me on".
  if (e.host.empty() || e.host == "?") e.host = asked.host;
  if (entry.elements[1].type != RedisReply::Type::integer) return std::nullopt;
  e.port = static_cast<int>(entry.elements[1].integer);
  return e;
}

bool same(const RedisEndpoint& a, const RedisEndpoint& b) { return a.host == b.host && a.port == b.port; }

}  // namespace

RedisCluster::RedisCluster(std::vector<RedisEndpoint> seeds, RedisTimeouts timeouts)
    : seeds_(std::move(seeds)), timeouts_(timeouts) {
  slot_master_.fill(-1);
}

RedisConnection& RedisCluster::connection_locked(const RedisEndpoint& endpoint) {
  auto& slot = connections_[endpoint.text()];
  if (!slot) slot = std::make_unique<RedisConnection>(endpoint, timeouts_);
  return *slot;
}

sys::Result<void> RedisCluster::refresh_locked() {
  std::vector<RedisEndpoint> candidates = masters_;
  candidates.insert(candidates.end(), seeds_.begin(), seeds_.end());
  sys::Failure last = sys::failure(sys::Fault::io, "no cluster node to ask", ECONNREFUSED);
  for (const auto& candidate : candidates) {
    auto reply = connection_locked(candidate).command({"CLUSTER", "SLOTS"});
    if (!reply) {
      last = reply.failure();
      continue;
    }
    if (reply->type != RedisReply::Type::array || reply->elements.empty()) {
      last = sys::failure(sys::Fault::io, candidate.text() + " has no slot map (" +
                                              (reply->is_error() ? reply->text : "empty") + "): is it a cluster node?",
                          EPROTO);
      continue;
    }
    std::array<int, kRedisClusterSlots> map{};
    map.fill(-1);
    std::vector<RedisEndpoint> masters;
    std::vector<Node> nodes;
    for (const auto& range : reply->elements) {
      if (range.type != RedisReply::Type::array || range.elements.size() < 3) continue;
      const long long first = range.elements[0].integer, last_slot = range.elements[1].integer;
      auto master = node_of(range.elements[2], candidate);
      if (!master || first < 0 || last_slot >= kRedisClusterSlots || first > last_slot) continue;
      int index = -1;
      for (size_t i = 0; i < masters.size(); ++i)
        if (same(masters[i], *master)) index = static_cast<int>(i);
      if (index < 0) {
        index = static_cast<int>(masters.size());
        masters.push_back(*master);
        nodes.push_back(Node{*master, true});
      }
      for (long long s = first; s <= last_slot; ++s) map[static_cast<size_t>(s)] = index;
      for (size_t r = 3; r < range.elements.size(); ++r)
        if (auto replica = node_of(range.elements[r], candidate)) {
          bool known = false;
          for (const auto& n : nodes) known = known || same(n.endpoint, *replica);
          if (!known) nodes.push_back(Node{*replica, false});
        }
    }
    if (masters.empty()) continue;
    slot_master_ = map;
    std::stable_partition(nodes.begin(), nodes.end(), [](const Node& n) { return n.master; });
    nodes_ = std::move(nodes);
    masters_ = std::move(masters);
    map_loaded_ = true;
    map_stale_ = false;
    log::debug("AOT remote: cluster slot map loaded from {} ({} masters)", candidate.text(), masters_.size());
    return {};
  }
  return last;
}

sys::Result<RedisReply> RedisCluster::run(std::string_view key, const std::vector<std::string>& args) {
  std::lock_guard lock(mutex_);
  const auto deadline = std::chrono::steady_clock::now() + timeouts_.connect + 2 * timeouts_.operation;
  if (!map_loaded_ || map_stale_) {
    auto refreshed = refresh_locked();
    if (!refreshed && !map_loaded_) return refreshed.failure();
  }
  const int slot = cluster_key_slot(key);
  std::optional<RedisEndpoint> target;
  bool asking = false;
  sys::Failure last = sys::failure(sys::Fault::io, "cluster: too many redirections", EAGAIN);
  // Bounded: a MOVED, an ASK, a reload after a dead node, a retry.
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (attempt > 0 && std::chrono::steady_clock::now() > deadline) break;
    if (!target) {
      const int index = slot_master_[static_cast<size_t>(slot)];
      if (index < 0)
        return sys::failure(sys::Fault::io, "cluster: no node serves hash slot " + std::to_string(slot), EHOSTUNREACH);
      target = masters_[static_cast<size_t>(index)];
    }
    RedisConnection& connection = connection_locked(*target);
    sys::Result<RedisReply> reply = sys::failure(sys::Fault::io, "", 0);
    if (asking) {
      auto replies = connection.pipeline({{"ASKING"}, args});
      reply = replies ? sys::Result<RedisReply>(std::move(replies->back())) : sys::Result<RedisReply>(replies.failure());
    } else {
      reply = connection.command(args);
    }
    asking = false;
    if (!reply) {
      last = reply.failure();
      if (is_timeout(last)) return last;  // the time is spent: another node would not answer in it
      // A node that cannot be reached (a master killed): reload the map from another.
      map_stale_ = true;
      if (!refresh_locked()) return last;
      target.reset();
      continue;
    }
    if (reply->is_error()) {
      const std::string& error = reply->text;
      if (error.starts_with("MOVED ")) {
        if (auto moved = redirect_target(error)) {
          target = moved;
          map_stale_ = true;  // a failover or resharding: reload before the next command
          continue;
        }
      } else if (error.starts_with("ASK ")) {
        if (auto ask = redirect_target(error)) {
          target = ask;
          asking = true;
          continue;
        }
      } else if (error.starts_with("TRYAGAIN") || error.starts_with("CLUSTERDOWN")) {
        last = sys::failure(sys::Fault::io, "cluster: " + error, EAGAIN);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        map_stale_ = true;
        (void)refresh_locked();
        target.reset();
        continue;
      }
    }
    return reply;
  }
  return last;
}

std::vector<RedisNodePing> RedisCluster::ping() {
  std::lock_guard lock(mutex_);
  (void)refresh_locked();
  std::vector<RedisNodePing> out;
  std::vector<Node> nodes = nodes_;
  if (nodes.empty())
    for (const auto& s : seeds_) nodes.push_back(Node{s, true});
  out.reserve(nodes.size());
  for (const auto& node : nodes)
    out.push_back(ping_node(connection_locked(node.endpoint), node.master ? "master" : "replica"));
  return out;
}

}  // namespace vyre::aot
