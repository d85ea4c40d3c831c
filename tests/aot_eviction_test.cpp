// Bounded by default: least recently used entries are evicted when the
// directory passes its bounds, hits refresh recency without writing on every
// hit, and cleanup never runs twice at once.
#include <sys/file.h>
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "support/aot_fixtures.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"

namespace {

using vyre::aot::Cache;
using vyre::aot::CacheOptions;
using vyre::test::metadata_path;
using vyre::test::set_age;
using vyre::test::synthetic_parts;
using vyre::test::synthetic_wgsl;
using vyre::test::TempDir;

std::string name_of(int i) { return "e" + std::to_string(i); }
std::string key_of(int i) { return synthetic_parts(name_of(i)).key(); }

void put(Cache& cache, int i, size_t bytes = 1000) {
  cache.load_or_compile(synthetic_parts(name_of(i)), [&] { return synthetic_wgsl(name_of(i), bytes); }, name_of(i));
}

bool present(const std::filesystem::path& dir, int i) {
  return std::filesystem::exists(metadata_path(dir, key_of(i)));
}

int64_t mtime_s(const std::filesystem::path& p) {
  return std::chrono::duration_cast<std::chrono::seconds>(std::filesystem::last_write_time(p).time_since_epoch())
      .count();
}

CacheOptions bounded(const std::filesystem::path& dir, uint64_t max_entries, uint64_t max_bytes = 0) {
  CacheOptions options;
  options.directory = dir;
  options.max_entries = max_entries;
  options.max_bytes = max_bytes;
  return options;
}

TEST(AotEviction, TheEntryBoundHolds) {
  TempDir tmp;
  Cache cache(bounded(tmp.path(), 10));
  for (int i = 0; i < 40; ++i) put(cache, i);
  cache.flush();
  auto stats = cache.stats();
  EXPECT_LE(stats.entries, 10u);
  EXPECT_EQ(stats.entries + stats.evictions, 40u);
  EXPECT_TRUE(cache.verify().bad.empty());
}

TEST(AotEviction, TheByteBoundHolds) {
  TempDir tmp;
  const uint64_t max_bytes = 20'000;  // about ten entries of 1000 B of WGSL plus metadata
  Cache cache(bounded(tmp.path(), 0, max_bytes));
  for (int i = 0; i < 40; ++i) put(cache, i);
  cache.flush();
  auto stats = cache.stats();
  EXPECT_LE(stats.bytes, max_bytes);
  EXPECT_GT(stats.entries, 0u);
  EXPECT_GT(stats.evictions, 0u);
}

TEST(AotEviction, CleanupEvictsDownToALowWaterMark) {
  TempDir tmp;
  Cache cache(bounded(tmp.path(), 10));
  for (int i = 0; i < 11; ++i) put(cache, i);
  cache.flush();
  EXPECT_EQ(cache.stats().entries, 8u);  // 80 % of the bound: not one eviction per write after this
}

TEST(AotEviction, LeastRecentlyUsedEntriesGoFirstAndHitsRefreshRecency) {
  TempDir tmp;
  CacheOptions options = bounded(tmp.path(), 10);
  options.recency_granularity = std::chrono::seconds(60);
  {
    Cache cache(options);
    for (int i = 0; i < 10; ++i) put(cache, i);
  }
  // Entry i was last used (100 - i) minutes ago: 0 is the oldest.
  for (int i = 0; i < 10; ++i) set_age(metadata_path(tmp.path(), key_of(i)), std::chrono::minutes(100 - i));
  Cache cache(options);
  put(cache, 0);  // a hit: entry 0 becomes the most recent
  put(cache, 1);  // and then entry 1
  put(cache, 10);  // the eleventh entry passes the bound
  cache.flush();
  // Down to 8: the three least recently used (2, 3, 4) went.
  for (int i : {2, 3, 4}) EXPECT_FALSE(present(tmp.path(), i)) << i;
  for (int i : {0, 1, 5, 6, 7, 8, 9, 10}) EXPECT_TRUE(present(tmp.path(), i)) << i;
}

TEST(AotEviction, HitsWriteRecencyOnlyWhenItIsOlderThanTheGranularity) {
  TempDir tmp;
  CacheOptions options = bounded(tmp.path(), 0);
  options.recency_granularity = std::chrono::seconds(600);
  Cache cache(options);
  put(cache, 0);
  auto meta = metadata_path(tmp.path(), key_of(0));
  set_age(meta, std::chrono::seconds(300));
  int64_t before = mtime_s(meta);
  put(cache, 0);
  EXPECT_EQ(mtime_s(meta), before);  // recent enough: the hit wrote nothing
  set_age(meta, std::chrono::seconds(3600));
  put(cache, 0);
  EXPECT_GT(mtime_s(meta), before);  // stale: the hit refreshed it
}

TEST(AotEviction, CleanupNeverRunsTwiceAtOnce) {
  TempDir tmp;
  CacheOptions options = bounded(tmp.path(), 5);
  {
    CacheOptions unbounded = options;
    unbounded.max_entries = 0;
    Cache filler(unbounded);
    for (int i = 0; i < 20; ++i) put(filler, i);
  }
  // Another process's cleanup holds the lock: this one skips rather than waits.
  int lock_fd = open((tmp.path() / ".locks" / "cleanup").c_str(), O_RDWR | O_CREAT, 0600);
  ASSERT_GE(lock_fd, 0);
  ASSERT_EQ(flock(lock_fd, LOCK_EX), 0);
  {
    Cache cache(options);
    put(cache, 100);
    cache.flush();
    EXPECT_EQ(cache.stats().entries, 21u);
  }
  close(lock_fd);
  Cache cache(options);
  put(cache, 101);
  cache.flush();
  EXPECT_LE(cache.stats().entries, 5u);
}

TEST(AotEviction, PruneEvictsToTheBoundsAskedFor) {
  TempDir tmp;
  CacheOptions options = bounded(tmp.path(), 0);
  Cache cache(options);
  for (int i = 0; i < 20; ++i) put(cache, i);
  for (int i = 0; i < 20; ++i) set_age(metadata_path(tmp.path(), key_of(i)), std::chrono::hours(20 - i));
  vyre::aot::PruneOptions by_age;
  by_age.older_than = std::chrono::hours(10) + std::chrono::minutes(30);
  auto aged = cache.prune(by_age);
  EXPECT_EQ(aged.evicted, 10u);  // used 11 to 20 hours ago
  EXPECT_FALSE(present(tmp.path(), 9));
  EXPECT_TRUE(present(tmp.path(), 10));

  vyre::aot::PruneOptions by_count;
  by_count.max_entries = 4;
  EXPECT_EQ(cache.prune(by_count).entries, 4u);
  for (int i = 16; i < 20; ++i) EXPECT_TRUE(present(tmp.path(), i)) << i;

  vyre::aot::PruneOptions empty;
  empty.max_bytes = 0;
  auto emptied = cache.prune(empty);
  EXPECT_EQ(emptied.entries, 0u);
  EXPECT_EQ(emptied.bytes, 0u);
  EXPECT_EQ(cache.stats().evictions, 20u);
}

TEST(AotEviction, ClearRemovesEveryEntry) {
  TempDir tmp;
  Cache cache(bounded(tmp.path(), 0));
  for (int i = 0; i < 7; ++i) put(cache, i);
  EXPECT_EQ(cache.clear(), 7u);
  EXPECT_EQ(cache.stats().entries, 0u);
  EXPECT_TRUE(cache.list().empty());
  int lowered = 0;
  cache.load_or_compile(synthetic_parts(name_of(0)), [&] {
    ++lowered;
    return synthetic_wgsl(name_of(0), 1000);
  });
  EXPECT_EQ(lowered, 1);
}

TEST(AotEviction, EntriesOfAnotherFormatCountTowardsTheBoundAndAgeOut) {
  TempDir tmp;
  CacheOptions options = bounded(tmp.path(), 0);
  Cache cache(options);
  put(cache, 0);
  auto meta = metadata_path(tmp.path(), key_of(0));
  std::string text = vyre::test::read_file(meta);
  text.replace(text.find("format = 1"), 10, "format = 7");
  vyre::test::write_file(meta, text);
  set_age(meta, std::chrono::hours(48));
  vyre::aot::PruneOptions by_age;
  by_age.older_than = std::chrono::hours(24);
  EXPECT_EQ(cache.prune(by_age).evicted, 1u);
}

}  // namespace
