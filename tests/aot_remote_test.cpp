// The remote tier on one real redis-server (loopback, a random port): two
// machines sharing it, a fleet of processes, poisoned values, a server
// killed, paused and restarted, the CLI's view. Cluster: aot_cluster_test.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <thread>

#include "aot/entry/entry_frame.hpp"
#include "aot/remote/circuit_breaker.hpp"
#include "aot/remote/redis_cluster.hpp"
#include "support/aot_fixtures.hpp"
#include "support/aot_processes.hpp"
#include "support/redis_servers.hpp"
#include "support/remote_fixtures.hpp"
#include "support/signing_keys.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"

namespace {

using namespace std::chrono_literals;
using vyre::aot::Cache;
using vyre::aot::CacheOptions;
using vyre::test::RedisProcess;
using vyre::test::synthetic_parts;
using vyre::test::synthetic_wgsl;
using vyre::test::TempDir;
using vyre::test::spawn_to_files;
using vyre::test::remote_machine;
using vyre::test::checked_lookup;
using vyre::test::remote_entry_key;





double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// ---- no server needed -------------------------------------------------------

TEST(EntryFrame, DecodesOnlyExactFrames) {
  using vyre::aot::decode_entry_frame;
  using vyre::aot::encode_entry_frame;
  const std::string value = encode_entry_frame("wgsl", "meta", "text!");
  auto decoded = decode_entry_frame(value);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->kind, "wgsl");
  EXPECT_EQ(decoded->metadata, "meta");
  EXPECT_EQ(decoded->content, "text!");
  EXPECT_FALSE(decode_entry_frame(value.substr(0, value.size() - 1)));  // truncated
  EXPECT_FALSE(decode_entry_frame(value + "x"));                        // trailing bytes
  EXPECT_FALSE(decode_entry_frame("garbage"));
  EXPECT_FALSE(decode_entry_frame(""));
  EXPECT_EQ(decode_entry_frame("vyre-remote 2 wgsl 1 1\nab").failure().kind, vyre::sys::Fault::unsupported);
  EXPECT_EQ(decode_entry_frame("vyre-remote 1 wgsl 99999999 1\n").failure().kind, vyre::sys::Fault::too_large);
  EXPECT_FALSE(decode_entry_frame("vyre-remote 1 wgsl -1 1\nab"));
  // Only the encoder's spelling of a number (fuzz/corpus/cache_entry_fuzz/leading_zero.remote).
  EXPECT_FALSE(decode_entry_frame("vyre-remote 1 wgsl 01 1\nab"));
  EXPECT_FALSE(decode_entry_frame("vyre-remote 01 wgsl 1 1\nab"));
  EXPECT_FALSE(decode_entry_frame("vyre-remote 1 wgsl 1 1 \nab"));  // trailing space (trailing_space.remote)
  EXPECT_FALSE(decode_entry_frame("vyre-remote 1 wgsl 1 1\t\nab"));
  EXPECT_TRUE(decode_entry_frame("vyre-remote 1 wgsl 0 0\n"));
  EXPECT_FALSE(decode_entry_frame(std::string(200, 'v')));  // no header line within the bound
}

TEST(RedisClusterSlots, MatchRedisCluster) {
  using vyre::aot::cluster_key_slot;
  EXPECT_EQ(vyre::aot::crc16_xmodem("123456789"), 0x31C3);  // the specification's check value
  EXPECT_EQ(cluster_key_slot("foo"), 12182);
  EXPECT_EQ(cluster_key_slot("{user1000}.following"), cluster_key_slot("{user1000}.followers"));
  EXPECT_EQ(cluster_key_slot("{user1000}.following"), cluster_key_slot("user1000"));
  EXPECT_EQ(cluster_key_slot("foo{}{bar}"), vyre::aot::crc16_xmodem("foo{}{bar}") % 16384);  // empty tag: whole key
}

