// Stats across processes: every process's hits, misses, writes, evictions,
// bad entries, errors and time saved reach the shared counters, without a
// locked write on every hit.
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "support/aot_fixtures.hpp"
#include "support/aot_processes.hpp"
#include "support/remote_fixtures.hpp"
#include "support/stored_entries.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"

// This program's read(2): the kernel's, except that while a test asks, a
// read of a counters' shard fails with EIO, as a network file system's may
// for a moment (tests/fs/fault_fs.c).
namespace {
std::atomic<bool> shard_reads_fail{false};
std::atomic<int> shard_reads_failed{0};

bool is_shard(int fd) {
  char link[4096];
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(proc.c_str(), link, sizeof link - 1);
  if (n <= 0) return false;
  const std::string path(link, static_cast<size_t>(n));
  const std::string name = path.substr(path.rfind('/') + 1);
  return name.starts_with("shard-") && name.ends_with(".toml");
}
}  // namespace

extern "C" ssize_t read(int fd, void* buf, size_t count) {
  if (shard_reads_fail.load() && is_shard(fd)) {
    ++shard_reads_failed;
    errno = EIO;
    return -1;
  }
  return ::syscall(SYS_read, fd, buf, count);
}

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

// A shard rewritten in place can be read half old, half new: its check
// tells, and a torn shard is read again, never summed.
TEST(AotStats, AShardWhoseCheckDoesNotMatchIsNotSummed) {
  TempDir tmp;
  ASSERT_EQ(vyre::test::run_worker(tmp.path(), {"--programs", "3", "--rounds", "2"}).exit_code, 0);
  std::filesystem::path shard;
  for (const auto& e : std::filesystem::directory_iterator(tmp.path() / ".stats"))
    if (e.path().filename().string().starts_with("shard-") && e.path().extension() == ".toml") shard = e.path();
  ASSERT_FALSE(shard.empty());
  std::string text = vyre::test::read_file(shard);
  ASSERT_EQ(text.size(), 768u) << "a shard is one fixed-size record";
  EXPECT_EQ(open(tmp.path()).stats().hits, 3u);
  const size_t at = text.find("hits = 3");
  ASSERT_NE(at, std::string::npos);
  text[at + 7] = '9';  // as a read that met another process's rewrite
  vyre::test::write_file(shard, text);
  const auto stats = open(tmp.path()).stats();
  EXPECT_EQ(stats.hits, 0u) << "a torn shard's counts are not taken";
  EXPECT_TRUE(stats.incomplete);
  EXPECT_NE(stats.incomplete_reason.find("torn"), std::string::npos) << stats.incomplete_reason;
}

// A shard the file system will not read for a moment (EIO, ESTALE) is not
// rewritten from nothing, which lost every count it held: the flush fails
// and its counters wait for the next one.
TEST(AotStats, AShardThatCannotBeReadIsNotRewrittenFromNothing) {
  TempDir tmp;
  CacheOptions options = vyre::test::cache_options();
  options.directory = tmp.path();
  options.stats_flush_interval = std::chrono::hours(1);
  auto parts = vyre::test::synthetic_parts("x");
  {
    Cache cache(options);
    for (int i = 0; i < 5; ++i) cache.load_or_compile(parts, [] { return std::string("x"); });
  }
  ASSERT_EQ(open(tmp.path()).stats().hits, 4u);
  {
    Cache cache(options);
    cache.load_or_compile(parts, [] { return std::string("x"); });
    shard_reads_fail = true;
    cache.flush();
    shard_reads_fail = false;
    EXPECT_GT(shard_reads_failed.load(), 0);
  }
  const auto stats = open(tmp.path()).stats();
  EXPECT_EQ(stats.hits, 5u);
  EXPECT_EQ(stats.misses, 1u);
}

