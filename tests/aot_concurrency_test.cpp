// Many processes at once on one cache directory: lock-free readers, one
// writer per key at a time, cleanup that never runs twice. Every output is
// right and no torn, bad or orphaned file is left.
#include <gtest/gtest.h>

#include "support/aot_fixtures.hpp"
#include "support/aot_processes.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"

namespace {

using vyre::aot::Cache;
using vyre::aot::CacheOptions;
using vyre::test::TempDir;

size_t count_temporaries(const std::filesystem::path& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.path().filename().string().starts_with(".tmp.")) ++n;
  return n;
}

Cache open(const std::filesystem::path& dir) {
  CacheOptions options = vyre::test::cache_options();
  options.directory = dir;
  return Cache(options);
}

TEST(AotConcurrency, SixteenProcessesOnTheSameProgramsFromAnEmptyCache) {
  const int processes = 16;
  const int programs = vyre::test::stress_enabled() ? 200 : 50;
  const int rounds = vyre::test::stress_enabled() ? 5 : 2;
  TempDir tmp;
  std::vector<pid_t> pids;
  std::string start = vyre::test::start_line();
  // Lowering takes a millisecond, so that processes miss the same key at once.
  for (int i = 0; i < processes; ++i)
    pids.push_back(vyre::test::spawn_worker(tmp.path(), {"--programs", std::to_string(programs), "--rounds",
                                                         std::to_string(rounds), "--bytes", "8192", "--lower-ms", "1",
                                                         "--start-at", start}));
  for (pid_t pid : pids) EXPECT_EQ(vyre::test::wait_worker(pid), 0) << "a worker saw wrong WGSL or failed";

  Cache cache = open(tmp.path());
  auto report = cache.verify();
  EXPECT_EQ(report.good, static_cast<uint64_t>(programs));
  EXPECT_TRUE(report.bad.empty());
  EXPECT_EQ(report.incomplete, 0u);
  EXPECT_EQ(count_temporaries(tmp.path()), 0u);
  auto stats = cache.stats();
  EXPECT_EQ(stats.hits + stats.misses, static_cast<uint64_t>(processes * programs * rounds));
  // One writer per key: every other process that missed found the entry
  // published under the key's lock and did not write it again.
  EXPECT_EQ(stats.writes, static_cast<uint64_t>(programs));
  EXPECT_EQ(stats.bad_entries, 0u);
  EXPECT_EQ(stats.errors, 0u);
  EXPECT_EQ(stats.entries, static_cast<uint64_t>(programs));
}

TEST(AotConcurrency, WritersReadersAndCleanupTogetherLeaveOnlyGoodEntries) {
  const int processes = vyre::test::stress_enabled() ? 16 : 6;
  const int programs = vyre::test::stress_enabled() ? 300 : 60;
  TempDir tmp;
  std::vector<pid_t> pids;
  std::string start = vyre::test::start_line();
  // Overlapping program sets and a bound far below them: cleanup evicts
  // while others write and read the same keys.
  for (int i = 0; i < processes; ++i)
    pids.push_back(vyre::test::spawn_worker(tmp.path(), {"--programs", std::to_string(programs), "--rounds", "3",
                                                         "--bytes", "2048", "--max-entries", "16", "--prefix",
                                                         "q" + std::to_string(i % 3) + "-", "--start-at", start}));
  for (pid_t pid : pids) EXPECT_EQ(vyre::test::wait_worker(pid), 0);

  Cache cache = open(tmp.path());
  auto report = cache.verify();
  EXPECT_TRUE(report.bad.empty());
  EXPECT_EQ(report.incomplete, 0u);
  EXPECT_EQ(count_temporaries(tmp.path()), 0u);
  EXPECT_EQ(cache.stats().bad_entries, 0u);
  EXPECT_GT(cache.stats().evictions, 0u);
  // Every entry left has the text of the program its metadata names.
  for (const auto& info : cache.list()) {
    std::string wgsl;
    auto shown = cache.show(info.key, &wgsl);
    ASSERT_TRUE(shown.has_value());
    EXPECT_EQ(shown->state, vyre::aot::EntryState::ok);
    EXPECT_EQ(wgsl, vyre::test::synthetic_wgsl(info.program, 2048)) << info.program;
  }
  // The next writer restores the bound.
  EXPECT_EQ(vyre::test::run_worker(tmp.path(), {"--programs", "1", "--prefix", "last", "--max-entries", "16"}).exit_code,
            0);
  EXPECT_LE(cache.stats().entries, 16u);
}

TEST(AotConcurrency, ConcurrentCleanupsNeverRunTwiceAtOnceAndKeepTheBound) {
  TempDir tmp;
  {
    CacheOptions options = vyre::test::cache_options();
    options.directory = tmp.path();
    options.max_entries = 0;  // fill without bound first
    Cache filler(options);
    for (int i = 0; i < 200; ++i)
      filler.load_or_compile(vyre::test::synthetic_parts("f" + std::to_string(i)),
                             [&] { return vyre::test::synthetic_wgsl("f" + std::to_string(i)); });
  }
  std::vector<pid_t> pids;
  std::string start = vyre::test::start_line();
  for (int i = 0; i < 8; ++i)
    pids.push_back(vyre::test::spawn_worker(tmp.path(), {"--programs", "1", "--prefix", "c" + std::to_string(i) + "-",
                                                         "--max-entries", "50", "--start-at", start}));
  for (pid_t pid : pids) EXPECT_EQ(vyre::test::wait_worker(pid), 0);
  Cache cache = open(tmp.path());
  auto stats = cache.stats();
  EXPECT_LE(stats.entries, 50u);
  // Evictions are counted once per entry, whichever process ran cleanup.
  EXPECT_EQ(stats.evictions + stats.entries, 208u);
  EXPECT_TRUE(cache.verify().bad.empty());
}

}  // namespace