TEST(CircuitBreaker, OpensAfterFailuresAndLetsOneTrialThroughAfterTheCooldown) {
  vyre::aot::CircuitBreaker breaker(3, 50ms);
  using Change = vyre::aot::CircuitBreaker::Change;
  EXPECT_TRUE(breaker.allow());
  EXPECT_EQ(breaker.failure(), Change::none);
  EXPECT_EQ(breaker.failure(), Change::none);
  EXPECT_EQ(breaker.failure(), Change::opened);
  EXPECT_FALSE(breaker.allow());
  std::this_thread::sleep_for(60ms);
  EXPECT_TRUE(breaker.allow());   // the trial
  EXPECT_FALSE(breaker.allow());  // one at a time
  EXPECT_EQ(breaker.failure(), Change::none);
  EXPECT_FALSE(breaker.allow());  // another cooldown
  std::this_thread::sleep_for(60ms);
  EXPECT_TRUE(breaker.allow());
  EXPECT_EQ(breaker.success(), Change::closed);
  EXPECT_TRUE(breaker.allow());
}

TEST(AotRemote, ABadUrlLeavesTheCacheLocal) {
  TempDir home;
  auto options = remote_machine(home / "cache", "http://127.0.0.1:1");
  Cache cache(options);
  int lowered = 0;
  checked_lookup(cache, "a", &lowered);
  EXPECT_TRUE(checked_lookup(cache, "a", &lowered).cache_hit);
  EXPECT_EQ(lowered, 1);
  EXPECT_TRUE(cache.stats().remote_location.empty());
}

// ---- one server ---------------------------------------------------------------

TEST(AotRemote, TwoMachinesShareOneRedis) {
  VYRE_REQUIRE_REDIS();
  TempDir tmp;
  RedisProcess redis(tmp / "redis");
  constexpr int kPrograms = 30;
  {
    Cache first(remote_machine(tmp / "machine-a", redis.url()));
    int lowered = 0;
    for (int p = 0; p < kPrograms; ++p) EXPECT_FALSE(checked_lookup(first, "p" + std::to_string(p), &lowered).cache_hit);
    EXPECT_EQ(lowered, kPrograms);
    auto stats = first.stats();
    EXPECT_EQ(stats.remote.writes, static_cast<uint64_t>(kPrograms));
    EXPECT_EQ(stats.remote.misses, static_cast<uint64_t>(kPrograms));
  }
  // Another machine: its own home and local cache, the same Redis.
  Cache second(remote_machine(tmp / "machine-b", redis.url()));
  int lowered = 0;
  for (int p = 0; p < kPrograms; ++p) EXPECT_TRUE(checked_lookup(second, "p" + std::to_string(p), &lowered).cache_hit);
  EXPECT_EQ(lowered, 0) << "the second machine's first run lowers nothing";
  auto stats = second.stats();
  EXPECT_EQ(stats.remote.hits, static_cast<uint64_t>(kPrograms));
  EXPECT_EQ(stats.entries, static_cast<uint64_t>(kPrograms)) << "remote hits are backfilled into the local cache";
  EXPECT_EQ(stats.writes, static_cast<uint64_t>(kPrograms));
  // The next run is served from disk, without asking Redis.
  for (int p = 0; p < kPrograms; ++p) EXPECT_TRUE(checked_lookup(second, "p" + std::to_string(p), &lowered).cache_hit);
  stats = second.stats();
  EXPECT_EQ(stats.remote.hits, static_cast<uint64_t>(kPrograms));
  EXPECT_EQ(stats.local.hits, static_cast<uint64_t>(kPrograms));
  EXPECT_EQ(lowered, 0);
  EXPECT_EQ(second.verify(false).bad.size(), 0u);
}

// Real programs, real dispatches: the GPU worker checks every output against
// the reference interpreter (exit 3 when one is wrong).
TEST(AotRemote, TwoMachinesDispatchOnTheGpuThroughOneRedis) {
  VYRE_REQUIRE_REDIS();
  TempDir tmp;
  RedisProcess redis(tmp / "redis");
  auto run = [&](const std::string& home) {
    return vyre::test::run_process({VYRE_AOT_GPU_WORKER_PATH, "--programs", "10"},
                                   {{"VYRE_AOT_CACHE_DIR", (tmp / home).string()}, {"VYRE_AOT_REMOTE", redis.url()}});
  };
  auto first = run("machine-a");
  if (first.exit_code == 4) GTEST_SKIP() << "no GPU adapter: " << first.err;
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, "hits=0 misses=10\n");
  auto second = run("machine-b");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out, "hits=10 misses=0\n") << "the second machine lowers nothing";
  EXPECT_EQ(vyre::test::file_count(tmp / "machine-b"), 20u) << "its local cache was backfilled";
}

