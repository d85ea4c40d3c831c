// The cache's inspection commands (`vyre cache explain`, `ls`, `stats`,
// `show`) read: they never open a GPU device and never write, not even the
// cache directory they are pointed at, and explain names the key a run uses
// from the adapter alone.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "support/test_support.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using vyre::test::run_vyre;
using vyre::test::source_path;
using vyre::test::TempDir;

// Every path under `root` with its size and modification time: a write, a
// new file, a rename or a removal changes it.
std::set<std::string> tree(const fs::path& root) {
  std::set<std::string> out;
  std::error_code ec;
  if (!fs::exists(root, ec)) return out;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const auto status = it->symlink_status(ec);
    std::string line = it->path().string();
    if (fs::is_regular_file(status)) line += " " + std::to_string(fs::file_size(it->path(), ec));
    line += " " + std::to_string(fs::last_write_time(it->path(), ec).time_since_epoch().count());
    out.insert(line);
  }
  return out;
}

class CacheInspection : public ::testing::Test {
 protected:
  // The GPU's log line says whether a device was opened (VYRE_LOG=debug);
  // HOME and XDG_CACHE_HOME point into the temporary directory, so that a
  // driver writing to its default cache would be seen too.
  std::map<std::string, std::string> env() const {
    return {{"VYRE_AOT_CACHE_DIR", cache.string()},
            {"VYRE_AOT_CACHE_READONLY_DIRS", ""},
            {"HOME", (dir.path() / "home").string()},
            {"XDG_CACHE_HOME", ""},
            {"VYRE_LOG", "debug"}};
  }
  vyre::test::ProcessResult vyre(const std::vector<std::string>& args) const { return run_vyre(args, env()); }
  std::vector<std::vector<std::string>> inspections() const {
    return {{"cache", "explain", program},   {"cache", "explain", program, "--json"},
            {"cache", "ls"},                     {"cache", "ls", "--json"},
            {"cache", "ls", "--driver-data"},    {"cache", "stats"},
            {"cache", "stats", "--json"}};
  }

  TempDir dir;
  fs::path cache = dir.path() / "cache";
  // Four elements, so the run takes the widened shader explain names first.
  std::string program = source_path("examples/saxpy.json").string();
};

TEST_F(CacheInspection, OnACacheNotMadeYetNothingIsCreatedAndNoDeviceOpened) {
  fs::create_directories(dir.path() / "home");
  for (const auto& args : inspections()) {
    auto r = vyre(args);
    EXPECT_EQ(r.exit_code, 0) << args[1] << " " << r.err;
    EXPECT_EQ(r.err.find("opened GPU device"), std::string::npos) << args[1] << " opened a device:\n" << r.err;
    EXPECT_FALSE(fs::exists(cache)) << args[1] << " made the cache directory";
    EXPECT_TRUE(tree(dir.path() / "home").empty()) << args[1] << " wrote under HOME";
  }
  auto stats = vyre({"cache", "stats"});
  EXPECT_NE(stats.out.find(cache.string() + " (not made yet: nothing cached)"), std::string::npos) << stats.out;
  auto listed = vyre({"cache", "ls", "--json"});
  EXPECT_EQ(json::parse(listed.out), json::array()) << listed.out;
  auto explained = json::parse(vyre({"cache", "explain", program, "--json"}).out);
  EXPECT_FALSE(explained["hit"].get<bool>());
  auto shown = vyre({"cache", "show", "abcd"});
  EXPECT_EQ(shown.exit_code, 3) << shown.err;  // no such entry, and still nothing made
  EXPECT_FALSE(fs::exists(cache));
}

TEST_F(CacheInspection, AfterARunNothingChangesAndExplainNamesTheRunsKey) {
  auto run = vyre({"run", program, "--inputs", source_path("examples/saxpy.run.json").string(), "--check"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.err.find("opened GPU device"), std::string::npos) << "the log line these tests look for is gone";
  // The run's first start leaves its driver data pending; reading must not
  // file it (a later GPU process does).
  const auto before = tree(dir.path());
  const json entries = json::parse(vyre({"cache", "ls", "--json"}).out);
  ASSERT_EQ(entries.size(), 1u) << entries.dump();
  std::vector<std::vector<std::string>> all = inspections();
  all.push_back({"cache", "show", entries[0]["key"].get<std::string>().substr(0, 8)});
  for (const auto& args : all) {
    auto r = vyre(args);
    EXPECT_EQ(r.exit_code, 0) << args[1] << " " << r.err;
    EXPECT_EQ(r.err.find("opened GPU device"), std::string::npos) << args[1] << " opened a device:\n" << r.err;
    EXPECT_EQ(tree(dir.path()), before) << args[1] << " " << (args.size() > 2 ? args[2] : "") << " wrote";
  }
  const json explained = json::parse(vyre({"cache", "explain", program, "--json"}).out);
  EXPECT_TRUE(explained["hit"].get<bool>()) << explained.dump();
  EXPECT_EQ(explained["key"], entries[0]["key"]);
  // The driver data the run wrote is seen where it will be filed.
  ASSERT_TRUE(explained["driver_folder"].is_object()) << explained.dump();
  EXPECT_GT(explained["driver_folder"]["files"].get<uint64_t>(), 0u) << explained.dump();
  const json stats = json::parse(vyre({"cache", "stats", "--json"}).out);
  EXPECT_EQ(stats["driver_folders"].get<uint64_t>(), 1u) << stats.dump();
  EXPECT_GT(stats["driver_bytes"].get<uint64_t>(), 0u) << stats.dump();
}

}  // namespace
