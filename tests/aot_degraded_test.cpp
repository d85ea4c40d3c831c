// A cache that cannot be written never fails a lookup: a full disk (a file
// size limit, or a tiny tmpfs where mounting is allowed) or a read-only
// directory degrades to lowering, with one warning.
#include <sys/mount.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "support/aot_fixtures.hpp"
#include "support/aot_processes.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"

namespace {

using vyre::aot::Cache;
using vyre::aot::CacheOptions;
using vyre::test::TempDir;

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

size_t count_temporaries(const std::filesystem::path& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.path().filename().string().starts_with(".tmp.")) ++n;
  return n;
}

TEST(AotDegraded, AFullDiskDegradesToLoweringAndWarnsOnce) {
  TempDir tmp;
  // RLIMIT_FSIZE stands in for a full disk: every write past 1000 bytes fails
  // (EFBIG, with SIGXFSZ ignored), as writes to a full disk fail with ENOSPC.
  auto run = vyre::test::run_worker(tmp.path(), {"--programs", "20", "--rounds", "2", "--bytes", "4096",
                                                 "--fsize-limit", "1000"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "hits=0 misses=40 wrong=0\n");
  EXPECT_EQ(occurrences(run.err, "AOT cache"), 1u) << run.err;
  EXPECT_EQ(count_temporaries(tmp.path()), 0u);  // failed writes clean up after themselves
  CacheOptions options = vyre::test::cache_options();
  options.directory = tmp.path();
  Cache cache(options);
  EXPECT_TRUE(cache.verify().bad.empty());
}

TEST(AotDegraded, ATinyFileSystemFillsUpWithoutFailingALookup) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs privileges";
  TempDir tmp;
  auto mount_point = tmp / "tiny";
  std::filesystem::create_directory(mount_point);
  // mode=0700: a tmpfs is 1777 by default, and the cache refuses a world-writable directory.
  if (mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=64k,mode=0700") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  auto run = vyre::test::run_worker(mount_point, {"--programs", "60", "--rounds", "2", "--bytes", "4096"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  long hits = -1, misses = -1, wrong = -1;
  ASSERT_EQ(std::sscanf(run.out.c_str(), "hits=%ld misses=%ld wrong=%ld", &hits, &misses, &wrong), 3) << run.out;
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(hits, 0);    // what fitted is used
  EXPECT_GT(misses, 60);  // what did not is lowered again
  EXPECT_EQ(occurrences(run.err, "AOT cache"), 1u) << run.err;
  {
    CacheOptions options = vyre::test::cache_options();
    options.directory = mount_point;
    Cache cache(options);
    EXPECT_TRUE(cache.verify().bad.empty());
  }
  umount2(mount_point.c_str(), MNT_DETACH);
}

TEST(AotDegraded, AReadOnlyDirectoryStillServesHitsAndLowersTheRest) {
  TempDir tmp;
  auto dir = tmp / "cache";
  ASSERT_EQ(vyre::test::run_worker(dir, {"--programs", "5"}).exit_code, 0);
  std::string how;
  if (!vyre::test::make_read_only(dir, how)) GTEST_SKIP() << "cannot make a read-only directory here";
  auto run = vyre::test::run_worker(dir, {"--programs", "10", "--rounds", "2"});
  EXPECT_EQ(run.exit_code, 0) << how << ": " << run.err;
  // p0..p4 hit twice; p5..p9 miss twice (nothing can be written).
  EXPECT_EQ(run.out, "hits=10 misses=10 wrong=0\n") << how;
  EXPECT_EQ(occurrences(run.err, "AOT cache"), 1u) << how << ": " << run.err;
  vyre::test::release_read_only(dir);
}

TEST(AotDegraded, ADirectoryThatCannotBeCreatedMeansNoDiskCache) {
  TempDir tmp;
  vyre::test::write_file(tmp / "blocker", "");
  auto run = vyre::test::run_worker(tmp / "blocker" / "cache", {"--programs", "3", "--rounds", "2"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "hits=0 misses=6 wrong=0\n");
  EXPECT_EQ(occurrences(run.err, "AOT cache disabled"), 1u) << run.err;
}

}  // namespace