// A fleet of GPU processes with empty local caches: each program lowered
// about once, every output right.
TEST(AotRemote, AGpuFleetLowersEachProgramAboutOnce) {
  VYRE_REQUIRE_REDIS();
  TempDir tmp;
  RedisProcess redis(tmp / "redis");
  const int processes = 8, programs = vyre::test::stress_enabled() ? 50 : 30;
  const std::string start = vyre::test::start_line(1500);
  std::vector<pid_t> pids;
  for (int w = 0; w < processes; ++w) {
    const auto home = tmp / ("w" + std::to_string(w));
    std::filesystem::create_directories(home);
    pid_t pid = spawn_to_files({"/usr/bin/env", "VYRE_AOT_CACHE_DIR=" + (home / "cache").string(),
                                "VYRE_AOT_REMOTE=" + redis.url(), VYRE_AOT_GPU_WORKER_PATH, "--programs",
                                std::to_string(programs), "--start-at", start},
                               home / "out", home / "err");
    pids.push_back(pid);
  }
  long lowered = 0;
  for (int w = 0; w < processes; ++w) {
    const int code = vyre::test::wait_worker(pids[w]);
    const auto home = tmp / ("w" + std::to_string(w));
    if (code == 4) GTEST_SKIP() << "no GPU adapter";
    EXPECT_EQ(code, 0) << "worker " << w << ": " << vyre::test::read_file(home / "err");
    int hits = 0, misses = 0;
    std::sscanf(vyre::test::read_file(home / "out").c_str(), "hits=%d misses=%d", &hits, &misses);
    EXPECT_EQ(hits + misses, programs);
    lowered += misses;
  }
  std::printf("[gpu fleet] %d processes x %d programs: %ld lowerings fleet-wide (ideal %d)\n", processes, programs,
              lowered, programs);
  RecordProperty("gpu_fleet_lowerings", static_cast<int>(lowered));
  EXPECT_LE(lowered, programs + programs / 10);
}

TEST(AotRemote, UnixSocketDatabaseAndPrefix) {
  VYRE_REQUIRE_REDIS();
  TempDir tmp;
  RedisProcess redis(tmp / "redis", {}, 0, /*unix_socket=*/true);
  const std::string url = "redis+unix://" + redis.socket_path() + "?db=3";
  auto a = remote_machine(tmp / "a", url);
  a.remote->prefix = "team1:";
  { Cache cache(a); checked_lookup(cache, "x"); }
  vyre::aot::RedisConnection db3(redis.endpoint(), {}, 3);
  auto exists = db3.command({"EXISTS", "team1:wgsl:" + synthetic_parts("x").key()});
  ASSERT_TRUE(exists);
  EXPECT_EQ(exists->integer, 1);
  auto b = remote_machine(tmp / "b", url);
  b.remote->prefix = "team1:";
  Cache hit(b);
  EXPECT_TRUE(checked_lookup(hit, "x").cache_hit);
  auto c = remote_machine(tmp / "c", url);
  c.remote->prefix = "team2:";  // another namespace shares nothing
  Cache other(c);
  EXPECT_FALSE(checked_lookup(other, "x").cache_hit);
}

