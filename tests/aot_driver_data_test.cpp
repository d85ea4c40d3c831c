// The driver's pipeline data inside the cache (aot/driver_store.hpp): one
// folder per full fingerprint, bounded with the entries in one recency
// order, verified, cleared, exported and imported for the same device only.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "aot/local/driver_store.hpp"
#include "support/aot_fixtures.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"

namespace vyre::aot {
namespace {
namespace fs = std::filesystem;
using test::TempDir;

const std::string kH200 = "wgpu-native=29.0.0.0;backend=vulkan;vendor=0x10de;device=0x2335;name=NVIDIA H200;driver=580";
const std::string kOther = "wgpu-native=29.0.0.0;backend=vulkan;vendor=0x10de;device=0x2335;name=NVIDIA H200;driver=590";

CacheOptions options_for(const fs::path& dir) {
  CacheOptions o = vyre::test::cache_options();
  o.directory = dir;
  // The default grace: a sweep running beside a test must not take the
  // temporary file a driver folder is being written through.
  o.orphan_grace = std::chrono::hours(1);
  return o;
}

// Writes `bytes` of driver data into `fingerprint`'s folder, as a driver would.
fs::path fill(const fs::path& cache_dir, const std::string& fingerprint, size_t bytes, const std::string& name = "blob") {
  auto data = driver::data_folder(cache_dir, fingerprint);
  EXPECT_TRUE(data) << data.failure().message;
  fs::create_directories(*data / "mesa_shader_cache" / "ab");
  test::write_file(*data / "mesa_shader_cache" / "ab" / name, std::string(bytes, 'x'));
  return *data;
}

void set_age(const fs::path& path, std::chrono::hours age) {
  fs::last_write_time(path, fs::file_time_type::clock::now() - age);
}

pid_t finished_process() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

TEST(AotDriverData, OneFolderPerFingerprintCountedInStats) {
  TempDir tmp;
  Cache cache(options_for(tmp / "c"));
  fill(tmp / "c", kH200, 1000);
  fill(tmp / "c", kOther, 500);
  const auto folders = cache.driver_folders();
  ASSERT_EQ(folders.size(), 2u);
  for (const auto& f : folders) {
    EXPECT_TRUE(f.ok) << f.problem;
    EXPECT_EQ(f.id, driver::folder_id(f.fingerprint));
    EXPECT_EQ(f.files, 2u) << "the blob and the fingerprint file";
  }
  EXPECT_NE(driver::folder_id(kH200), driver::folder_id(kOther)) << "a driver update is another folder";
  const CacheStats s = cache.stats();
  EXPECT_EQ(s.driver_folders, 2u);
  EXPECT_EQ(s.driver_bytes, 1500u + kH200.size() + kOther.size());
}

TEST(AotDriverData, VerifyRemovesAFolderThatIsNotWhatItsNameSays) {
  TempDir tmp;
  Cache cache(options_for(tmp / "c"));
  fill(tmp / "c", kH200, 10);
  const fs::path folder = tmp / "c" / ".driver" / driver::folder_id(kH200);
  test::write_file(folder / "fingerprint", kOther);  // names another folder
  const fs::path planted = tmp / "c" / ".driver" / driver::folder_id("planted");
  fs::create_directories(planted / "data");  // no fingerprint file at all
  const VerifyReport r = cache.verify();
  EXPECT_EQ(r.driver_checked, 2u);
  ASSERT_EQ(r.driver_bad.size(), 2u);
  EXPECT_EQ(r.removed, 2u);
  EXPECT_FALSE(fs::exists(folder));
  EXPECT_FALSE(fs::exists(planted));
  EXPECT_TRUE(cache.driver_folders().empty());
}

TEST(AotDriverData, ALinkInPlaceOfTheDriverFolderIsNeverFollowed) {
  TempDir tmp;
  fs::create_directories(tmp / "c");
  fs::create_directories(tmp / "elsewhere");
  fs::create_directory_symlink(tmp / "elsewhere", tmp / "c" / ".driver");
  EXPECT_TRUE(driver::list(tmp / "c").empty());
  auto data = driver::data_folder(tmp / "c", kH200);
  ASSERT_FALSE(data);
  EXPECT_EQ(data.failure().kind, sys::Fault::unsafe);
  EXPECT_TRUE(fs::is_empty(tmp / "elsewhere"));
}

TEST(AotDriverData, PruneEvictsByOneRecencyOrderOverEntriesAndDriverFolders) {
  TempDir tmp;
  Cache cache(options_for(tmp / "c"));
  const KeyParts parts{"digest", "", 1, "v", "target=wgsl"};
  cache.load_or_compile(parts, [] { return std::string(2000, ' '); }, "p");
  fill(tmp / "c", kH200, 3000);
  fill(tmp / "c", kOther, 3000);
  // The H200 folder was used long ago; the other and the entry are fresh.
  set_age(tmp / "c" / ".driver" / driver::folder_id(kH200) / "fingerprint", std::chrono::hours(48));
  PruneOptions prune;
  prune.max_bytes = 6000;
  const PruneReport r = cache.prune(prune);
  EXPECT_EQ(r.driver_evicted, 1u);
  EXPECT_EQ(r.evicted, 0u);
  const auto left = cache.driver_folders();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].fingerprint, kOther);
  EXPECT_LE(r.bytes, 6000u);
  PruneOptions old;
  old.older_than = std::chrono::hours(1);
  set_age(tmp / "c" / ".driver" / driver::folder_id(kOther) / "fingerprint", std::chrono::hours(2));
  EXPECT_EQ(cache.prune(old).driver_evicted, 1u);
  EXPECT_EQ(cache.stats().entries, 1u) << "the fresh entry stays";
}

