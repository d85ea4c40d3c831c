// The cache's tools report what the file system did, not what they asked
// of it: on a read-only mount or an immutable directory nothing is counted
// as removed that is still there, a program lowered but not stored says so,
// a directory planted at an entry name is removed for real (or reported) and
// the key is cached again, and counters that could not be written make
// `cache stats` say it is incomplete.
#include <sys/mount.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/aot_fixtures.hpp"
#include "support/remote_fixtures.hpp"
#include "support/test_support.hpp"

namespace {

using nlohmann::json;
using vyre::test::run_process;
using vyre::test::run_vyre;
using vyre::test::source_path;
using vyre::test::TempDir;
using vyre::test::write_file;

namespace fs = std::filesystem;

class AotUnremovable : public ::testing::Test {
 protected:
  fs::path dir() const { return tmp / "cache"; }
  vyre::test::ProcessResult vyre(const std::vector<std::string>& args) const {
    return run_vyre(args, {{"VYRE_AOT_CACHE_DIR", dir().string()},
                           {"VYRE_BACKEND_FINGERPRINT_OVERRIDE", "backend=test;name=unremovable"},
                           {"VYRE_AOT_CACHE_READONLY_DIRS", ""}});
  }
  json vyre_json(const std::vector<std::string>& args) const {
    auto r = vyre(args);
    return json::parse(r.out.empty() ? "null" : r.out);
  }
  std::string example(const std::string& name) const { return source_path("examples/" + name + ".json").string(); }
  void warm(const std::vector<std::string>& names) const {
    std::vector<std::string> args{"cache", "warm"};
    for (const auto& n : names) args.push_back(example(n));
    auto r = vyre(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  size_t entries() const { return vyre_json({"cache", "ls", "--json"}).size(); }

  TempDir tmp;
};

// chattr +i where the file system and the privileges allow it.
bool make_immutable(const fs::path& dir, bool on) {
  return run_process({"chattr", on ? "+i" : "-i", dir.string()}).exit_code == 0;
}

}  // namespace

TEST_F(AotUnremovable, ClearAndPruneOnAReadOnlyMountReportWhatIsStillThere) {
  warm({"xor", "saxpy", "collatz"});
  std::string how;
  if (!vyre::test::make_read_only(dir(), how)) GTEST_SKIP() << "cannot make a read-only directory here";
  auto cleared = vyre({"cache", "clear"});
  EXPECT_EQ(cleared.exit_code, 6) << how << ": " << cleared.out << cleared.err;
  EXPECT_EQ(cleared.out, "0 entries and 0 driver data folders removed, 3 could not be removed\n") << how;
  EXPECT_NE(cleared.err.find("could not be removed"), std::string::npos) << cleared.err;
  auto pruned = vyre({"cache", "prune", "--max-entries", "0"});
  EXPECT_NE(pruned.exit_code, 0) << how << ": " << pruned.out;
  EXPECT_EQ(pruned.out.find("3 evicted"), std::string::npos) << pruned.out;
  EXPECT_EQ(entries(), 3u) << how;
  vyre::test::release_read_only(dir());
}

TEST_F(AotUnremovable, ClearAndPruneOnAnImmutableDirectoryReportWhatIsStillThere) {
  VYRE_FILES_STORE_ONLY("chattr +i on the directory stops the unlinking of entry files; the database file in it stays writable, so its rows are removed");
  warm({"xor", "saxpy", "collatz"});
  if (!make_immutable(dir(), true)) GTEST_SKIP() << "chattr +i is not possible here (file system or privileges)";
  auto cleared = vyre({"cache", "clear"});
  auto pruned = vyre({"cache", "prune", "--max-entries", "0", "--json"});
  const size_t left = entries();
  ASSERT_TRUE(make_immutable(dir(), false));
  EXPECT_EQ(cleared.exit_code, 6) << cleared.err;
  EXPECT_EQ(cleared.out, "0 entries and 0 driver data folders removed, 3 could not be removed\n");
  EXPECT_NE(cleared.err.find("Operation not permitted"), std::string::npos) << cleared.err;
  EXPECT_EQ(pruned.exit_code, 6) << pruned.err;
  const json report = json::parse(pruned.out);
  EXPECT_EQ(report["evicted"], 0);
  EXPECT_EQ(report["not_removed"], 3);
  EXPECT_EQ(left, 3u);
}

TEST_F(AotUnremovable, WarmOnAReadOnlyMountSaysLoweredButNotStored) {
  warm({"xor"});
  std::string how;
  if (!vyre::test::make_read_only(dir(), how)) GTEST_SKIP() << "cannot make a read-only directory here";
  auto r = vyre({"cache", "warm", example("xor"), example("saxpy")});
  vyre::test::release_read_only(dir());
  EXPECT_EQ(r.exit_code, 6) << how << ": " << r.err;
  EXPECT_NE(r.out.find("0 lowered, 1 already cached, 1 lowered but not stored"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not stored  "), std::string::npos) << r.out;
}

TEST_F(AotUnremovable, ADirectoryAtAnEntryNameIsRemovedAndTheKeyCachedAgain) {
  VYRE_FILES_STORE_ONLY("entry names are file names only in the files store");
  warm({"xor"});
  const std::string key = vyre_json({"cache", "ls", "--json"})[0]["key"];
  const fs::path planted = dir() / (key + ".wgsl");
  // Contents to remove, and links out of it that must not be followed.
  fs::create_directories(tmp / "outside");
  write_file(tmp / "outside" / "keep.txt", "keep");
  auto plant = [&] {
    fs::remove(planted);
    fs::create_directories(planted / "sub");
    write_file(planted / "sub" / "file.txt", "x");
    fs::create_symlink(tmp / "outside", planted / "link-to-dir");
    fs::create_symlink(tmp / "outside" / "keep.txt", planted / "link-to-file");
  };

  plant();
  auto verified = vyre({"cache", "verify", "--json"});
  EXPECT_EQ(verified.exit_code, 1) << verified.err;
  const json report = json::parse(verified.out);
  EXPECT_EQ(report["removed"], 1);
  EXPECT_EQ(report["not_removed"], 0);
  EXPECT_FALSE(fs::exists(fs::symlink_status(planted)));
  EXPECT_EQ(vyre::test::read_file(tmp / "outside" / "keep.txt"), "keep");

  plant();
  auto pruned = vyre({"cache", "prune", "--json"});
  EXPECT_EQ(pruned.exit_code, 0) << pruned.err;
  EXPECT_GE(json::parse(pruned.out)["swept"].get<int>(), 1);
  EXPECT_FALSE(fs::exists(fs::symlink_status(planted)));

  // And with the directory still there, the next lowering replaces it.
  plant();
  auto again = vyre({"cache", "warm", example("xor")});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("1 lowered"), std::string::npos) << again.out;
  EXPECT_EQ(vyre({"cache", "show", key}).exit_code, 0);
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(planted)));
  EXPECT_EQ(vyre::test::read_file(tmp / "outside" / "keep.txt"), "keep");
}

TEST_F(AotUnremovable, ADirectoryOfAnotherUserAtAnEntryNameIsReportedNotRemoved) {
  VYRE_FILES_STORE_ONLY("entry names are file names only in the files store");
  if (geteuid() != 0) GTEST_SKIP() << "giving a directory to another user needs root";
  warm({"xor"});
  const std::string key = vyre_json({"cache", "ls", "--json"})[0]["key"];
  const fs::path planted = dir() / (key + ".wgsl");
  fs::remove(planted);
  fs::create_directory(planted);
  ASSERT_EQ(::chown(planted.c_str(), 12345, 12345), 0) << std::strerror(errno);
  auto verified = vyre({"cache", "verify", "--json"});
  EXPECT_EQ(verified.exit_code, 1) << verified.err;
  const json report = json::parse(verified.out);
  EXPECT_EQ(report["removed"], 0);
  EXPECT_EQ(report["not_removed"], 1);
  EXPECT_NE(report["not_removed_problem"].get<std::string>().find("owned by another user"), std::string::npos)
      << report.dump();
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(planted)));
}

