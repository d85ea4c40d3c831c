// Bounded by default: least recently used entries are evicted when the
// directory passes its bounds, hits refresh recency without writing on every
// hit, and cleanup never runs twice at once.
#include <sys/file.h>
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "aot/local/driver_store.hpp"
#include "support/aot_fixtures.hpp"
#include "support/aot_processes.hpp"
#include "support/stored_entries.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"

namespace {

using vyre::aot::Cache;
using vyre::aot::CacheOptions;
using vyre::test::set_age;
using vyre::test::synthetic_parts;
using vyre::test::synthetic_wgsl;
using vyre::test::TempDir;

std::string name_of(int i) { return "e" + std::to_string(i); }
std::string key_of(int i) { return synthetic_parts(name_of(i)).key(); }

void put(Cache& cache, int i, size_t bytes = 1000) {
  cache.load_or_compile(synthetic_parts(name_of(i)), [&] { return synthetic_wgsl(name_of(i), bytes); }, name_of(i));
}

bool present(const std::filesystem::path& dir, int i) { return vyre::test::has_entry(dir, key_of(i)); }

// Marks entry i as last used `age` ago, in whichever store holds it.
void set_age_of(const std::filesystem::path& dir, int i, std::chrono::seconds age) {
  vyre::test::set_entry_age(dir, key_of(i), age.count());
}

CacheOptions bounded(const std::filesystem::path& dir, uint64_t max_entries, uint64_t max_bytes = 0) {
  CacheOptions options = vyre::test::cache_options();
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
  for (int i = 0; i < 10; ++i) set_age_of(tmp.path(), i, std::chrono::minutes(100 - i));
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
  set_age_of(tmp.path(), 0, std::chrono::seconds(300));
  const int64_t before = vyre::test::entry_used_ms(tmp.path(), key_of(0));
  ASSERT_GT(before, 0);
  put(cache, 0);
  EXPECT_EQ(vyre::test::entry_used_ms(tmp.path(), key_of(0)), before);  // recent enough: the hit wrote nothing
  set_age_of(tmp.path(), 0, std::chrono::seconds(3600));
  put(cache, 0);
  EXPECT_GT(vyre::test::entry_used_ms(tmp.path(), key_of(0)), before);  // stale: the hit refreshed it
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
  // Another process's cleanup holds the lock: a writer over the bound
  // waits a bounded time for it (2 s), then goes on without cleaning.
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
  for (int i = 0; i < 20; ++i) set_age_of(tmp.path(), i, std::chrono::hours(20 - i));
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
  std::string text = *vyre::test::read_entry_part(tmp.path(), key_of(0), vyre::test::EntryPart::metadata);
  text.replace(text.find("format = 1"), 10, "format = 7");
  vyre::test::write_entry_part(tmp.path(), key_of(0), vyre::test::EntryPart::metadata, text);
  set_age_of(tmp.path(), 0, std::chrono::hours(48));
  vyre::aot::PruneOptions by_age;
  by_age.older_than = std::chrono::hours(24);
  EXPECT_EQ(cache.prune(by_age).evicted, 1u);
}

}  // namespace

// The byte bound covers the driver's data too: the fingerprint folders,
// the pending folder of a first start and what the driver grows by itself
// (measured when the bound is checked, not only at a scan).
TEST(AotEviction, TheByteBoundCountsTheDriversData) {
  TempDir tmp;
  namespace driver = vyre::aot::driver;
  CacheOptions options = bounded(tmp.path(), 0, 64 * 1024);
  {
    Cache cache(options);
    put(cache, 0);
  }
  auto data = driver::data_folder(tmp.path(), "backend=test;name=driver-bytes");
  ASSERT_TRUE(data) << data.failure().message;
  vyre::test::write_file(*data / "pipelines.bin", std::string(300 * 1024, 'd'));  // what a driver writes
  set_age(data->parent_path() / "fingerprint", std::chrono::seconds(60));  // used before the next entry
  auto pending = driver::pending_data_folder(tmp.path());
  ASSERT_TRUE(pending);
  vyre::test::write_file(*pending / "first.bin", std::string(8 * 1024, 'p'));
  {
    Cache cache(options);
    EXPECT_GT(cache.stats().driver_bytes, 300u * 1024) << "counted";
    put(cache, 1);  // a publication checks the bound with the driver data as it is now
  }
  Cache cache(options);
  const auto stats = cache.stats();
  EXPECT_LE(stats.bytes + stats.driver_bytes, 64u * 1024) << "entries " << stats.bytes << ", driver " << stats.driver_bytes;
  EXPECT_TRUE(std::filesystem::exists(*pending / "first.bin")) << "a live first start's data is counted, not evicted";
  EXPECT_TRUE(present(tmp.path(), 1));
}