TEST(AotDriverData, ClearRemovesTheDriverFolders) {
  TempDir tmp;
  Cache cache(options_for(tmp / "c"));
  fill(tmp / "c", kH200, 10);
  uint64_t folders = 0;
  NotRemoved left;
  cache.clear(&left, &folders);
  EXPECT_EQ(folders, 1u);
  EXPECT_EQ(left.count, 0u);
  EXPECT_TRUE(cache.driver_folders().empty());
}

TEST(AotDriverData, ImportTakesOnlyTheFolderOfTheDeviceNamed) {
  TempDir tmp;
  Cache source(options_for(tmp / "a"));
  fill(tmp / "a", kH200, 100, "h200");
  fill(tmp / "a", kOther, 100, "other");
  const TransferReport exported = source.export_to(tmp / "export");
  EXPECT_EQ(exported.driver_copied, 2u);

  Cache machine(options_for(tmp / "b"));
  const TransferReport imported = machine.import_from(tmp / "export", kH200);
  EXPECT_EQ(imported.driver_copied, 1u);
  EXPECT_EQ(imported.driver_skipped_other, 1u);
  ASSERT_EQ(imported.driver_skipped_fingerprints.size(), 1u);
  EXPECT_EQ(imported.driver_skipped_fingerprints[0], kOther);
  const auto folders = machine.driver_folders();
  ASSERT_EQ(folders.size(), 1u);
  EXPECT_EQ(folders[0].fingerprint, kH200);
  EXPECT_TRUE(fs::exists(folders[0].path / "data" / "mesa_shader_cache" / "ab" / "h200"));
  // Again: already there.
  EXPECT_EQ(machine.import_from(tmp / "export", kH200).driver_copied, 0u);
  // Without a device named, no driver data comes in.
  Cache bare(options_for(tmp / "d"));
  const TransferReport none = bare.import_from(tmp / "export");
  EXPECT_EQ(none.driver_copied, 0u);
  EXPECT_EQ(none.driver_skipped_other, 2u);
  EXPECT_TRUE(bare.driver_folders().empty());
}

TEST(AotDriverData, AFinishedFirstStartIsFiledUnderItsFingerprintByTheNext) {
  TempDir tmp;
  const fs::path dir = tmp / "c";
  // A first start: its adapter was not known when the driver was pointed here.
  auto pending = driver::pending_data_folder(dir);
  ASSERT_TRUE(pending);
  test::write_file(*pending / "pipeline", "compiled");
  ASSERT_TRUE(driver::mark_pending(*pending, kH200));
  // This process is alive: nothing is adopted yet.
  EXPECT_EQ(driver::adopt_finished_pending(dir), 0u);
  // The same, from a process that has ended.
  const fs::path ended = dir / ".driver" / ("pending-" + std::to_string(finished_process()) + "-0");
  fs::rename(pending->parent_path(), ended);
  EXPECT_EQ(driver::adopt_finished_pending(dir), 1u);
  const auto folders = driver::list(dir);
  ASSERT_EQ(folders.size(), 1u);
  EXPECT_EQ(folders[0].fingerprint, kH200);
  EXPECT_EQ(test::read_file(folders[0].path / "data" / "pipeline"), "compiled");
  EXPECT_FALSE(fs::exists(ended));

  // A second finished first start merges into the folder, keeping what is there.
  const fs::path again = dir / ".driver" / ("pending-" + std::to_string(finished_process()) + "-1");
  fs::create_directories(again / "data");
  test::write_file(again / "data" / "pipeline", "newer");
  test::write_file(again / "data" / "another", "x");
  test::write_file(again / "fingerprint", kH200);
  EXPECT_EQ(driver::adopt_finished_pending(dir), 1u);
  EXPECT_EQ(test::read_file(folders[0].path / "data" / "pipeline"), "compiled");
  EXPECT_EQ(test::read_file(folders[0].path / "data" / "another"), "x");
  EXPECT_FALSE(fs::exists(again));
}

TEST(AotDriverData, AnUnmarkedPendingFolderIsSweptAsAnOrphan) {
  TempDir tmp;
  Cache cache(options_for(tmp / "c"));
  const fs::path orphan = tmp / "c" / ".driver" / ("pending-" + std::to_string(finished_process()) + "-0");
  fs::create_directories(orphan / "data");
  set_age(orphan, std::chrono::hours(2));
  EXPECT_EQ(driver::adopt_finished_pending(tmp / "c"), 0u) << "no fingerprint: nothing to file it under";
  const PruneReport r = cache.prune({});
  EXPECT_GE(r.swept, 1u);
  EXPECT_FALSE(fs::exists(orphan));
}

TEST(AotDriverData, TheSelectionRecordNamesAFolderOrNothing) {
  TempDir tmp;
  EXPECT_FALSE(driver::read_selection(tmp / "c", "sel"));
  driver::write_selection(tmp / "c", "sel", driver::folder_id(kH200));
  EXPECT_EQ(driver::read_selection(tmp / "c", "sel"), driver::folder_id(kH200));
  test::write_file(tmp / "c" / ".driver" / "selection-bad", "../../etc");
  EXPECT_FALSE(driver::read_selection(tmp / "c", "bad")) << "only a folder id is ever read back";
}

}  // namespace
}  // namespace vyre::aot
