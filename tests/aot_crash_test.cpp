// Crashes: a writer killed with SIGKILL at any point of a publication (or of
// a cleanup) leaves a valid cache: every hit is a verified good entry with
// the right text, and `verify` finds nothing bad.
#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "support/aot_fixtures.hpp"
#include "support/aot_processes.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"

namespace {

using vyre::aot::Cache;
using vyre::aot::CacheOptions;
using vyre::test::synthetic_parts;
using vyre::test::synthetic_wgsl;
using vyre::test::TempDir;

const char* const kSteps[] = {"wgsl-temp", "wgsl-renamed", "metadata-temp", "metadata-renamed"};

Cache open(const std::filesystem::path& dir, std::chrono::seconds grace = std::chrono::seconds(3600)) {
  CacheOptions options = vyre::test::cache_options();
  options.directory = dir;
  options.orphan_grace = grace;
  return Cache(options);
}

// The state a crash left: lookups give the right text, hits only from
// committed entries, verify clean; then a sweep leaves no orphan.
void expect_valid_after_crash(const std::filesystem::path& dir, const std::string& program, size_t bytes,
                              bool committed, const std::string& what) {
  Cache cache = open(dir);
  auto report = cache.verify(false);
  EXPECT_TRUE(report.bad.empty()) << what;
  int lowered = 0;
  auto artifact = cache.load_or_compile(synthetic_parts(program), [&] {
    ++lowered;
    return synthetic_wgsl(program, bytes);
  });
  EXPECT_EQ(artifact.text, synthetic_wgsl(program, bytes)) << what;
  EXPECT_EQ(artifact.cache_hit, committed) << what;
  EXPECT_TRUE(cache.verify().bad.empty()) << what;
}

TEST(AotCrash, KilledAtEachStepOfAPublicationLeavesAValidCache) {
  VYRE_FILES_STORE_ONLY("its crash points are the steps of the files store's publication (temporary files and their renames); a row is one transaction, killed at random moments in Stores.* and below");
  for (const char* step : kSteps) {
    TempDir tmp;
    auto killed = vyre::test::run_worker(tmp.path(), {"--programs", "1", "--bytes", "4096", "--crash-at", step});
    ASSERT_EQ(killed.term_signal, SIGKILL) << step;
    expect_valid_after_crash(tmp.path(), "p0", 4096, std::string(step) == "metadata-renamed", step);
  }
}

TEST(AotCrash, KilledWhileReplacingABadEntryLeavesAValidCache) {
  VYRE_FILES_STORE_ONLY("its crash points are the steps of the files store's publication (temporary files and their renames); a row is one transaction, killed at random moments in Stores.* and below");
  for (const char* step : kSteps) {
    TempDir tmp;
    ASSERT_EQ(vyre::test::run_worker(tmp.path(), {"--programs", "1", "--bytes", "4096"}).exit_code, 0);
    auto wgsl = vyre::test::wgsl_path(tmp.path(), synthetic_parts("p0").key());
    std::string text = vyre::test::read_file(wgsl);
    text[100] ^= 1;
    vyre::test::write_file(wgsl, text);
    auto killed = vyre::test::run_worker(tmp.path(), {"--programs", "1", "--bytes", "4096", "--crash-at", step});
    ASSERT_EQ(killed.term_signal, SIGKILL) << step;
    expect_valid_after_crash(tmp.path(), "p0", 4096, std::string(step) == "metadata-renamed", step);
  }
}

TEST(AotCrash, OrphansOfCrashedWritersAreSweptAfterTheGracePeriod) {
  VYRE_FILES_STORE_ONLY("its crash points are the steps of the files store's publication (temporary files and their renames); a row is one transaction, killed at random moments in Stores.* and below");
  TempDir tmp;
  for (const char* step : {"wgsl-temp", "wgsl-renamed", "metadata-temp"})
    vyre::test::run_worker(tmp.path(), {"--programs", "1", "--prefix", step, "--crash-at", step});
  {
    Cache cache = open(tmp.path());
    auto kept = cache.prune({});
    EXPECT_EQ(kept.swept, 0u);  // younger than the grace period: maybe a writer still at work
  }
  // File times come from the kernel's coarse clock: let the newest orphan be
  // strictly older than "now" before a zero grace period judges it.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Cache cache = open(tmp.path(), std::chrono::seconds(0));
  auto report = cache.prune({});
  EXPECT_EQ(report.swept, 4u);  // two temporaries, one unpaired WGSL, one temporary metadata
  for (const auto& e : std::filesystem::directory_iterator(tmp.path())) {
    std::string name = e.path().filename().string();
    EXPECT_TRUE(name == ".locks" || name == ".stats") << name;
  }
}

TEST(AotCrash, WritersKilledAtRandomMomentsLeaveOnlyGoodEntries) {
  const int kills = vyre::test::stress_enabled() ? 400 : 40;
  const size_t bytes = 64 * 1024;
  TempDir tmp;
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> delay_us(2'000, 40'000);
  // One round in five waits longer, so that some writers get entries in on
  // a loaded machine (a process takes tens of ms to start there): the
  // verification below then has something to check.
  std::uniform_int_distribution<int> long_delay_us(100'000, 300'000);
  int killed_by_signal = 0;
  for (int i = 0; i < kills; ++i) {
    // Two writers at once, a tight bound (cleanup evicts all the time), and a
    // kill at a random moment: mid-write, mid-rename, mid-cleanup.
    pid_t a = vyre::test::spawn_worker(tmp.path(), {"--forever", "--bytes", std::to_string(bytes), "--max-entries",
                                                    "12", "--prefix", "a"});
    pid_t b = vyre::test::spawn_worker(tmp.path(), {"--forever", "--bytes", std::to_string(bytes), "--max-entries",
                                                    "12", "--prefix", "b"});
    std::this_thread::sleep_for(std::chrono::microseconds(i % 5 == 4 ? long_delay_us(rng) : delay_us(rng)));
    kill(a, SIGKILL);
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng) / 8));
    kill(b, SIGKILL);
    killed_by_signal += vyre::test::wait_worker(a) == 128 + SIGKILL;
    killed_by_signal += vyre::test::wait_worker(b) == 128 + SIGKILL;
  }
  EXPECT_EQ(killed_by_signal, 2 * kills);

  Cache cache = open(tmp.path());
  auto report = cache.verify(false);
  EXPECT_TRUE(report.bad.empty());
  EXPECT_GT(report.good, 0u) << "no writer got far enough: the kills came too early to test anything";
  for (const auto& info : cache.list()) {
    if (info.state != vyre::aot::EntryState::ok) continue;
    std::string wgsl;
    auto shown = cache.show(info.key, &wgsl);
    ASSERT_TRUE(shown.has_value());
    EXPECT_EQ(shown->state, vyre::aot::EntryState::ok);
    EXPECT_EQ(wgsl, synthetic_wgsl(info.program, bytes)) << info.program;
    // A hit returns exactly that verified text.
    auto hit = cache.load_or_compile(shown->parts, [] { return std::string("lowered again"); });
    EXPECT_TRUE(hit.cache_hit);
    EXPECT_EQ(hit.text, wgsl);
  }
}

}  // namespace
