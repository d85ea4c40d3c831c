// The remote tier on a real Redis Cluster (redis-server --cluster-enabled
// yes, redis-cli --cluster create) on loopback: entries spread over the
// slots of three masters, ASK and MOVED redirections after a slot moves, a
// master killed and its replica promoted.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>

#include "aot/remote/redis_cluster.hpp"
#include "aot/remote/remote_tier.hpp"
#include "support/aot_fixtures.hpp"
#include "support/redis_servers.hpp"
#include "support/remote_fixtures.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"

namespace {

using namespace std::chrono_literals;
using vyre::aot::Cache;
using vyre::aot::CacheOptions;
using vyre::test::RedisClusterProcesses;
using vyre::test::synthetic_parts;
using vyre::test::synthetic_wgsl;
using vyre::test::TempDir;
using vyre::test::remote_machine;
using vyre::test::checked_lookup;
using vyre::test::remote_entry_key;




std::string node_id(const vyre::test::RedisProcess& node) {
  return vyre::test::redis_command(node.endpoint(), {"CLUSTER", "MYID"})->text;
}

TEST(AotCluster, TwoMachinesShareAThreeMasterCluster) {
  VYRE_REQUIRE_REDIS();
  TempDir tmp;
  RedisClusterProcesses cluster(tmp / "cluster", 3, 0);
  constexpr int kPrograms = 30;
  std::set<int> masters;
  for (int p = 0; p < kPrograms; ++p) {
    const std::string key = remote_entry_key("p" + std::to_string(p));
    // The client's slot is the server's.
    auto server_slot = vyre::test::redis_command(cluster.nodes()[0]->endpoint(), {"CLUSTER", "KEYSLOT", key});
    ASSERT_EQ(server_slot->integer, vyre::aot::cluster_key_slot(key));
    masters.insert(cluster.master_of(vyre::aot::cluster_key_slot(key))->port());
  }
  EXPECT_EQ(masters.size(), 3u) << "30 programs spread over the three masters' slots";
  {
    Cache first(remote_machine(tmp / "a", cluster.url()));
    int lowered = 0;
    for (int p = 0; p < kPrograms; ++p) checked_lookup(first, "p" + std::to_string(p), &lowered);
    EXPECT_EQ(lowered, kPrograms);
    EXPECT_EQ(first.stats().remote.writes, static_cast<uint64_t>(kPrograms));
  }
  Cache second(remote_machine(tmp / "b", cluster.url()));
  int lowered = 0;
  for (int p = 0; p < kPrograms; ++p) EXPECT_TRUE(checked_lookup(second, "p" + std::to_string(p), &lowered).cache_hit);
  EXPECT_EQ(lowered, 0);
  auto stats = second.stats();
  EXPECT_EQ(stats.remote.hits, static_cast<uint64_t>(kPrograms));
  EXPECT_EQ(stats.entries, static_cast<uint64_t>(kPrograms));
  auto pings = second.remote_ping();
  EXPECT_EQ(pings.size(), 3u);
  for (const auto& p : pings) EXPECT_TRUE(p.ok) << p.node << ": " << p.problem;
}

TEST(AotCluster, FollowsAskAndMovedWhenASlotMigrates) {
  VYRE_REQUIRE_REDIS();
  TempDir tmp;
  RedisClusterProcesses cluster(tmp / "cluster", 3, 0);
  { Cache writer(remote_machine(tmp / "w", cluster.url())); checked_lookup(writer, "moving"); }
  Cache reader(remote_machine(tmp / "r", cluster.url()));
  checked_lookup(reader, "unrelated");  // the reader has its slot map now

  const std::string key = remote_entry_key("moving");
  const int slot = vyre::aot::cluster_key_slot(key);
  vyre::test::RedisProcess* source = cluster.master_of(slot);
  vyre::test::RedisProcess* target = nullptr;
  for (auto& n : cluster.nodes())
    if (n.get() != source) target = n.get();
  ASSERT_NE(source, nullptr);
  const std::string source_id = node_id(*source), target_id = node_id(*target);
  auto cmd = [](vyre::test::RedisProcess* at, std::vector<std::string> args) {
    auto r = vyre::test::redis_command(at->endpoint(), args);
    ASSERT_TRUE(r) << r.failure().message;
    ASSERT_FALSE(r->is_error()) << args[0] << " " << args[1] << ": " << r->text;
  };
  // Mid-migration: the key is on the target already, the source answers ASK.
  cmd(target, {"CLUSTER", "SETSLOT", std::to_string(slot), "IMPORTING", source_id});
  cmd(source, {"CLUSTER", "SETSLOT", std::to_string(slot), "MIGRATING", target_id});
  cmd(source, {"MIGRATE", "127.0.0.1", std::to_string(target->port()), "", "0", "5000", "KEYS", key});
  auto asked = vyre::test::redis_command(source->endpoint(), {"GET", key});
  ASSERT_TRUE(asked->is_error());
  ASSERT_TRUE(asked->text.starts_with("ASK ")) << asked->text;
  {
    Cache fresh(remote_machine(tmp / "r2", cluster.url()));
    EXPECT_TRUE(checked_lookup(fresh, "moving").cache_hit) << "followed ASK";
  }
  // Done: every node says the target owns the slot; the reader's map is stale and gets MOVED.
  for (auto& n : cluster.nodes()) cmd(n.get(), {"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", target_id});
  auto moved = vyre::test::redis_command(source->endpoint(), {"GET", key});
  ASSERT_TRUE(moved->is_error());
  ASSERT_TRUE(moved->text.starts_with("MOVED ")) << moved->text;
  int lowered = 0;
  EXPECT_TRUE(checked_lookup(reader, "moving", &lowered).cache_hit) << "followed MOVED";
  EXPECT_EQ(lowered, 0);
  EXPECT_EQ(reader.stats().remote.errors, 0u);
}

TEST(AotCluster, AMasterKilledAndItsReplicaPromotedFailsNoDispatch) {
  VYRE_REQUIRE_REDIS();
  TempDir tmp;
  RedisClusterProcesses cluster(tmp / "cluster", 3, 1);
  constexpr int kPrograms = 30;
  {
    Cache writer(remote_machine(tmp / "w", cluster.url()));
    for (int p = 0; p < kPrograms; ++p) checked_lookup(writer, "p" + std::to_string(p));
  }
  const int slot = vyre::aot::cluster_key_slot(remote_entry_key("p0"));
  vyre::test::RedisProcess* master = cluster.master_of(slot);
  ASSERT_NE(master, nullptr);
  // Every write reached the replica before the master goes (3 s at most).
  for (int i = 0; i < 150; ++i) {
    auto info = vyre::test::redis_command(master->endpoint(), {"INFO", "replication"})->text;
    auto field = [&](const std::string& name) {
      size_t at = info.find(name);
      return at == std::string::npos ? -1L : std::atol(info.c_str() + at + name.size());
    };
    if (field("offset=") >= 0 && field("offset=") == field("master_repl_offset:")) break;
    std::this_thread::sleep_for(20ms);
  }

  Cache reader(remote_machine(tmp / "r", cluster.url()));
  checked_lookup(reader, "warm-up");
  master->kill();
  // Lookups go on during the failover (node timeout 1 s): never a failure, never a long stall.
  double worst = 0;
  bool served_again = false;
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0; round < 400 && !served_again; ++round) {
    const auto t = std::chrono::steady_clock::now();
    {
      Cache fresh(remote_machine(tmp / "fresh", cluster.url()));
      served_again = checked_lookup(fresh, "p0").cache_hit;
    }
    worst = std::max(worst, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count());
    if (!served_again) std::this_thread::sleep_for(25ms);
    std::filesystem::remove_all(tmp / "fresh");
  }
  if (!served_again) {
    vyre::test::RedisProcess* now = cluster.master_of(slot);
    ADD_FAILURE() << "slot " << slot << " master now " << (now ? now->port() : -1) << " was " << master->port()
                  << "; key there: "
                  << (now ? vyre::test::redis_command(now->endpoint(), {"EXISTS", remote_entry_key("p0")})->integer : -1);
  }
  const double recovery_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(served_again) << "the promoted replica serves the slot";
  EXPECT_LT(worst, 1500.0) << "a lookup during the failover waits at most a few timeouts";
  std::printf("[cluster failover] entry served again %.0f ms after its master was killed\n", recovery_ms);
  // The reader that knew the dead master finds the new one too.
  int lowered = 0;
  for (int round = 0; round < 100; ++round) {
    if (checked_lookup(reader, "p" + std::to_string(round % kPrograms), &lowered).cache_hit && round >= kPrograms) break;
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(checked_lookup(reader, "p0").cache_hit);
}

}  // namespace
