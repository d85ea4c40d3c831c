// The driver's pipeline cache kept in vyre's cache, seen as a user sees it:
// `vyre run` processes on the local adapter (lavapipe here, whose Mesa
// shader cache obeys MESA_SHADER_CACHE_DIR), and the library's rule that it
// changes the environment only while the process has one thread.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "gpu/driver_cache.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"
#include "vyre/driver_cache.hpp"

namespace vyre::gpu {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using test::contains;
using test::run_vyre;
using test::TempDir;

class DriverCache : public ::testing::Test {
 protected:
  std::map<std::string, std::string> env() const {
    return {{"VYRE_AOT_CACHE_DIR", (tmp / "cache").string()}, {"VYRE_AOT_CACHE_READONLY_DIRS", ""}};
  }
  // One `vyre run` of softmax (a loop, so lavapipe compiles a real pipeline);
  // returns its report.
  json run(std::map<std::string, std::string> extra = {}) const {
    auto e = env();
    for (auto& [k, v] : extra) e[k] = v;
    const fs::path report = tmp / "report.json";
    auto r = run_vyre({"run", test::source_path("examples/softmax.json").string(), "--inputs",
                       test::source_path("examples/softmax.run.json").string(), "--check", "--report-json",
                       report.string()},
                      e);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(test::read_file(report));
  }
  std::string adapter_fingerprint() const {
    auto r = run_vyre({"devices", "--json"}, env());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out)[0]["fingerprint"];
  }
  json driver_folders() const {
    auto r = run_vyre({"cache", "ls", "--driver-data", "--json"}, env());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }
  TempDir tmp;
};

TEST_F(DriverCache, TheFirstRunFillsAFolderOfTheAdaptersFingerprintAndTheNextFindsItWarm) {
  const json first = run();
  if (!first["adapter"].get<std::string>().starts_with("llvmpipe"))
    GTEST_SKIP() << "the file counts below are Mesa's; adapter " << first["adapter"];
  EXPECT_TRUE(first["driver_cache"]["vyres"].get<bool>());
  EXPECT_EQ(first["driver_cache"]["files_before"], 0) << "a new cache: the driver's is cold";

  const json second = run();
  EXPECT_TRUE(second["driver_cache"]["vyres"].get<bool>());
  EXPECT_GT(second["driver_cache"]["files_before"].get<int>(), 0) << "the first run's pipelines are there";
  EXPECT_TRUE(second["cache_hit"].get<bool>());

  const json folders = driver_folders();
  ASSERT_EQ(folders.size(), 1u) << folders.dump();
  EXPECT_EQ(folders[0]["fingerprint"], adapter_fingerprint());
  EXPECT_TRUE(folders[0]["ok"].get<bool>());
  EXPECT_TRUE(fs::exists(fs::path(folders[0]["path"].get<std::string>()) / "data" / "mesa_shader_cache"));
  EXPECT_EQ(fs::path(second["driver_cache"]["folder"].get<std::string>()).parent_path(),
            fs::path(folders[0]["path"].get<std::string>()));

  // verify finds it sound; stats count it; clear removes it.
  auto verify = run_vyre({"cache", "verify"}, env());
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_TRUE(contains(verify.out, "1 driver data folders checked, 0 bad")) << verify.out;
  auto stats = json::parse(run_vyre({"cache", "stats", "--json"}, env()).out);
  EXPECT_EQ(stats["driver_folders"], 1);
  EXPECT_GT(stats["driver_bytes"].get<uint64_t>(), 0u);
  auto cleared = run_vyre({"cache", "clear"}, env());
  EXPECT_TRUE(contains(cleared.out, "and 1 driver data folders removed")) << cleared.out;
  EXPECT_TRUE(driver_folders().empty());
}

TEST_F(DriverCache, TheUsersOwnDriverSettingsAreLeftAlone) {
  const fs::path own = tmp / "own-mesa-cache";
  const json report = run({{"MESA_SHADER_CACHE_DIR", own.string()}, {"__GL_SHADER_DISK_CACHE_PATH", own.string()}});
  EXPECT_FALSE(report["driver_cache"]["vyres"].get<bool>());
  EXPECT_TRUE(contains(report["driver_cache"]["reason"], "own settings")) << report.dump();
  EXPECT_TRUE(driver_folders().empty());
  EXPECT_FALSE(fs::exists(tmp / "cache" / ".driver"));
  if (report["adapter"].get<std::string>().starts_with("llvmpipe")) {
    EXPECT_TRUE(fs::exists(own / "mesa_shader_cache")) << "Mesa used the user's folder";
  }
}

TEST_F(DriverCache, TurnedOffBySetting) {
  const json report = run({{"VYRE_DRIVER_CACHE", "0"}});
  EXPECT_FALSE(report["driver_cache"]["vyres"].get<bool>());
  EXPECT_TRUE(contains(report["driver_cache"]["reason"], "turned off")) << report.dump();
  EXPECT_FALSE(fs::exists(tmp / "cache" / ".driver"));
}

TEST_F(DriverCache, VerboseSaysWhichCacheMadeEachStageFast) {
  run();
  auto e = env();
  auto r = run_vyre({"run", test::source_path("examples/softmax.json").string(), "--inputs",
                     test::source_path("examples/softmax.run.json").string(), "--verbose"},
                    e);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "vyre's cache hit: lowering skipped")) << r.err;
  EXPECT_TRUE(contains(r.err, "driver pipeline cache: vyre's, warm (")) << r.err;
}

// In a process with several threads the library does not touch the
// environment: setenv would race their getenv.
TEST(DriverCacheLibrary, NotPlacedWhenTheProcessHasSeveralThreads) {
  TempDir tmp;
  const pid_t pid = fork();
  if (pid == 0) {
    std::thread other([] { std::this_thread::sleep_for(std::chrono::milliseconds(500)); });
    aot::CacheOptions options;
    options.directory = tmp / "cache";
    place_driver_cache_if_safe(options);
    const auto placed = driver_cache_placement();
    const bool refused = placed && !placed->active && contains(placed->reason, "several threads") &&
                         std::getenv("MESA_SHADER_CACHE_DIR") == nullptr;
    other.join();
    _exit(refused ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(DriverCacheLibrary, PlacedWhenSingleThreadedAndOnlyOnce) {
  TempDir tmp;
  const pid_t pid = fork();
  if (pid == 0) {
    unsetenv("MESA_SHADER_CACHE_DIR");
    unsetenv("__GL_SHADER_DISK_CACHE_PATH");
    aot::CacheOptions options;
    options.directory = tmp / "cache";
    place_driver_cache_if_safe(options);
    const auto placed = driver_cache_placement();
    const char* mesa = std::getenv("MESA_SHADER_CACHE_DIR");
    const char* nvidia = std::getenv("__GL_SHADER_DISK_CACHE_PATH");
    bool ok = placed && placed->active && mesa != nullptr && nvidia != nullptr &&
              placed->data_folder == fs::path(mesa) && placed->data_folder == fs::path(nvidia) &&
              contains(mesa, (tmp / "cache" / ".driver").string());
    // A second call keeps the first placement.
    aot::CacheOptions other;
    other.directory = tmp / "elsewhere";
    ok = ok && place_driver_cache(other).data_folder == placed->data_folder;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace vyre::gpu