TEST_F(AotUnremovable, StatsSayTheyAreIncompleteWhenCountsCouldNotBeWritten) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs privileges";
  const fs::path mount_point = tmp / "cache";
  fs::create_directories(mount_point);
  if (mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=256k,mode=0700") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  warm({"xor"});
  EXPECT_EQ(vyre_json({"cache", "stats", "--json"})["incomplete"], false);
  // The counts that cannot be written must need a shard file of their own:
  // a shard that exists is rewritten in place, which a full disk still
  // takes (docs/cache.md, "Stats"), and the next process may draw the
  // shard (its pid modulo 8) that the first one wrote. So that one goes.
  for (const auto& e : fs::directory_iterator(mount_point / ".stats"))
    if (e.path().filename().string().starts_with("shard-") && e.path().extension() == ".toml") fs::remove(e.path());
  {  // fill the disk
    std::ofstream filler(mount_point / "filler", std::ios::binary);
    const std::string block(4096, 'x');
    while (filler.write(block.data(), static_cast<std::streamsize>(block.size())) && filler.flush()) {
    }
  }
  (void)vyre({"cache", "warm", example("saxpy"), example("collatz")});  // misses it cannot count
  const json stats = vyre_json({"cache", "stats", "--json"});
  EXPECT_EQ(stats["incomplete"], true) << stats.dump();
  EXPECT_NE(stats["incomplete_reason"].get<std::string>().find("No space left on device"), std::string::npos)
      << stats.dump();
  auto text = vyre({"cache", "stats"});
  EXPECT_NE(text.out.find("incomplete"), std::string::npos) << text.out;
  fs::remove(mount_point / "filler");
  ASSERT_EQ(vyre({"cache", "zero-stats"}).exit_code, 0);
  EXPECT_EQ(vyre_json({"cache", "stats", "--json"})["incomplete"], false);
  umount2(mount_point.c_str(), MNT_DETACH);
}