// A process that only dispatches (all hits) while the driver grows its data
// past the bound cleans up at its end.
TEST(AotEviction, DriverDataGrownWithoutAnyPublicationIsBoundedAtTheCachesEnd) {
  TempDir tmp;
  namespace driver = vyre::aot::driver;
  CacheOptions options = bounded(tmp.path(), 0, 64 * 1024);
  { Cache cache(options); put(cache, 0); }
  {
    Cache cache(options);
    put(cache, 0);  // a hit
    auto data = driver::data_folder(tmp.path(), "backend=test;name=grown");
    ASSERT_TRUE(data);
    vyre::test::write_file(*data / "pipelines.bin", std::string(200 * 1024, 'd'));
  }
  Cache cache(options);
  EXPECT_LE(cache.stats().bytes + cache.stats().driver_bytes, 64u * 1024);
}

// A writer killed while writing a folder's fingerprint file leaves a
// temporary file there; cleanup sweeps it once older than the grace period.
TEST(AotEviction, CleanupSweepsTheDriversOrphanedTemporaryFiles) {
  TempDir tmp;
  auto data = vyre::aot::driver::data_folder(tmp.path(), "backend=test;name=orphans");
  ASSERT_TRUE(data);
  const std::filesystem::path orphan = data->parent_path() / ".tmp.123.fingerprint";
  vyre::test::write_file(orphan, "backend=test;name=orphans");
  CacheOptions options = vyre::test::cache_options();
  options.directory = tmp.path();
  options.orphan_grace = std::chrono::seconds(0);
  Cache cache(options);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // file times have a coarse clock
  const auto pruned = cache.prune({});
  EXPECT_FALSE(std::filesystem::exists(orphan));
  EXPECT_GE(pruned.swept, 1u);
}

// Sixteen processes publishing at once hold the cache at most one entry
// each above the entry bound: a writer over the bound cleans before it goes
// on (docs/cache.md, "Bounds").
TEST(AotEviction, ConcurrentWritersExceedTheEntryBoundByAtMostOneEntryEach) {
  TempDir tmp;
  constexpr int kWriters = 16;
  constexpr uint64_t kBound = 4;
  const std::string start = vyre::test::start_line(600);
  std::vector<pid_t> pids;
  for (int w = 0; w < kWriters; ++w)
    pids.push_back(vyre::test::spawn_worker(tmp.path(), {"--programs", "12", "--prefix", "w" + std::to_string(w) + "-",
                                                         "--max-entries", std::to_string(kBound), "--start-at", start}));
  uint64_t most = 0;
  std::atomic<bool> done{false};
  std::thread sampler([&] {
    while (!done) {
      uint64_t n = 0;
      std::error_code ec;
      for (std::filesystem::directory_iterator it(tmp.path(), ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".toml") ++n;
      most = std::max(most, n);
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  });
  for (pid_t pid : pids) EXPECT_EQ(vyre::test::wait_worker(pid), 0);
  done = true;
  sampler.join();
  EXPECT_LE(most, kBound + kWriters) << "entries seen at once";
  CacheOptions options = bounded(tmp.path(), kBound);
  EXPECT_LE(Cache(options).stats().entries, kBound);
}
