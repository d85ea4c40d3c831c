// The driver's pipeline cache kept in vyre's cache, seen as a user sees it:
// `vyre run` processes on the local adapter (lavapipe here, whose Mesa
// shader cache obeys MESA_SHADER_CACHE_DIR), and the library's rule that it
// changes the environment only while the process has one thread.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

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
  EXPECT_TRUE(first["driver_cache"]["active"].get<bool>());
  EXPECT_EQ(first["driver_cache"]["vyres"], first["driver_cache"]["active"]) << "the deprecated key, for one release";
  EXPECT_EQ(first["driver_cache"]["files_before"], 0) << "a new cache: the driver's is cold";

  const json second = run();
  EXPECT_TRUE(second["driver_cache"]["active"].get<bool>());
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
  EXPECT_FALSE(report["driver_cache"]["active"].get<bool>());
  EXPECT_TRUE(contains(report["driver_cache"]["reason"], "own settings")) << report.dump();
  EXPECT_TRUE(driver_folders().empty());
  EXPECT_FALSE(fs::exists(tmp / "cache" / ".driver"));
  if (report["adapter"].get<std::string>().starts_with("llvmpipe")) {
    EXPECT_TRUE(fs::exists(own / "mesa_shader_cache")) << "Mesa used the user's folder";
  }
}