// The API takes any number of seconds; Redis gets at most 100 years, so
// the entry is published with an expiry rather than refused (or wrapped).
TEST(AotRemote, AnEndlessTtlIsHeldAtACentury) {
  VYRE_REQUIRE_REDIS();
  TempDir tmp;
  RedisProcess redis(tmp / "redis");
  auto options = remote_machine(tmp / "w", redis.url());
  options.remote->ttl = std::chrono::seconds::max();
  Cache cache(options);
  checked_lookup(cache, "forever");
  EXPECT_EQ(cache.stats().remote.writes, 1u);
  auto pttl = vyre::test::redis_command(redis.endpoint(), {"PTTL", remote_entry_key("forever")});
  ASSERT_TRUE(pttl);
  const int64_t century_ms = int64_t{36525} * 86400 * 1000;
  EXPECT_GT(pttl->integer, century_ms - 60'000);
  EXPECT_LE(pttl->integer, century_ms);
}

TEST(AotRemote, ReadOnlyModeLooksUpAndNeverPublishes) {
  VYRE_REQUIRE_REDIS();
  TempDir tmp;
  RedisProcess redis(tmp / "redis");
  { Cache writer(remote_machine(tmp / "w", redis.url())); checked_lookup(writer, "shared"); }
  auto options = remote_machine(tmp / "r", redis.url());
  options.remote->read_only = true;
  Cache reader(options);
  EXPECT_TRUE(checked_lookup(reader, "shared").cache_hit);
  EXPECT_FALSE(checked_lookup(reader, "mine").cache_hit);
  auto exists = vyre::test::redis_command(redis.endpoint(), {"EXISTS", remote_entry_key("mine")});
  EXPECT_EQ(exists->integer, 0);
  auto leases = vyre::test::redis_command(redis.endpoint(), {"KEYS", "vyre:aot:lease:*"});
  EXPECT_TRUE(leases->elements.empty());
  EXPECT_EQ(reader.stats().remote.writes, 0u);
}

TEST(AotRemote, PoisonedValuesAreRejectedAndNeverServed) {
  VYRE_REQUIRE_REDIS();
  TempDir tmp;
  RedisProcess redis(tmp / "redis");
  auto trusted = vyre::test::make_key_pair(tmp.path(), "ci");
  auto intruder = vyre::test::make_key_pair(tmp.path(), "intruder");
  auto set = [&](const std::string& key, const std::string& value) {
    auto r = vyre::test::redis_command(redis.endpoint(), {"SET", key, value});
    ASSERT_TRUE(r && !r->is_error());
  };
  auto get = [&](const std::string& key) { return vyre::test::redis_command(redis.endpoint(), {"GET", key})->text; };

  // Entries published by a writer without a key, and one signed by an untrusted key.
  {
    Cache unsigned_writer(remote_machine(tmp / "plain", redis.url()));
    for (const char* n : {"genuine", "other", "unsigned"}) checked_lookup(unsigned_writer, n);
    auto intruder_options = remote_machine(tmp / "intruder", redis.url());
    intruder_options.signing_key = intruder.private_pem;
    Cache intruder_writer(intruder_options);
    checked_lookup(intruder_writer, "by-intruder");
  }
  set(remote_entry_key("garbage"), "garbage");
  set(remote_entry_key("moved"), get(remote_entry_key("other")));  // a valid entry under another key
  const std::string genuine = get(remote_entry_key("genuine"));
  set(remote_entry_key("truncated"), genuine.substr(0, genuine.size() - 3));
  // A header that claims more than the bound, and a value larger than any entry.
  set(remote_entry_key("huge-claim"), "vyre-remote 1 wgsl 10 999999999999\n0123456789");
  set(remote_entry_key("oversized"), "vyre-remote 1 wgsl 1 " + std::to_string(vyre::aot::kMaxWgslBytes + 1) + "\n" +
                                   std::string(vyre::aot::kMaxWgslBytes + 2, 'x'));
  // A valid frame whose WGSL differs from its metadata's digest.
  std::string tampered = genuine;
  tampered.back() ^= 1;
  set(remote_entry_key("tampered"), tampered);
  set(remote_entry_key("tampered2"), tampered);

  // Without trusted keys: integrity checks alone. Reading the 16 MiB value
  // must not meet the fault tests' short timeout (a timeout is not a
  // rejection), which it does under the thread sanitizer.
  {
    auto reader_options = remote_machine(tmp / "reader1", redis.url());
    reader_options.remote->operation_timeout = std::chrono::seconds(10);
    Cache reader(reader_options);
    int lowered = 0;
    for (const char* n : {"garbage", "moved", "truncated", "huge-claim", "oversized"})
      EXPECT_FALSE(checked_lookup(reader, n, &lowered).cache_hit) << n;
    EXPECT_TRUE(checked_lookup(reader, "genuine", &lowered).cache_hit);
    EXPECT_EQ(lowered, 5);
    auto stats = reader.stats();
    EXPECT_EQ(stats.remote.rejected, 5u);
    EXPECT_EQ(reader.verify(false).bad.size(), 0u) << "nothing poisoned reached the local cache";
    // The read-write reader replaced the bad values with good ones.
    Cache later(remote_machine(tmp / "reader1b", redis.url()));
    EXPECT_TRUE(checked_lookup(later, "garbage").cache_hit);
  }
  // With trusted keys: only entries signed by them.
  auto options = remote_machine(tmp / "reader2", redis.url());
  options.trusted_keys = {trusted.public_pem};
  options.remote->read_only = true;  // leave the poison in place for the count
  Cache reader(options);
  int lowered = 0;
  for (const char* n : {"unsigned", "by-intruder", "genuine", "tampered2"})
    EXPECT_FALSE(checked_lookup(reader, n, &lowered).cache_hit) << n;
  EXPECT_EQ(lowered, 4);
  auto stats = reader.stats();
  EXPECT_EQ(stats.remote.rejected, 4u);
  EXPECT_EQ(stats.rejected, 3u) << "unsigned, by-intruder and genuine lack a trusted signature";
  // A writer with the trusted key: its entries are accepted.
  auto ci = remote_machine(tmp / "ci", redis.url());
  ci.signing_key = trusted.private_pem;
  { Cache writer(ci); checked_lookup(writer, "signed"); }
  EXPECT_TRUE(checked_lookup(reader, "signed").cache_hit);
}

// A worker that trusts key A but holds no key A signs with (or signs with
// another) rejects what it finds, lowers, and must not write over the
// store: its entry would be refused by every reader trusting A, which would
// then lower and write again, forever. A signer trusted by A replaces such
// values.
TEST(AotRemote, AWorkerWithoutATrustedSigningKeyNeverOverwritesTheStore) {
  VYRE_REQUIRE_REDIS();
  TempDir tmp;
  RedisProcess redis(tmp / "redis");
  auto a = vyre::test::make_key_pair(tmp.path(), "a");
  auto b = vyre::test::make_key_pair(tmp.path(), "b");
  auto get = [&](const std::string& key) { return vyre::test::redis_command(redis.endpoint(), {"GET", key})->text; };
  {
    Cache plain(remote_machine(tmp / "plain", redis.url()));
    checked_lookup(plain, "unsigned");
    auto by_b = remote_machine(tmp / "by-b", redis.url());
    by_b.signing_key = b.private_pem;
    Cache signer_b(by_b);
    checked_lookup(signer_b, "signed-by-b");
  }
  const std::string unsigned_value = get(remote_entry_key("unsigned"));
  const std::string b_value = get(remote_entry_key("signed-by-b"));
  ASSERT_FALSE(unsigned_value.empty());
  ASSERT_FALSE(b_value.empty());

  for (bool with_key_b : {false, true}) {
    auto options = remote_machine(tmp / (with_key_b ? "reader-b" : "reader"), redis.url());
    options.trusted_keys = {a.public_pem};
    if (with_key_b) options.signing_key = b.private_pem;  // signs, but not with a key it trusts
    Cache reader(options);
    int lowered = 0;
    EXPECT_FALSE(checked_lookup(reader, "unsigned", &lowered).cache_hit);
    EXPECT_FALSE(checked_lookup(reader, "signed-by-b", &lowered).cache_hit);
    EXPECT_FALSE(checked_lookup(reader, "absent", &lowered).cache_hit);
    EXPECT_EQ(lowered, 3);
    EXPECT_EQ(get(remote_entry_key("unsigned")), unsigned_value) << "not overwritten";
    EXPECT_EQ(get(remote_entry_key("signed-by-b")), b_value) << "not overwritten";
    EXPECT_EQ(get(remote_entry_key("absent")), "") << "nothing published that trusting readers refuse";
    EXPECT_EQ(reader.stats().remote.writes, 0u);
  }

  // A writer signing with A replaces them, and then readers trusting A hit.
  auto ci = remote_machine(tmp / "ci", redis.url());
  ci.trusted_keys = {a.public_pem};
  ci.signing_key = a.private_pem;
  {
    Cache writer(ci);
    for (const char* n : {"unsigned", "signed-by-b"}) EXPECT_FALSE(checked_lookup(writer, n).cache_hit) << n;
  }
  auto options = remote_machine(tmp / "reader-later", redis.url());
  options.trusted_keys = {a.public_pem};
  Cache reader(options);
  for (const char* n : {"unsigned", "signed-by-b"}) EXPECT_TRUE(checked_lookup(reader, n).cache_hit) << n;
}

// Anyone who can write the store can set a lease. A lease that never brings
// its entry costs a process at most one lease wait in its life, not one
// per key.
TEST(AotRemote, ForgedLeasesCostAProcessAtMostOneLeaseWait) {
  VYRE_REQUIRE_REDIS();
  TempDir tmp;
  RedisProcess redis(tmp / "redis");
  const std::vector<std::string> names{"p0", "p1", "p2", "p3", "p4"};
  for (const auto& n : names) {
    auto r = vyre::test::redis_command(redis.endpoint(), {"SET", "vyre:aot:lease:" + vyre::test::synthetic_parts(n).key(),
                                                          "forged", "PX", "600000"});
    ASSERT_TRUE(r && !r->is_error());
  }
  auto options = remote_machine(tmp / "m", redis.url());
  options.remote->lease_wait = 400ms;
  Cache cache(options);
  const auto start = std::chrono::steady_clock::now();
  int lowered = 0;
  for (const auto& n : names) checked_lookup(cache, n, &lowered);
  const double ms = ms_since(start);
  EXPECT_EQ(lowered, 5);
  EXPECT_GE(ms, 350.0) << "the first forged lease is waited on";
  EXPECT_LT(ms, 5 * 400.0 / 2) << "not one wait per key (5 x 400 ms before the bound)";
  // Its lowerings still reach the store for the others.
  EXPECT_FALSE(vyre::test::redis_command(redis.endpoint(), {"GET", remote_entry_key("p4")})->text.empty());
}

// A server that refuses writes (maxmemory with noeviction) is counted and
// said, not silent; an empty value under an entry's key is replaced.
TEST(AotRemote, RefusedWritesAreCountedAndEmptyValuesReplaced) {
  VYRE_REQUIRE_REDIS();
  TempDir tmp;
  RedisProcess redis(tmp / "redis");
  auto command = [&](const std::vector<std::string>& args) {
    auto r = vyre::test::redis_command(redis.endpoint(), args);
    EXPECT_TRUE(r && !r->is_error()) << args[0];
  };
  command({"SET", remote_entry_key("empty"), ""});
  {
    Cache writer(remote_machine(tmp / "w", redis.url()));
    EXPECT_FALSE(checked_lookup(writer, "empty").cache_hit);
  }
  Cache reader(remote_machine(tmp / "r", redis.url()));
  EXPECT_TRUE(checked_lookup(reader, "empty").cache_hit) << "the empty value was replaced";

  command({"CONFIG", "SET", "maxmemory-policy", "noeviction"});
  command({"CONFIG", "SET", "maxmemory", "1"});
  Cache full(remote_machine(tmp / "full", redis.url()));
  for (const char* n : {"x", "y", "z"}) checked_lookup(full, n);
  EXPECT_GE(full.stats().remote.errors, 3u) << "each refused write counted";
  command({"CONFIG", "SET", "maxmemory", "0"});
}

TEST(AotRemote, AFleetLowersEachProgramAboutOnce) {
  VYRE_REQUIRE_REDIS();
  TempDir tmp;
  RedisProcess redis(tmp / "redis");
  const int processes = vyre::test::stress_enabled() ? 32 : 8;
  const int programs = vyre::test::stress_enabled() ? 200 : 30;
  const std::string start = vyre::test::start_line(600);
  std::vector<pid_t> pids;
  std::vector<std::filesystem::path> outputs;
  std::vector<std::unique_ptr<TempDir>> homes;
  for (int w = 0; w < processes; ++w) {
    homes.push_back(std::make_unique<TempDir>());
    outputs.push_back(homes.back()->path() / "out.txt");
  }
  for (int w = 0; w < processes; ++w)
    pids.push_back(spawn_to_files(vyre::test::worker_argv(homes[w]->path() / "cache",
                                                          {"--programs", std::to_string(programs), "--lower-ms", "20",
                                                           "--remote", redis.url(), "--start-at", start}),
                                  outputs[w], homes[w]->path() / "err.txt"));
  long total_misses = 0, total_hits = 0;
  for (int w = 0; w < processes; ++w) {
    EXPECT_EQ(vyre::test::wait_worker(pids[w]), 0) << "worker " << w << " served a wrong text or failed";
    long hits = 0, misses = 0, wrong = 0;
    const std::string out = vyre::test::read_file(outputs[w]);
    ASSERT_EQ(std::sscanf(out.c_str(), "hits=%ld misses=%ld wrong=%ld", &hits, &misses, &wrong), 3) << out;
    EXPECT_EQ(wrong, 0);
    total_misses += misses;
    total_hits += hits;
  }
  EXPECT_EQ(total_hits + total_misses, static_cast<long>(processes) * programs);
  std::printf("[fleet] %d processes x %d programs: %ld lowerings fleet-wide (ideal %d)\n", processes, programs,
              total_misses, programs);
  RecordProperty("fleet_lowerings", static_cast<int>(total_misses));
  EXPECT_GE(total_misses, programs);
  EXPECT_LE(total_misses, programs + programs / 10) << "each program is lowered about once fleet-wide";
}

TEST(AotRemote, AKilledServerNeverFailsADispatchAndIsUsedAgainWhenBack) {
  VYRE_REQUIRE_REDIS();
  TempDir tmp;
  auto redis = std::make_unique<RedisProcess>(tmp / "redis");
  const int port = redis->port();
  auto options = remote_machine(tmp / "a", redis->url());
  options.remote->connect_timeout = options.remote->operation_timeout = 100ms;
  Cache cache(options);
  for (int p = 0; p < 10; ++p) checked_lookup(cache, "before" + std::to_string(p));
  redis->kill();
  double worst = 0;
  for (int p = 0; p < 40; ++p) {
    const auto t = std::chrono::steady_clock::now();
    EXPECT_FALSE(checked_lookup(cache, "down" + std::to_string(p)).cache_hit);
    worst = std::max(worst, ms_since(t));
  }
  EXPECT_LT(worst, 400.0) << "no lookup waits beyond the timeouts";
  EXPECT_GT(cache.stats().remote.errors, 0u);
  // Back, empty (no persistence): after the cooldown the remote is asked and written again.
  redis = std::make_unique<RedisProcess>(tmp / "redis2", std::vector<std::string>{}, port);
  std::this_thread::sleep_for(350ms);
  uint64_t writes_before = cache.stats().remote.writes;
  for (int p = 0; p < 5; ++p) checked_lookup(cache, "after" + std::to_string(p));
  EXPECT_EQ(cache.stats().remote.writes, writes_before + 5) << "the remote is used again";
  Cache other(remote_machine(tmp / "b", redis->url()));
  EXPECT_TRUE(checked_lookup(other, "after0").cache_hit);
}

TEST(AotRemote, AWorkerSurvivesRedisKilledAndRestartedMidRun) {
  VYRE_REQUIRE_REDIS();
  TempDir tmp;
  auto redis = std::make_unique<RedisProcess>(tmp / "redis");
  const int port = redis->port();
  const std::string url = redis->url();
  TempDir home;
  // Each cycle: the server killed, down 400 ms, restarted on its port, up
  // 500 ms; the worker looks programs up every 5 ms throughout (a soak of 20
  // cycles, SIGSTOP pauses among them, with VYRE_STRESS=1).
  const int cycles = vyre::test::stress_enabled() ? 20 : 1;
  std::vector<std::string> args{"--programs", std::to_string(250 * cycles + 100), "--interval-ms", "5", "--remote",
                                url, "--timeout-ms", "100", "--retry-after-ms", "200"};
  // Started here and the server restarted from this thread: a server forked
  // from another thread would die with it (PR_SET_PDEATHSIG).
  const pid_t worker = spawn_to_files(vyre::test::worker_argv(home / "cache", args), home / "out", home / "err");
  std::this_thread::sleep_for(300ms);
  for (int cycle = 0; cycle < cycles; ++cycle) {
    if (cycle % 2 == 1) {  // flapping: frozen instead of dead
      redis->stop_signal(SIGSTOP);
      std::this_thread::sleep_for(400ms);
      redis->stop_signal(SIGCONT);
    } else {
      redis->kill();
      std::this_thread::sleep_for(400ms);
      redis = std::make_unique<RedisProcess>(tmp / ("redis" + std::to_string(cycle)), std::vector<std::string>{}, port);
    }
    std::this_thread::sleep_for(500ms);
  }
  vyre::test::ProcessResult run;
  run.exit_code = vyre::test::wait_worker(worker);
  run.out = vyre::test::read_file(home / "out");
  run.err = vyre::test::read_file(home / "err");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.out.find("wrong=0"), run.out.find("wrong=")) << run.out;
  double max_ms = 1e9;
  std::sscanf(run.err.substr(run.err.find("max_ms=")).c_str(), "max_ms=%lf", &max_ms);
  EXPECT_LT(max_ms, 400.0) << run.err;
  // Entries published after the restart are there.
  auto keys = vyre::test::redis_command(redis->endpoint(), {"DBSIZE"});
  ASSERT_TRUE(keys) << keys.failure().message;
  EXPECT_GT(keys->integer, 0) << "the worker used the restarted server";
}

