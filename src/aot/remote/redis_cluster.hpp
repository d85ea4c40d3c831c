// Redis Cluster, spoken directly: a key's hash slot is CRC16 of the key (or
// of its {hash tag}) modulo 16384; the slot map comes from CLUSTER SLOTS;
// MOVED updates it (and asks for a fresh map: a failover or resharding moved
// slots), ASK sends one command to the importing node after ASKING; a node
// that cannot be reached makes the client reload the map from another node.
// Every command ends within a bounded number of attempts and the deadline.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "aot/remote/redis_client.hpp"

namespace vyre::aot {

inline constexpr int kRedisClusterSlots = 16384;

// CRC16-CCITT (XModem), as Redis Cluster's key hashing defines it.
uint16_t crc16_xmodem(std::string_view bytes);
// The hash slot of a key: of the text between the first `{` and the next
// `}` when that is not empty, else of the whole key.
int cluster_key_slot(std::string_view key);

class RedisCluster final : public RedisTarget {
 public:
  RedisCluster(std::vector<RedisEndpoint> seeds, RedisTimeouts timeouts);
  sys::Result<RedisReply> run(std::string_view key, const std::vector<std::string>& args) override;
  // Every node the map names (masters and replicas), or the seeds when no
  // map could be loaded.
  std::vector<RedisNodePing> ping() override;

 private:
  struct Node {
    RedisEndpoint endpoint;
    bool master = true;
  };
  // Loads the slot map from the first node that answers (known masters,
  // then the seeds).
  sys::Result<void> refresh_locked();
  RedisConnection& connection_locked(const RedisEndpoint& endpoint);

  std::vector<RedisEndpoint> seeds_;
  RedisTimeouts timeouts_;
  std::mutex mutex_;
  bool map_loaded_ = false;
  bool map_stale_ = false;
  std::array<int, kRedisClusterSlots> slot_master_{};  // index into masters_, -1: unknown
  std::vector<Node> nodes_;                            // from the last map, masters first
  std::vector<RedisEndpoint> masters_;
  std::map<std::string, std::unique_ptr<RedisConnection>> connections_;
};

}  // namespace vyre::aot