TEST_F(DriverCache, TurnedOffBySetting) {
  const json report = run({{"VYRE_DRIVER_CACHE", "0"}});
  EXPECT_FALSE(report["driver_cache"]["active"].get<bool>());
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

// In a process whose other threads read the environment all the while
// (NumPy's pool in a Python process, a host's threads), the first Backend
// still places the driver cache: the variables arrive in a new environment
// array and no array a reader may hold is freed.
TEST(DriverCacheLibrary, PlacedWhileOtherThreadsReadTheEnvironment) {
  TempDir tmp;
  const pid_t pid = fork();
  if (pid == 0) {
    unsetenv("MESA_SHADER_CACHE_DIR");
    unsetenv("__GL_SHADER_DISK_CACHE_PATH");
    for (int k = 0; k < 64; ++k) setenv(("VYRE_TEST_FILLER_" + std::to_string(k)).c_str(), "x", 1);
    std::atomic<bool> done{false};
    std::atomic<uint64_t> reads{0};
    std::vector<std::thread> readers;
    for (int t = 0; t < 3; ++t)
      readers.emplace_back([&] {
        while (!done.load()) {
          if (std::getenv("VYRE_TEST_FILLER_63") == nullptr) _exit(3);  // an entry never changed, always seen
          (void)std::getenv("MESA_SHADER_CACHE_DIR");
          reads.fetch_add(1);
        }
      });
    while (reads.load() < 1000) std::this_thread::yield();
    aot::CacheOptions options;
    options.directory = tmp / "cache";
    place_driver_cache(options);
    const uint64_t after = reads.load();
    while (reads.load() < after + 1000) std::this_thread::yield();  // readers go on over the new array
    done = true;
    for (auto& r : readers) r.join();
    const auto placed = driver_cache_placement();
    const char* mesa = std::getenv("MESA_SHADER_CACHE_DIR");
    const bool ok = placed && placed->active && mesa != nullptr && placed->driver_path == fs::path(mesa) &&
                    std::getenv("VYRE_TEST_FILLER_0") != nullptr;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(DriverCacheLibrary, PlacedOnlyOnce) {
  TempDir tmp;
  const pid_t pid = fork();
  if (pid == 0) {
    unsetenv("MESA_SHADER_CACHE_DIR");
    unsetenv("__GL_SHADER_DISK_CACHE_PATH");
    aot::CacheOptions options;
    options.directory = tmp / "cache";
    place_driver_cache(options);
    const auto placed = driver_cache_placement();
    const char* mesa = std::getenv("MESA_SHADER_CACHE_DIR");
    const char* nvidia = std::getenv("__GL_SHADER_DISK_CACHE_PATH");
    bool ok = placed && placed->active && mesa != nullptr && nvidia != nullptr &&
              placed->driver_path == fs::path(mesa) && placed->driver_path == fs::path(nvidia) &&
              contains(placed->data_folder.string(), (tmp / "cache" / ".driver").string()) &&
              fs::equivalent(placed->data_folder, mesa);
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

// Runs `body` in a forked child (placement happens once per process) and
// expects it to return true.
template <class F>
void in_child(F&& body) {
  const pid_t pid = fork();
  if (pid == 0) _exit(body() ? 0 : 1);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// The driver's path goes through a descriptor of the directory that was
// checked: moving that directory away and planting a link to another one
// in its place, after the check, leaves the driver where the check was.
TEST(DriverCacheLibrary, TheDriversPathResolvesInsideTheDirectoryThatWasChecked) {
  TempDir tmp;
  fs::create_directories(tmp / "elsewhere");
  in_child([&] {
    unsetenv("MESA_SHADER_CACHE_DIR");
    unsetenv("__GL_SHADER_DISK_CACHE_PATH");
    unsetenv("VYRE_DRIVER_CACHE_SET_BY");
    aot::CacheOptions options;
    options.directory = tmp / "cache";
    const DriverCachePlacement placed = place_driver_cache(options);
    const char* mesa = std::getenv("MESA_SHADER_CACHE_DIR");
    if (!placed.active || mesa == nullptr || !contains(mesa, "/proc/" + std::to_string(::getpid()) + "/fd/")) return false;
    const fs::path checked = fs::canonical(tmp / "cache");
    if (!contains(fs::canonical(mesa).string(), checked.string())) return false;
    fs::rename(tmp / "cache", tmp / "moved");
    fs::create_directory_symlink(tmp / "elsewhere", tmp / "cache");
    const fs::path now = fs::canonical(mesa);
    return contains(now.string(), fs::canonical(tmp / "moved").string()) && !contains(now.string(), "elsewhere");
  });
}

// A cache directory reached through another user's link is refused by
// vyre's cache, and then the drivers' caches are off, not pointed through it.
TEST(DriverCacheLibrary, ARefusedCacheDirectoryTurnsTheDriversCachesOff) {
  if (::geteuid() != 0) GTEST_SKIP() << "making a link of another user needs root";
  TempDir tmp;
  fs::create_directories(tmp / "theirs");
  ASSERT_EQ(::chown((tmp / "theirs").c_str(), 12345, 12345), 0);
  fs::permissions(tmp / "theirs", fs::perms::all);
  fs::create_directory_symlink(tmp / "theirs", tmp / "link");
  ASSERT_EQ(::lchown((tmp / "link").c_str(), 12345, 12345), 0);
  in_child([&] {
    unsetenv("MESA_SHADER_CACHE_DIR");
    unsetenv("MESA_SHADER_CACHE_DISABLE");
    unsetenv("__GL_SHADER_DISK_CACHE");
    unsetenv("__GL_SHADER_DISK_CACHE_PATH");
    unsetenv("VYRE_DRIVER_CACHE_SET_BY");
    aot::CacheOptions options;
    options.directory = tmp / "link";  // the cache directory is another user's link
    const DriverCachePlacement placed = place_driver_cache(options);
    const char* disable = std::getenv("MESA_SHADER_CACHE_DISABLE");
    const char* nvidia = std::getenv("__GL_SHADER_DISK_CACHE");
    return !placed.active && std::getenv("MESA_SHADER_CACHE_DIR") == nullptr && disable != nullptr &&
           std::string(disable) == "true" && nvidia != nullptr && std::string(nvidia) == "0" &&
           contains(placed.reason, "turned off");
  });
  EXPECT_FALSE(fs::exists(tmp / "theirs" / ".driver")) << "nothing of the driver's went there";
}

// Variables a vyre parent set (its /proc/<pid>/fd path means another file
// in a child) are not taken for the user's settings: the child places its
// own.
TEST(DriverCacheLibrary, VariablesInheritedFromAVyreProcessAreReplaced) {
  TempDir tmp;
  in_child([&] {
    setenv("VYRE_DRIVER_CACHE_SET_BY", "1", 1);
    setenv("MESA_SHADER_CACHE_DIR", "/proc/1/fd/3/.driver/x/data", 1);
    setenv("MESA_SHADER_CACHE_MAX_SIZE", "1K", 1);
    aot::CacheOptions options;
    options.directory = tmp / "cache";
    const DriverCachePlacement placed = place_driver_cache(options);
    const char* mesa = std::getenv("MESA_SHADER_CACHE_DIR");
    const char* setter = std::getenv("VYRE_DRIVER_CACHE_SET_BY");
    if (!placed.active) std::fprintf(stderr, "not placed: %s\n", placed.reason.c_str());
    return placed.active && mesa != nullptr && fs::path(mesa) == placed.driver_path &&
           std::string(std::getenv("MESA_SHADER_CACHE_MAX_SIZE") ? std::getenv("MESA_SHADER_CACHE_MAX_SIZE") : "") !=
               "1K" &&
           setter != nullptr &&
           std::string(setter) == std::to_string(::getpid());
  });
}

}  // namespace
}  // namespace vyre::gpu