TEST(AotRemote, APausedServerCostsAtMostTheTimeoutAndRecovers) {
  VYRE_REQUIRE_REDIS();
  TempDir tmp;
  RedisProcess redis(tmp / "redis");
  auto options = remote_machine(tmp / "a", redis.url());
  options.remote->connect_timeout = options.remote->operation_timeout = 100ms;
  Cache cache(options);
  checked_lookup(cache, "warm");
  std::thread sleeper([&] { (void)vyre::test::redis_command(redis.endpoint(), {"DEBUG", "SLEEP", "1.5"}, 3000); });
  std::this_thread::sleep_for(100ms);
  double worst = 0;
  const auto paused = std::chrono::steady_clock::now();
  int during = 0;
  while (ms_since(paused) < 1000) {
    const auto t = std::chrono::steady_clock::now();
    EXPECT_FALSE(checked_lookup(cache, "paused" + std::to_string(during++)).cache_hit);
    worst = std::max(worst, ms_since(t));
  }
  sleeper.join();
  EXPECT_LT(worst, 400.0) << "a paused server stalls a lookup at most about one timeout";
  auto stats = cache.stats();
  EXPECT_GT(stats.remote.timeouts, 0u);
  EXPECT_LE(stats.remote.timeouts, 10u) << "the breaker stops asking: " << during << " lookups during the pause";
  std::this_thread::sleep_for(350ms);
  Cache other(remote_machine(tmp / "b", redis.url()));
  checked_lookup(other, "later");
  EXPECT_TRUE(checked_lookup(cache, "later").cache_hit) << "the remote answers again after the pause";
}

