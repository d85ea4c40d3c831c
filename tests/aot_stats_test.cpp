// Stats across processes: every process's hits, misses, writes, evictions,
// bad entries, errors and time saved reach the shared counters, without a
// locked write on every hit.
#include <gtest/gtest.h>

#include "support/aot_fixtures.hpp"
#include "support/aot_processes.hpp"
#include "support/stored_entries.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"

namespace {

using vyre::aot::Cache;
using vyre::aot::CacheOptions;
using vyre::test::TempDir;

Cache open(const std::filesystem::path& dir) {
  CacheOptions options = vyre::test::cache_options();
  options.directory = dir;
  return Cache(options);
}

TEST(AotStats, CountersOfAllProcessesAddUp) {
  TempDir tmp;
  // 5 misses that take 20 ms each to lower, then 10 hits in another process.
  auto first = vyre::test::run_worker(tmp.path(), {"--programs", "5", "--lower-ms", "20"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, "hits=0 misses=5 wrong=0\n");
  auto second = vyre::test::run_worker(tmp.path(), {"--programs", "5", "--rounds", "2"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out, "hits=10 misses=0 wrong=0\n");

  Cache cache = open(tmp.path());
  auto stats = cache.stats();
  EXPECT_EQ(stats.hits, 10u);
  EXPECT_EQ(stats.misses, 5u);
  EXPECT_EQ(stats.writes, 5u);
  EXPECT_EQ(stats.bad_entries, 0u);
  EXPECT_EQ(stats.errors, 0u);
  EXPECT_EQ(stats.entries, 5u);
  EXPECT_GT(stats.bytes, 5u * 256);
  EXPECT_EQ(stats.bytes_written, stats.bytes);
  EXPECT_GE(stats.lowering_ms, 5 * 20.0);
  EXPECT_GE(stats.time_saved_ms, 10 * 20.0);  // each hit saved its entry's lowering time
}

TEST(AotStats, ZeroStatsResetsCountersButNotEntries) {
  TempDir tmp;
  ASSERT_EQ(vyre::test::run_worker(tmp.path(), {"--programs", "3", "--rounds", "2"}).exit_code, 0);
  Cache cache = open(tmp.path());
  EXPECT_EQ(cache.stats().hits, 3u);
  cache.zero_stats();
  auto stats = cache.stats();
  EXPECT_EQ(stats.hits, 0u);
  EXPECT_EQ(stats.misses, 0u);
  EXPECT_EQ(stats.writes, 0u);
  EXPECT_EQ(stats.entries, 3u);
}

TEST(AotStats, HitsAreCountedInMemoryAndFlushedLater) {
  TempDir tmp;
  CacheOptions options = vyre::test::cache_options();
  options.directory = tmp.path();
  options.stats_flush_interval = std::chrono::hours(1);
  auto parts = vyre::test::synthetic_parts("x");
  {
    Cache cache(options);
    cache.load_or_compile(parts, [] { return std::string("x"); });
    cache.flush();
    auto shards_before = vyre::test::read_file(tmp.path() / ".stats" / ("shard-" + std::to_string(getpid() % 8) + ".toml"));
    for (int i = 0; i < 100; ++i) cache.load_or_compile(parts, [] { return std::string("x"); });
    // No shard was rewritten by the hits...
    EXPECT_EQ(vyre::test::read_file(tmp.path() / ".stats" / ("shard-" + std::to_string(getpid() % 8) + ".toml")),
              shards_before);
    EXPECT_EQ(open(tmp.path()).stats().hits, 0u);
  }
  // ...and all of them were there once the cache was closed.
  EXPECT_EQ(open(tmp.path()).stats().hits, 100u);
}

TEST(AotStats, BadEntriesAndErrorsAreCounted) {
  TempDir tmp;
  ASSERT_EQ(vyre::test::run_worker(tmp.path(), {"--programs", "1"}).exit_code, 0);
  vyre::test::write_entry_part(tmp.path(), vyre::test::synthetic_parts("p0").key(), vyre::test::EntryPart::wgsl,
                               "garbage");
  ASSERT_EQ(vyre::test::run_worker(tmp.path(), {"--programs", "1"}).exit_code, 0);
  // A write the file system refuses (WGSL over a file-size limit of 1000
  // bytes) is an error, not a failure; the small stats files still fit.
  auto limited = vyre::test::run_worker(tmp.path(), {"--programs", "1", "--prefix", "big", "--bytes", "4096",
                                                     "--fsize-limit", "1000"});
  EXPECT_EQ(limited.exit_code, 0);
  auto stats = open(tmp.path()).stats();
  EXPECT_EQ(stats.bad_entries, 1u);
  EXPECT_EQ(stats.errors, 1u);
  EXPECT_EQ(stats.writes, 2u);  // the first entry and its replacement
}

}  // namespace
