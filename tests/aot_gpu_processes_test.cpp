// The cache under real dispatches: many processes compiling and running the
// same programs on the GPU at once, from an empty cache. Every output is
// right (checked against the CPU reference), and the cache is left with one
// good entry per program and nothing torn, bad or orphaned.
#include <gtest/gtest.h>

#include "support/aot_fixtures.hpp"
#include "support/aot_processes.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"

namespace {

using vyre::test::TempDir;

// Starts `argv` with VYRE_AOT_CACHE_DIR set; returns its pid.
pid_t spawn_with_cache(const std::vector<std::string>& argv, const std::filesystem::path& dir) {
  pid_t pid = fork();
  if (pid == 0) {
    setenv("VYRE_AOT_CACHE_DIR", dir.c_str(), 1);
    unsetenv("VYRE_AOT_CACHE_READONLY_DIRS");
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    std::vector<char*> raw;
    for (const auto& a : argv) raw.push_back(const_cast<char*>(a.c_str()));
    raw.push_back(nullptr);
    execv(raw[0], raw.data());
    _exit(127);
  }
  return pid;
}

void expect_clean(const std::filesystem::path& dir, uint64_t programs) {
  vyre::aot::CacheOptions options = vyre::test::cache_options();
  options.directory = dir;
  vyre::aot::Cache cache(options);
  auto report = cache.verify();
  EXPECT_EQ(report.good, programs);
  EXPECT_TRUE(report.bad.empty());
  EXPECT_EQ(report.incomplete, 0u);
  auto stats = cache.stats();
  EXPECT_EQ(stats.writes, programs);  // each key published once, however many processes missed it
  EXPECT_EQ(stats.bad_entries, 0u);
  EXPECT_EQ(stats.errors, 0u);
  for (const auto& e : std::filesystem::directory_iterator(dir))
    EXPECT_FALSE(e.path().filename().string().starts_with(".tmp.")) << e.path();
}

TEST(AotGpuProcesses, SixteenProcessesDispatchTheSameFiftyProgramsFromAnEmptyCache) {
  const int processes = 16;
  const int programs = 50;
  TempDir tmp;
  auto probe = vyre::test::run_process({VYRE_AOT_GPU_WORKER_PATH, "--programs", "0"},
                                       {{"VYRE_AOT_CACHE_DIR", (tmp / "probe").string()}});
  if (probe.exit_code == 4) GTEST_SKIP() << "no GPU adapter: " << probe.err;
  ASSERT_EQ(probe.exit_code, 0) << probe.err;

  auto dir = tmp / "cache";
  // Each worker opens its device first, then all start dispatching together.
  std::string start = vyre::test::start_line(3000);
  std::vector<pid_t> pids;
  for (int i = 0; i < processes; ++i)
    pids.push_back(spawn_with_cache(
        {VYRE_AOT_GPU_WORKER_PATH, "--programs", std::to_string(programs), "--start-at", start}, dir));
  for (pid_t pid : pids) EXPECT_EQ(vyre::test::wait_worker(pid), 0) << "wrong output or failure in a worker";
  expect_clean(dir, programs);
}

TEST(AotGpuProcesses, SixteenVyreRunProcessesOnOneProgramFromAnEmptyCache) {
  TempDir tmp;
  auto dir = tmp / "cache";
  auto probe = vyre::test::run_vyre({"devices"});
  if (probe.exit_code == 4) GTEST_SKIP() << "no GPU adapter";
  std::vector<pid_t> pids;
  for (int i = 0; i < 16; ++i)
    pids.push_back(spawn_with_cache({VYRE_CLI_PATH, "run", vyre::test::source_path("examples/saxpy.json").string(),
                                     "--inputs", vyre::test::source_path("examples/saxpy.run.json").string(),
                                     "--check"},
                                    dir));
  for (pid_t pid : pids) EXPECT_EQ(vyre::test::wait_worker(pid), 0);
  expect_clean(dir, 1);
}

}  // namespace