TEST(AotRemote, CliStatsJsonAndPing) {
  VYRE_REQUIRE_REDIS();
  TempDir tmp;
  RedisProcess redis(tmp / "redis");
  {
    Cache a(remote_machine(tmp / "a", redis.url()));
    checked_lookup(a, "x");
  }
  { Cache b(remote_machine(tmp / "b", redis.url())); checked_lookup(b, "x"); }
  std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", (tmp / "b").string()}, {"VYRE_AOT_REMOTE", redis.url()}};
  auto stats = vyre::test::run_vyre({"cache", "stats", "--json"}, env);
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  auto j = nlohmann::json::parse(stats.out);
  ASSERT_TRUE(j.contains("remote")) << stats.out;
  EXPECT_EQ(j["remote"]["hits"], 1);
  EXPECT_EQ(j["remote"]["misses"], 0);
  EXPECT_EQ(j["remote"]["rejected"], 0);
  EXPECT_EQ(j["remote"]["location"], redis.url());
  auto text = vyre::test::run_vyre({"cache", "stats"}, env);
  EXPECT_TRUE(vyre::test::contains(text.out, "remote")) << text.out;
  auto ping = vyre::test::run_vyre({"cache", "remote", "ping"}, env);
  EXPECT_EQ(ping.exit_code, 0) << ping.out << ping.err;
  EXPECT_TRUE(vyre::test::contains(ping.out, "127.0.0.1:" + std::to_string(redis.port()))) << ping.out;
  EXPECT_TRUE(vyre::test::contains(ping.out, " ok ")) << ping.out;
  redis.kill();
  auto dead = vyre::test::run_vyre({"cache", "remote", "ping"}, env);
  EXPECT_EQ(dead.exit_code, 1) << dead.out;
  EXPECT_TRUE(vyre::test::contains(dead.out, "FAILED")) << dead.out;
  auto none = vyre::test::run_vyre({"cache", "remote", "ping"}, {{"VYRE_AOT_CACHE_DIR", (tmp / "b").string()}});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_TRUE(vyre::test::contains(none.err, "VYRE_AOT_REMOTE")) << none.err;
}

}  // namespace
