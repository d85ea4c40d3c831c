// Hostile files at an entry's path: symbolic links (to /dev/zero, to another
// user's file, to the user's own file), FIFOs, devices, directories, files
// owned by another user and files far over the read bound. None is followed
// or read past the bound, none hangs a lookup, and the lookup still returns
// the right text.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include "support/aot_fixtures.hpp"
#include "support/stored_entries.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"
#include "vyre/error.hpp"

namespace {

using vyre::aot::Cache;
using vyre::aot::CacheOptions;
using vyre::test::metadata_path;
using vyre::test::read_file;
using vyre::test::synthetic_parts;
using vyre::test::synthetic_wgsl;
using vyre::test::TempDir;
using vyre::test::wgsl_path;
using vyre::test::write_file;

constexpr int kDeadlineSeconds = 20;

constexpr const char* kFilesOnly =
    "hostile files at an entry's file names; the SQLite store's own (a link, a FIFO, a device, a folder at its "
    "database's name) are SqliteStore.HostileFilesAtTheDatabaseNameAreNeverFollowedOrRead";

// Bytes this process has read through read(2) so far.
uint64_t bytes_read_so_far() {
  std::ifstream io("/proc/self/io");
  std::string name;
  uint64_t value = 0;
  while (io >> name >> value)
    if (name == "rchar:") return value;
  return 0;
}

// Runs `body` in a child process with a deadline (a hang is a failure, not a
// stuck test run); returns its exit status, or 128 + signal.
int run_in_child(const std::function<int()>& body) {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(kDeadlineSeconds);
    int code = 99;
    try {
      code = body();
    } catch (...) {
      code = 98;
    }
    _exit(code);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class AotHostile : public ::testing::Test {
 protected:
  static constexpr const char* kName = "victim";

  void SetUp() override {
    CacheOptions options = vyre::test::cache_options();
    options.directory = tmp.path();
    Cache cache(options);
    cache.load_or_compile(synthetic_parts(kName), [] { return synthetic_wgsl(kName, 2048); }, kName);
    key = synthetic_parts(kName).key();
    good_wgsl = vyre::test::read_entry_part(tmp.path(), key, vyre::test::EntryPart::wgsl).value_or("");
    good_metadata = vyre::test::read_entry_part(tmp.path(), key, vyre::test::EntryPart::metadata).value_or("");
  }

  // A lookup in a child process: right text, no hit from the hostile file,
  // reads within the bounds, no hang.
  void expect_refused(const std::string& what) {
    int code = run_in_child([&] {
      CacheOptions options = vyre::test::cache_options();
      options.directory = tmp.path();
      Cache cache(options);
      uint64_t before = bytes_read_so_far();
      int lowered = 0;
      auto artifact = cache.load_or_compile(
          synthetic_parts(kName),
          [&] {
            ++lowered;
            return synthetic_wgsl(kName, 2048);
          },
          kName);
      uint64_t read = bytes_read_so_far() - before;
      if (artifact.text != synthetic_wgsl(kName, 2048)) return 1;
      if (artifact.cache_hit || lowered != 1) return 2;
      if (read > vyre::aot::kMaxWgslBytes + vyre::aot::kMaxMetadataBytes + (1u << 20)) return 3;
      return 0;
    });
    EXPECT_EQ(code, 0) << what << " (1: wrong text, 2: hit, 3: read past the bound, 142: hung)";
  }

  void expect_verify_removes_it(const std::string& what) {
    CacheOptions options = vyre::test::cache_options();
    options.directory = tmp.path();
    Cache cache(options);
    auto report = cache.verify();
    EXPECT_EQ(report.bad.size(), 1u) << what;
    EXPECT_EQ(report.removed, 1u) << what;
    EXPECT_TRUE(cache.verify().bad.empty()) << what;
  }

  void replace_with_symlink(const std::filesystem::path& path, const std::filesystem::path& target) {
    std::filesystem::remove(path);
    std::filesystem::create_symlink(target, path);
  }

  TempDir tmp;
  std::string key, good_wgsl, good_metadata;
};

TEST_F(AotHostile, SymlinkToDevZeroAsWgslIsNeverFollowed) {
  VYRE_FILES_STORE_ONLY(kFilesOnly);
  replace_with_symlink(wgsl_path(tmp.path(), key), "/dev/zero");
  expect_refused("wgsl -> /dev/zero");
  EXPECT_TRUE(std::filesystem::exists("/dev/zero"));
}

TEST_F(AotHostile, SymlinkToDevZeroAsMetadataIsNeverFollowed) {
  VYRE_FILES_STORE_ONLY(kFilesOnly);
  replace_with_symlink(metadata_path(tmp.path(), key), "/dev/zero");
  expect_refused("metadata -> /dev/zero");
}

TEST_F(AotHostile, SymlinkToTheUsersOwnCorrectFileIsStillRefused) {
  VYRE_FILES_STORE_ONLY(kFilesOnly);
  TempDir elsewhere;
  write_file(elsewhere / "copy.wgsl", good_wgsl);
  replace_with_symlink(wgsl_path(tmp.path(), key), elsewhere / "copy.wgsl");
  expect_refused("wgsl -> the user's own copy");
  // The lookup published a real file in the link's place.
  EXPECT_TRUE(std::filesystem::is_regular_file(std::filesystem::symlink_status(wgsl_path(tmp.path(), key))));
  replace_with_symlink(wgsl_path(tmp.path(), key), elsewhere / "copy.wgsl");
  expect_verify_removes_it("wgsl symlink");
  EXPECT_EQ(read_file(elsewhere / "copy.wgsl"), good_wgsl);  // the link went, its target stayed
}

TEST_F(AotHostile, FilesOfAnotherUserAreNeverRead) {
  VYRE_FILES_STORE_ONLY(kFilesOnly);
  if (geteuid() != 0) GTEST_SKIP() << "needs root to create another user's file";
  TempDir elsewhere;
  auto theirs = elsewhere / "theirs.wgsl";
  write_file(theirs, good_wgsl);  // the right content: only the owner rule can refuse it
  ASSERT_EQ(chown(theirs.c_str(), 65534, 65534), 0);
  replace_with_symlink(wgsl_path(tmp.path(), key), theirs);
  expect_refused("wgsl -> another user's file");

  // The same file placed in the directory (not a link) is refused too.
  SetUp();
  auto path = wgsl_path(tmp.path(), key);
  ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0);
  expect_refused("wgsl owned by another user");
  auto meta = metadata_path(tmp.path(), key);
  SetUp();
  ASSERT_EQ(chown(meta.c_str(), 65534, 65534), 0);
  expect_refused("metadata owned by another user");
}

TEST_F(AotHostile, FifoAsWgslNeverBlocks) {
  VYRE_FILES_STORE_ONLY(kFilesOnly);
  auto path = wgsl_path(tmp.path(), key);
  std::filesystem::remove(path);
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  expect_refused("wgsl FIFO");
  SetUp();
}

TEST_F(AotHostile, FifoAsMetadataNeverBlocks) {
  VYRE_FILES_STORE_ONLY(kFilesOnly);
  auto path = metadata_path(tmp.path(), key);
  std::filesystem::remove(path);
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  expect_refused("metadata FIFO");
  // The lookup replaced the FIFO by a good entry.
  EXPECT_TRUE(std::filesystem::is_regular_file(std::filesystem::symlink_status(path)));
}

TEST_F(AotHostile, FifoLeftByAFailedReplacementIsRemovedByVerify) {
  VYRE_FILES_STORE_ONLY(kFilesOnly);
  auto path = metadata_path(tmp.path(), key);
  std::filesystem::remove(path);
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  expect_verify_removes_it("metadata FIFO");
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(path)));
}