// Nor is a torn one: this process's flush meets its shard half-copied and
// keeps its counts for later, leaving the shard as it found it.
TEST(AotStats, AFlushNeverWritesOverATornShard) {
  TempDir tmp;
  CacheOptions options = vyre::test::cache_options();
  options.directory = tmp.path();
  options.stats_flush_interval = std::chrono::hours(1);
  auto parts = vyre::test::synthetic_parts("x");
  {
    Cache cache(options);
    for (int i = 0; i < 5; ++i) cache.load_or_compile(parts, [] { return std::string("x"); });
  }
  const auto shard = tmp.path() / ".stats" / ("shard-" + std::to_string(getpid() % 8) + ".toml");
  const std::string whole_text = vyre::test::read_file(shard);
  const std::string torn = whole_text.substr(0, 200);
  vyre::test::write_file(shard, torn);
  {
    Cache cache(options);
    cache.load_or_compile(parts, [] { return std::string("x"); });
    cache.flush();
    EXPECT_EQ(vyre::test::read_file(shard), torn) << "the flush wrote over counts it could not read";
    vyre::test::write_file(shard, whole_text);  // the copy completes
  }  // the last flush, at the Cache's end, adds the hit
  const auto stats = open(tmp.path()).stats();
  EXPECT_EQ(stats.hits, 5u);
  EXPECT_EQ(stats.misses, 1u);
}

// A shard copied by a rename that is not atomic (some network file
// systems), read half-copied, is torn too; a shard of the format before
// the check (every counter, no check) is read as it is.
TEST(AotStats, AHalfCopiedShardIsTornAndAShardWithoutACheckIsReadAsItWas) {
  TempDir tmp;
  ASSERT_EQ(vyre::test::run_worker(tmp.path(), {"--programs", "3", "--rounds", "2"}).exit_code, 0);
  std::filesystem::path shard;
  for (const auto& e : std::filesystem::directory_iterator(tmp.path() / ".stats"))
    if (e.path().filename().string().starts_with("shard-") && e.path().extension() == ".toml") shard = e.path();
  ASSERT_FALSE(shard.empty());
  const std::string text = vyre::test::read_file(shard);
  const size_t check = text.find("check = ");
  ASSERT_NE(check, std::string::npos);
  for (size_t cut : {size_t{256}, check}) {  // a third copied; every counter but not the check
    vyre::test::write_file(shard, text.substr(0, cut));
    const auto stats = open(tmp.path()).stats();
    if (cut == check) {
      // Every counter on its line: whole, as a shard written before the check.
      EXPECT_EQ(stats.hits, 3u);
      EXPECT_FALSE(stats.incomplete) << stats.incomplete_reason;
    } else {
      EXPECT_EQ(stats.hits, 0u) << "a half-copied shard's counts are not taken";
      EXPECT_TRUE(stats.incomplete);
      EXPECT_NE(stats.incomplete_reason.find("torn"), std::string::npos) << stats.incomplete_reason;
    }
  }
}

// On a file system out of inodes the SQLite store still takes entries (a
// row needs none), and the counters are not lost with them: a shard that
// cannot be replaced by a rename (which needs a new inode) is rewritten in
// place.
TEST(AotStats, CountsAreKeptWhenNoInodeIsLeft) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs privileges";
  TempDir tmp;
  const std::filesystem::path dir = tmp / "cache";
  std::filesystem::create_directories(dir);
  if (mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=4m,nr_inodes=200,mode=0700") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  {
    CacheOptions options;
    options.directory = dir;
    options.store = vyre::aot::CacheStore::sqlite;
    options.driver_cache = false;
    {
      Cache cache(options);
      for (int i = 0; i < 4; ++i) vyre::test::checked_lookup(cache, "before" + std::to_string(i));
    }
    // Every inode taken.
    int filler = 0;
    while (true) {
      const std::filesystem::path f = dir / ("filler-" + std::to_string(filler));
      const int fd = ::open(f.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
      if (fd < 0) {
        EXPECT_EQ(errno, ENOSPC);
        break;
      }
      ::close(fd);
      ++filler;
    }
    ASSERT_GT(filler, 0);
    {
      Cache cache(options);
      for (int i = 0; i < 4; ++i) EXPECT_TRUE(vyre::test::checked_lookup(cache, "before" + std::to_string(i)).cache_hit);
      for (int i = 0; i < 3; ++i) EXPECT_FALSE(vyre::test::checked_lookup(cache, "during" + std::to_string(i)).cache_hit);
      EXPECT_TRUE(vyre::test::checked_lookup(cache, "during0").cache_hit) << "stored as a row with no inode free";
    }
    const auto stats = Cache(options).stats();
    EXPECT_EQ(stats.misses, 7u);
    EXPECT_EQ(stats.hits, 5u);
    EXPECT_FALSE(stats.incomplete) << stats.incomplete_reason;
  }
  umount2(dir.c_str(), MNT_DETACH);
}

}  // namespace