// Counters of a process that outlives a read-only period are kept and
// written once the directory takes writes again: none is lost, and none is
// reported lost. (A remount of the file system, which binds the
// descriptors the cache holds; a read-only bind mount would not.)
TEST_F(AotUnremovable, CountsMadeWhileTheFileSystemIsReadOnlyAreWrittenWhenItIsWritableAgain) {
  VYRE_FILES_STORE_ONLY("the kernel refuses to remount a file system read-only (EBUSY) while this process holds "
                        "the database open for writing: the read-only period cannot begin under it");
  if (geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs privileges";
  fs::create_directories(dir());
  if (mount("tmpfs", dir().c_str(), "tmpfs", 0, "size=1m,mode=0700") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  auto remount = [&](unsigned long flags) {
    return mount(nullptr, dir().c_str(), nullptr, MS_REMOUNT | flags, "size=1m,mode=0700") == 0;
  };
  {
    vyre::aot::CacheOptions options = vyre::test::cache_options();
    options.directory = dir();
    vyre::aot::Cache cache(options);
    vyre::test::checked_lookup(cache, "before");
    cache.flush();
    ASSERT_TRUE(remount(MS_RDONLY)) << std::strerror(errno);
    for (const char* n : {"during-1", "during-2", "before"}) vyre::test::checked_lookup(cache, n);
    cache.flush();  // refused: kept
    ASSERT_TRUE(remount(0)) << std::strerror(errno);
    const vyre::aot::CacheStats stats = cache.stats();
    EXPECT_EQ(stats.hits + stats.misses, 4u) << "the lookups of the read-only period are counted";
    EXPECT_EQ(stats.hits, 1u);
    EXPECT_FALSE(stats.incomplete) << stats.incomplete_reason;
  }
  umount2(dir().c_str(), MNT_DETACH);
}