TEST_F(AotHostile, DeviceNodeIsNeverOpened) {
  VYRE_FILES_STORE_ONLY(kFilesOnly);
  auto path = wgsl_path(tmp.path(), key);
  std::filesystem::remove(path);
  if (mknod(path.c_str(), S_IFCHR | 0600, makedev(1, 5)) != 0)  // /dev/zero's numbers
    GTEST_SKIP() << "cannot create a device node here";
  expect_refused("wgsl device node");
}

TEST_F(AotHostile, OneGibibyteWgslIsNotReadPastTheBound) {
  VYRE_FILES_STORE_ONLY(kFilesOnly);
  auto path = wgsl_path(tmp.path(), key);
  std::filesystem::resize_file(path, 1ull << 30);  // sparse: no disk used
  expect_refused("1 GiB wgsl");
}

TEST_F(AotHostile, OneGibibyteMetadataIsNotReadPastTheBound) {
  VYRE_FILES_STORE_ONLY(kFilesOnly);
  auto path = metadata_path(tmp.path(), key);
  std::filesystem::resize_file(path, 1ull << 30);
  expect_refused("1 GiB metadata");
}

TEST_F(AotHostile, ADirectoryAtAnEntryNameDoesNotFailTheLookup) {
  VYRE_FILES_STORE_ONLY(kFilesOnly);
  auto path = wgsl_path(tmp.path(), key);
  std::filesystem::remove(path);
  std::filesystem::create_directory(path);
  expect_refused("directory at the wgsl name");
}

TEST_F(AotHostile, KeysAreValidatedBeforeTheyTouchAPath) {
  CacheOptions options = vyre::test::cache_options();
  options.directory = tmp.path();
  Cache cache(options);
  for (std::string bad : {std::string("../../../etc/passwd"), std::string(64, 'A'), std::string(63, 'a') + "/",
                          std::string(64, 'g'), std::string()}) {
    EXPECT_THROW(cache.show(bad), vyre::Error) << bad;
  }
  EXPECT_TRUE(cache.show(key).has_value());
}

TEST_F(AotHostile, UnknownFilesInTheDirectoryAreLeftAlone) {
  write_file(tmp / "notes.txt", "mine");
  write_file(tmp / (std::string(64, 'z') + ".wgsl"), "not a key");
  CacheOptions options = vyre::test::cache_options();
  options.directory = tmp.path();
  options.orphan_grace = std::chrono::seconds(0);
  Cache cache(options);
  cache.verify();
  cache.prune({});
  cache.clear();
  EXPECT_EQ(read_file(tmp / "notes.txt"), "mine");
  EXPECT_TRUE(std::filesystem::exists(tmp / (std::string(64, 'z') + ".wgsl")));
}

}  // namespace
