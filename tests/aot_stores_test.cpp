// The writable directory's two stores, files and the SQLite database, held
// to the same promises by the same tests (TEST_P over both): entries survive
// the process, a damaged entry is never served, the bounds and the LRU hold,
// stats, verify, clear, prune and export/import behave alike, processes
// writing at once and processes killed at random leave only good entries.
// Then what only the database has: its choice, a file that is not a
// database, a fork, a read-only file.
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <random>
#include <thread>

#include "aot/local/sqlite_tier.hpp"
#include "aot/local/store_choice.hpp"
#include "support/aot_fixtures.hpp"
#include "support/aot_processes.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"
#include "vyre/log.hpp"
#include "vyre/lower.hpp"
#include "vyre/version.hpp"

// This program's pread(2): the kernel's, except that while a test sets a cap
// each call moves at most that many bytes, short of the end of the file, as
// reads on FUSE with direct I/O, 9p or CIFS may (tests/fs/fault_fs.c).
namespace {
std::atomic<size_t> pread_cap{0};
std::atomic<int> preads_cut_short{0};
}  // namespace

namespace {
ssize_t capped_pread(int fd, void* buf, size_t count, off_t offset) {
  const size_t cap = pread_cap.load();
  if (cap != 0 && count > cap) {
    count = cap;
    ++preads_cut_short;
  }
  return ::syscall(SYS_pread64, fd, buf, count, offset);
}
}  // namespace

// Both names (the library's objects call one, SQLite the other), given as
// symbols: this file's headers take `pread` for `pread64`.
extern "C" ssize_t test_pread(int fd, void* buf, size_t count, off_t offset) __asm__("pread");
extern "C" ssize_t test_pread64(int fd, void* buf, size_t count, off_t offset) __asm__("pread64");
extern "C" ssize_t test_pread(int fd, void* buf, size_t count, off_t offset) { return capped_pread(fd, buf, count, offset); }
extern "C" ssize_t test_pread64(int fd, void* buf, size_t count, off_t offset) {
  return capped_pread(fd, buf, count, offset);
}

namespace {

namespace fs = std::filesystem;
using vyre::aot::Cache;
using vyre::aot::CacheOptions;
using vyre::aot::CacheStore;
using vyre::aot::EntryState;
using vyre::test::synthetic_parts;
using vyre::test::synthetic_wgsl;
using vyre::test::TempDir;

std::vector<std::string> with(std::vector<std::string> flags, const std::vector<std::string>& more) {
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}

std::string name_of(int i) { return "s" + std::to_string(i); }
std::string key_of(int i) { return synthetic_parts(name_of(i)).key(); }

// The stores under test: files, files on a shared file system (one file
// an entry), the database with its rollback journal (the default), and the
// database in WAL.
enum class Variant { directory, shared_directory, sqlite, sqlite_wal };

CacheStore store_of(Variant v) {
  return v == Variant::directory || v == Variant::shared_directory ? CacheStore::directory : CacheStore::sqlite;
}

CacheOptions options_for(const fs::path& dir, Variant v) {
  CacheOptions options;
  options.directory = dir;
  options.store = store_of(v);
  options.sqlite_wal = v == Variant::sqlite_wal;
  options.shared_file_system = v == Variant::shared_directory;
  options.driver_cache = false;
  return options;
}

CacheOptions options_for(const fs::path& dir, CacheStore store) {
  return options_for(dir, store == CacheStore::sqlite ? Variant::sqlite : Variant::directory);
}

// Looks program i up; true when it was a hit. Fails the test on a wrong text.
bool lookup(Cache& cache, int i, size_t bytes = 600) {
  bool lowered = false;
  auto artifact = cache.load_or_compile(synthetic_parts(name_of(i)), [&] {
    lowered = true;
    return synthetic_wgsl(name_of(i), bytes);
  }, name_of(i));
  EXPECT_EQ(artifact.text, synthetic_wgsl(name_of(i), bytes)) << name_of(i);
  return !lowered;
}

std::string store_name(CacheStore s) { return s == CacheStore::sqlite ? "sqlite" : "directory"; }
std::string variant_name(Variant v) {
  return v == Variant::sqlite_wal ? "sqlite_wal" : v == Variant::shared_directory ? "shared_directory" : store_name(store_of(v));
}

// Changes one byte of the entry's content where the store keeps it.
void damage(const fs::path& dir, CacheStore store, const std::string& key) {
  if (store == CacheStore::directory) {
    fs::path file = vyre::test::wgsl_path(dir, key);
    if (!fs::exists(file)) file = dir / (key + ".entry");  // the one-file form
    std::string text = vyre::test::read_file(file);
    text[text.size() - 10] ^= 1;  // in the content, whichever form
    vyre::test::write_file(file, text);
    return;
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir / vyre::aot::kSqliteStoreName).c_str(), &db), SQLITE_OK);
  const std::string sql = "UPDATE entries SET content = CAST(replace(CAST(content AS TEXT), 'return', 'retuRn') AS BLOB) "
                          "WHERE key = '" + key + "'";
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_changes(db), 1);
  sqlite3_close(db);
}

class Stores : public ::testing::TestWithParam<Variant> {
 protected:
  CacheStore store() const { return store_of(GetParam()); }
  // The worker's flags for this variant.
  std::vector<std::string> store_flags() const {
    std::vector<std::string> flags{"--store", store_name(store())};
    if (GetParam() == Variant::sqlite_wal) flags.push_back("--wal");
    if (GetParam() == Variant::shared_directory) flags.push_back("--shared");
    return flags;
  }
};

TEST_P(Stores, EntriesOutliveTheProcessAndStatsNameTheStore) {
  TempDir tmp;
  {
    Cache cache(options_for(tmp.path(), GetParam()));
    for (int i = 0; i < 5; ++i) EXPECT_FALSE(lookup(cache, i));
  }
  Cache again(options_for(tmp.path(), GetParam()));
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(lookup(again, i));
  auto stats = again.stats();
  EXPECT_EQ(stats.entries, 5u);
  EXPECT_EQ(stats.hits, 5u);
  EXPECT_EQ(stats.misses, 5u);
  EXPECT_EQ(stats.writes, 5u);
  EXPECT_GT(stats.bytes, 5u * 600);
  EXPECT_EQ(stats.store, store_name(store()));
  EXPECT_NE(stats.store_reason.find("VYRE_AOT_CACHE_STORE=" + store_name(store())), std::string::npos);
  const char* journal = GetParam() == Variant::sqlite ? "truncate" : GetParam() == Variant::sqlite_wal ? "wal" : "";
  EXPECT_EQ(stats.journal_mode, journal);
  // Each store keeps its entries its own way, and nothing of the other's.
  const bool pair = fs::exists(vyre::test::wgsl_path(tmp.path(), key_of(0)));
  const bool one_file = fs::exists(tmp / (key_of(0) + ".entry"));
  EXPECT_EQ(pair, GetParam() == Variant::directory);
  EXPECT_EQ(one_file, GetParam() == Variant::shared_directory);
  EXPECT_EQ(stats.shared_file_system, GetParam() == Variant::shared_directory);
  EXPECT_EQ(fs::exists(tmp / vyre::aot::kSqliteStoreName), store() == CacheStore::sqlite);
}

TEST_P(Stores, ADamagedEntryIsNeverServedAndVerifyRemovesIt) {
  TempDir tmp;
  {
    Cache cache(options_for(tmp.path(), GetParam()));
    for (int i = 0; i < 3; ++i) lookup(cache, i);
  }
  damage(tmp.path(), store(), key_of(1));
  Cache cache(options_for(tmp.path(), GetParam()));
  auto report = cache.verify(/*remove_bad=*/false);
  EXPECT_EQ(report.checked, 3u);
  ASSERT_EQ(report.bad.size(), 1u);
  EXPECT_EQ(report.bad[0].key, key_of(1));
  // Looked up, it is lowered again (the right text) and replaces the bad one.
  EXPECT_FALSE(lookup(cache, 1));
  EXPECT_TRUE(lookup(cache, 1));
  EXPECT_GE(cache.stats().bad_entries, 1u);
  damage(tmp.path(), store(), key_of(2));
  auto removed = cache.verify(/*remove_bad=*/true);
  EXPECT_EQ(removed.removed, 1u);
  EXPECT_EQ(cache.verify(false).bad.size(), 0u);
  EXPECT_EQ(cache.stats().entries, 2u);
}

TEST_P(Stores, TheBoundsHoldAndTheLeastRecentlyUsedGoFirst) {
  TempDir tmp;
  CacheOptions options = options_for(tmp.path(), GetParam());
  options.max_entries = 10;
  options.recency_granularity = std::chrono::seconds(0);  // every hit refreshes recency
  Cache cache(options);
  for (int i = 0; i < 8; ++i) lookup(cache, i);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(lookup(cache, 0));  // the oldest write, used last
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (int i = 8; i < 30; ++i) lookup(cache, i);
  cache.flush();
  auto stats = cache.stats();
  EXPECT_LE(stats.entries, 10u);
  EXPECT_GE(stats.evictions, 20u);
  // Entry 1 was written early and never used again: gone before 0 was.
  bool has0 = false, has1 = false;
  for (const auto& e : cache.list()) {
    has0 |= e.key == key_of(0);
    has1 |= e.key == key_of(1);
  }
  EXPECT_FALSE(has1);
  (void)has0;  // 0 may have gone in a later round; 1 must have gone first
  auto pruned = cache.prune(vyre::aot::PruneOptions{0, std::nullopt, std::nullopt, false});
  EXPECT_EQ(pruned.entries, 0u);
  EXPECT_EQ(cache.stats().entries, 0u);
}

TEST_P(Stores, ClearEmptiesIt) {
  TempDir tmp;
  Cache cache(options_for(tmp.path(), GetParam()));
  for (int i = 0; i < 4; ++i) lookup(cache, i);
  EXPECT_EQ(cache.clear(), 4u);
  EXPECT_EQ(cache.stats().entries, 0u);
  EXPECT_TRUE(cache.list().empty());
  EXPECT_FALSE(lookup(cache, 0));
}

TEST_P(Stores, ExportsImportIntoEitherStore) {
  TempDir tmp;
  {
    Cache source(options_for(tmp / "from", GetParam()));
    for (int i = 0; i < 6; ++i) lookup(source, i);
    auto exported = source.export_to(tmp / "shipped");
    EXPECT_EQ(exported.copied, 6u);
  }
  for (CacheStore into : {CacheStore::directory, CacheStore::sqlite}) {
    const fs::path dir = tmp / ("into-" + store_name(into));
    Cache target(options_for(dir, into));
    auto imported = target.import_from(tmp / "shipped");
    EXPECT_EQ(imported.copied, 6u) << store_name(into);
    for (int i = 0; i < 6; ++i) EXPECT_TRUE(lookup(target, i)) << store_name(into);
    EXPECT_EQ(target.stats().store, store_name(into));
    EXPECT_EQ(target.import_from(tmp / "shipped").skipped_present, 6u);
  }
}

TEST_P(Stores, OlderVersionsAreCountedAndPruned) {
  TempDir tmp;
  Cache cache(options_for(tmp.path(), GetParam()));
  for (int i = 0; i < 3; ++i) lookup(cache, i);
  // Two of this version (kVersion, kLoweringVersion) beside them.
  for (const char* name : {"now0", "now1"}) {
    vyre::aot::KeyParts current = synthetic_parts(name);
    current.vyre_version = vyre::kVersion;
    current.lowering_version = vyre::kLoweringVersion;
    cache.load_or_compile(current, [&] { return synthetic_wgsl(name); }, name);
  }
  EXPECT_EQ(cache.stats().older_versions, 3u);  // synthetic_parts: version "test"
  const auto report = cache.prune(vyre::aot::PruneOptions{std::nullopt, std::nullopt, std::nullopt, true});
  EXPECT_EQ(report.older_versions_removed, 3u);
  EXPECT_EQ(cache.stats().older_versions, 0u);
  EXPECT_EQ(cache.stats().entries, 2u);
}

TEST_P(Stores, ProcessesWritingTogetherLeaveOnlyGoodEntries) {
  TempDir tmp;
  const std::string start = vyre::test::start_line();
  std::vector<pid_t> workers;
  for (int w = 0; w < 4; ++w)
    workers.push_back(vyre::test::spawn_worker(
        tmp.path(), with(store_flags(), {"--programs", "40", "--rounds", "3", "--start-at", start})));
  for (pid_t pid : workers) EXPECT_EQ(vyre::test::wait_worker(pid), 0);
  Cache cache(options_for(tmp.path(), GetParam()));
  auto report = cache.verify(false);
  EXPECT_EQ(report.checked, 40u);
  EXPECT_EQ(report.good, 40u);
  EXPECT_TRUE(report.bad.empty());
}

TEST_P(Stores, ProcessesKilledAtRandomLeaveNoTornEntry) {
  TempDir tmp;
  std::mt19937 rng(1234);
  // 1,000 kills for each of the two stores in the suite, 250 for their
  // variants (one-file publication, WAL); 1,000 for every variant with
  // VYRE_STRESS=1 (4,000 took 4 min 10 s on the 2-core machine,
  // docs/cache.md); 50 under the sanitizers, whose workers start several
  // times slower.
#if defined(VYRE_TEST_ASAN) || defined(VYRE_TEST_TSAN)
  const int kills = vyre::test::stress_enabled() ? 1000 : 50;
#else
  const bool a_store = GetParam() == Variant::directory || GetParam() == Variant::sqlite;
  const int kills = vyre::test::stress_enabled() || a_store ? 1000 : 250;
#endif
  for (int k = 0; k < kills; ++k) {
    pid_t pid = vyre::test::spawn_worker(
        tmp.path(), with(store_flags(), {"--forever", "--prefix", "k" + std::to_string(k) + "_", "--bytes", "3000"}));
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + rng() % 40));
    kill(pid, SIGKILL);
    EXPECT_EQ(vyre::test::wait_worker(pid), 128 + SIGKILL);
  }
  Cache cache(options_for(tmp.path(), GetParam()));
  auto report = cache.verify(false);
  EXPECT_TRUE(report.bad.empty()) << report.bad.front().problem;
  EXPECT_GT(report.good, 0u);
  // Every entry left serves its program's text.
  EXPECT_EQ(vyre::test::run_worker(tmp.path(), with(store_flags(), {"--programs", "20", "--prefix", "k0_"})).exit_code, 0);
}

INSTANTIATE_TEST_SUITE_P(EveryStore, Stores,
                         ::testing::Values(Variant::directory, Variant::shared_directory, Variant::sqlite, Variant::sqlite_wal),
                         [](const auto& info) { return variant_name(info.param); });

// ---- the database alone ------------------------------------------------------

TEST(SqliteStore, ChosenBySettingByAnEarlierChoiceOrByAnInodePoorFileSystem) {
  TempDir tmp;
  EXPECT_EQ(vyre::aot::choose_store(tmp.path(), CacheStore::sqlite).store, CacheStore::sqlite);
  EXPECT_EQ(vyre::aot::choose_store(tmp.path(), CacheStore::directory).store, CacheStore::directory);
  // /tmp here has inodes to spare: files, unless a database is already there.
  auto automatic = vyre::aot::choose_store(tmp.path(), CacheStore::automatic);
  if (!automatic.file_system.inode_poor() && !automatic.file_system.network) {
    EXPECT_EQ(automatic.store, CacheStore::directory) << automatic.reason;
  }
  { Cache made(options_for(tmp.path(), CacheStore::sqlite)); }
  auto again = vyre::aot::choose_store(tmp.path(), CacheStore::automatic);
  EXPECT_EQ(again.store, CacheStore::sqlite);
  EXPECT_NE(again.reason.find("chosen earlier"), std::string::npos) << again.reason;
  // The rule itself: under 10,000 inodes free or under 5 %; no count, never.
  vyre::sys::FileSystemFacts fs;
  fs.known = true;
  fs.inodes_total = 1'000'000;
  fs.inodes_free = 60'000;
  EXPECT_FALSE(fs.inode_poor());
  fs.inodes_free = 40'000;
  EXPECT_TRUE(fs.inode_poor());
  fs.inodes_total = 20'000;
  fs.inodes_free = 9'999;
  EXPECT_TRUE(fs.inode_poor());
  fs.inodes_total = 0;  // btrfs
  fs.inodes_free = 0;
  EXPECT_FALSE(fs.inode_poor());
}

TEST(SqliteStore, AFileThatIsNotADatabaseIsMovedAsideAndTheCacheWorks) {
  TempDir tmp;
  fs::create_directories(tmp.path());
  chmod(tmp.path().c_str(), 0700);
  vyre::test::write_file(tmp / vyre::aot::kSqliteStoreName, std::string(8192, 'x'));
  chmod((tmp / vyre::aot::kSqliteStoreName).c_str(), 0600);
  Cache cache(options_for(tmp.path(), CacheStore::sqlite));
  EXPECT_FALSE(lookup(cache, 0));
  EXPECT_TRUE(lookup(cache, 0));
  EXPECT_EQ(cache.stats().store, "sqlite");
  int aside = 0;
  for (const auto& e : fs::directory_iterator(tmp.path()))
    aside += e.path().filename().string().starts_with(std::string(vyre::aot::kSqliteStoreName) + ".corrupt-");
  EXPECT_EQ(aside, 1);
}

// What tests/aot_hostile_test.cpp plants at entry files, at the database's
// name: never followed, opened or waited on; the cache lowers, stores
// nothing beside it, and leaves the thing where it is.
TEST(SqliteStore, HostileFilesAtTheDatabaseNameAreNeverFollowedOrRead) {
  const std::vector<std::pair<std::string, std::function<void(const fs::path&)>>> plants{
      {"a link to /dev/zero", [](const fs::path& p) { fs::create_symlink("/dev/zero", p); }},
      {"a link to a database of the user's", [](const fs::path& p) {
         TempDir elsewhere;
         { Cache made(options_for(elsewhere.path(), CacheStore::sqlite)); lookup(made, 0); }
         fs::copy_file(elsewhere / vyre::aot::kSqliteStoreName, p.parent_path() / "mine.sqlite3");
         fs::create_symlink(p.parent_path() / "mine.sqlite3", p);
       }},
      {"a FIFO", [](const fs::path& p) { ASSERT_EQ(mkfifo(p.c_str(), 0600), 0); }},
      {"a folder", [](const fs::path& p) { fs::create_directory(p); }},
  };
  for (const auto& [what, plant] : plants) {
    TempDir tmp;
    chmod(tmp.path().c_str(), 0700);
    const fs::path db = tmp / vyre::aot::kSqliteStoreName;
    plant(db);
    const auto before = fs::symlink_status(db).type();
    pid_t child = fork();
    if (child == 0) {
      alarm(20);  // a hang is a failure, not a stuck test run
      Cache cache(options_for(tmp.path(), CacheStore::sqlite));
      const bool first = lookup(cache, 0), second = lookup(cache, 0);
      _exit(first || second || ::testing::Test::HasFailure() ? 1 : 0);  // lowered both times, the right text
    }
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << what << ": status " << status;
    EXPECT_EQ(fs::symlink_status(db).type(), before) << what << " was replaced";
    for (const auto& e : fs::directory_iterator(tmp.path()))
      EXPECT_FALSE(e.path().extension() == ".wgsl" || e.path().extension() == ".toml")
          << what << ": an entry file beside the database";
  }
}

TEST(SqliteStore, DamagedPagesBehindAGoodHeaderAreSetAsideAtTheirFirstRead) {
  TempDir tmp;
  {
    Cache cache(options_for(tmp.path(), CacheStore::sqlite));
    for (int i = 0; i < 30; ++i) lookup(cache, i);
  }
  // The header stays (the store opens without a second look); every page
  // after the first is garbage.
  std::string bytes = vyre::test::read_file(tmp / vyre::aot::kSqliteStoreName);
  ASSERT_GT(bytes.size(), 8192u);
  for (size_t i = 4096; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131);
  vyre::test::write_file(tmp / vyre::aot::kSqliteStoreName, bytes);
  Cache cache(options_for(tmp.path(), CacheStore::sqlite));
  for (int round = 0; round < 3; ++round)
    for (int i = 0; i < 3; ++i) lookup(cache, i);  // never a wrong text (lookup checks it)
  EXPECT_TRUE(lookup(cache, 0));  // the new database serves again
  int aside = 0;
  for (const auto& e : fs::directory_iterator(tmp.path()))
    aside += e.path().filename().string().starts_with(std::string(vyre::aot::kSqliteStoreName) + ".corrupt-");
  EXPECT_EQ(aside, 1);
  EXPECT_TRUE(cache.verify(false).bad.empty());
}

// SQLite's default VFS with reads that fail on request as its unix VFS
// reports EIO: SQLITE_IOERR_CORRUPTFS, which SQLite answers as "database disk
// image is malformed" (it takes EIO for a damaged disk), while a network file
// system answers EIO for a moment (tests/fs/fault_fs.c). The default VFS
// while it lives.
class FailingReadsVfs {
 public:
  FailingReadsVfs() {
    real_ = sqlite3_vfs_find(nullptr);
    vfs_ = *real_;
    vfs_.zName = "vyre-test-failing-reads";
    vfs_.pNext = nullptr;
    vfs_.xOpen = open;
    EXPECT_EQ(sqlite3_vfs_register(&vfs_, 1), SQLITE_OK);
  }
  ~FailingReadsVfs() {
    sqlite3_vfs_register(real_, 1);
    sqlite3_vfs_unregister(&vfs_);
  }
  FailingReadsVfs(const FailingReadsVfs&) = delete;
  FailingReadsVfs& operator=(const FailingReadsVfs&) = delete;
  // The next n reads of any database file fail.
  void fail_reads(int n) { to_fail_ = n; }
  int failed() const { return failed_; }

 private:
  // The real VFS opens the file; its methods stay but xRead, which may fail
  // first and otherwise calls the real one with the same file.
  static int open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out) {
    const int rc = real_->xOpen(real_, name, file, flags, out);
    if (rc != SQLITE_OK || file->pMethods == nullptr) return rc;
    real_methods_ = *file->pMethods;
    methods_ = real_methods_;
    methods_.xRead = read;
    file->pMethods = &methods_;
    return rc;
  }
  static int read(sqlite3_file* file, void* buf, int n, sqlite3_int64 offset) {
    if (to_fail_.fetch_sub(1) > 0) {
      ++failed_;
      return SQLITE_IOERR_CORRUPTFS;
    }
    to_fail_ = 0;
    return real_methods_.xRead(file, buf, n, offset);
  }
  static inline sqlite3_vfs* real_ = nullptr;
  static inline sqlite3_vfs vfs_{};
  static inline sqlite3_io_methods real_methods_{}, methods_{};
  static inline std::atomic<int> to_fail_{0};
  static inline std::atomic<int> failed_{0};
};

TEST(SqliteStore, AReadErrorThatSQLiteCallsDamageLeavesTheDatabaseInPlace) {
  // One read that fails, then every read for a while (a server away): the
  // lookups that meet them lower, and the database stays, its entries served.
  for (const int failing : {1, 1'000'000}) {
    TempDir tmp;
    {
      Cache cache(options_for(tmp.path(), CacheStore::sqlite));
      for (int i = 0; i < 10; ++i) lookup(cache, i);
    }
    std::vector<std::string> warnings;
    vyre::set_log_sink([&](vyre::LogLevel, std::string_view m) { warnings.emplace_back(m); });
    {
      FailingReadsVfs vfs;
      Cache cache(options_for(tmp.path(), CacheStore::sqlite));
      EXPECT_TRUE(lookup(cache, 0));
      vfs.fail_reads(failing);
      EXPECT_FALSE(lookup(cache, 1));  // the read failed: lowered (the right text: lookup checks it)
      const bool second = lookup(cache, 2);  // a hit where the one failing read is spent
      EXPECT_TRUE(failing == 1 || !second);
      vfs.fail_reads(0);
      EXPECT_GE(vfs.failed(), 1);
      for (int i = 3; i < 10; ++i) EXPECT_TRUE(lookup(cache, i)) << i;  // the database kept, and served
    }
    vyre::set_log_sink({});
    for (const auto& e : fs::directory_iterator(tmp.path()))
      EXPECT_FALSE(e.path().filename().string().starts_with(std::string(vyre::aot::kSqliteStoreName) + ".corrupt-"))
          << "set aside: " << e.path();
    std::string said;
    for (const auto& w : warnings) said += w + "\n";
    EXPECT_NE(said.find("malformed"), std::string::npos) << said;  // the read, as SQLite put it
    // and what it was: kept
    EXPECT_NE(said.find(failing == 1 ? "finds it sound" : "refuses to read it"), std::string::npos) << said;
    Cache again(options_for(tmp.path(), CacheStore::sqlite));
    EXPECT_EQ(again.stats().entries, 10u);
  }
}

TEST(SqliteStore, AJournalWhoseExistenceCannotBeToldIsNeverTakenForAbsent) {
  // SQLite looks for the journal of an interrupted write before each read;
  // its unix VFS takes any error of that stat() (ESTALE, EIO on a network
  // file system) for "no journal" and reads the file half-written. The
  // store's VFS fails the read instead: here a journal whose stat() fails
  // (ELOOP, a link to itself): lowered, never read past, never set aside.
  TempDir tmp;
  {
    Cache cache(options_for(tmp.path(), CacheStore::sqlite));
    for (int i = 0; i < 3; ++i) lookup(cache, i);
  }
  const fs::path journal = tmp / (std::string(vyre::aot::kSqliteStoreName) + "-journal");
  fs::remove(journal);
  fs::create_symlink(journal.filename(), journal);
  std::vector<std::string> warnings;
  vyre::set_log_sink([&](vyre::LogLevel, std::string_view m) { warnings.emplace_back(m); });
  {
    Cache cache(options_for(tmp.path(), CacheStore::sqlite));
    EXPECT_FALSE(lookup(cache, 0));  // lowered, right (lookup checks the text)
  }
  vyre::set_log_sink({});
  std::string said;
  for (const auto& w : warnings) said += w + "\n";
  EXPECT_NE(said.find("disk I/O error"), std::string::npos) << said;
  fs::remove(journal);
  Cache cache(options_for(tmp.path(), CacheStore::sqlite));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(lookup(cache, i)) << i;  // kept, and served
}

TEST(SqliteStore, AHeaderReadShortIsReadOn) {
  // A read-only layer's database is served only when its header says it is
  // set up; a header read that came back short read as "not set up".
  TempDir layer, mine;
  {
    Cache cache(options_for(layer.path(), CacheStore::sqlite));
    lookup(cache, 0);
  }
  CacheOptions options = options_for(mine.path(), CacheStore::sqlite);
  options.readonly_directories = {layer.path()};
  pread_cap = 7;
  preads_cut_short = 0;
  bool hit = false;
  {
    Cache cache(options);
    hit = lookup(cache, 0);
  }
  pread_cap = 0;
  EXPECT_GT(preads_cut_short.load(), 0);
  EXPECT_TRUE(hit) << "the layer's entry was not served";
}

TEST(SqliteStore, AChildProcessOpensItsOwnConnection) {
#if defined(VYRE_TEST_TSAN)
  // ThreadSanitizer does not support a child of a multi-threaded process
  // that goes on working: its own locks may be held at the fork (a child
  // hung on one), and it ends a child that starts a thread (die_after_fork).
  GTEST_SKIP() << "ThreadSanitizer does not support work in the child of a multi-threaded fork";
#endif
  TempDir tmp;
  Cache cache(options_for(tmp.path(), CacheStore::sqlite));
  EXPECT_FALSE(lookup(cache, 0));  // a first publication: the background thread starts a scan
  pid_t pid = fork();
  if (pid == 0) {
    // The inherited connection is dropped, never used, in the child.
    bool ok = true;
    {
      bool lowered = false;
      auto a = cache.load_or_compile(synthetic_parts(name_of(0)), [&] { lowered = true; return std::string("wrong"); }, "x");
      ok = ok && !lowered && a.text == synthetic_wgsl(name_of(0), 600);
      auto b = cache.load_or_compile(synthetic_parts(name_of(7)), [] { return synthetic_wgsl(name_of(7), 600); }, "x");
      ok = ok && b.text == synthetic_wgsl(name_of(7), 600);
    }
    _exit(ok ? 0 : 1);
  }
  EXPECT_EQ(vyre::test::wait_worker_for(pid, std::chrono::seconds(60)), 0);
  EXPECT_TRUE(lookup(cache, 7));  // the child's write, seen by the parent
  EXPECT_TRUE(lookup(cache, 0));
}

// fork() while the cache's background thread flushes and cleans (every
// dispatch wakes it): the fork waits for it to be at rest, so no child
// inherits a lock held by a thread it does not have (docs/cache.md,
// "Processes that fork"). Each child dispatches with the inherited cache,
// flushes and is destroyed as a process that ends normally would.
TEST(CacheFork, ChildrenForkedWhileTheBackgroundThreadWorksUseTheInheritedCache) {
#if defined(VYRE_TEST_TSAN)
  GTEST_SKIP() << "ThreadSanitizer does not support work in the child of a multi-threaded fork";
#endif
  for (CacheStore store : {CacheStore::directory, CacheStore::sqlite}) {
    SCOPED_TRACE(store == CacheStore::sqlite ? "sqlite" : "directory");
    TempDir tmp;
    CacheOptions options = options_for(tmp.path(), store);
    options.stats_flush_interval = std::chrono::milliseconds(0);
    options.max_entries = 8;  // over the bound: every publication past the 8th cleans
    auto cache = std::make_unique<Cache>(options);
    for (int i = 0; i < 30; ++i) {
      lookup(*cache, i);
      pid_t pid = fork();
      if (pid == 0) {
        const int k = 1000 + i;
        auto made = cache->load_or_compile(synthetic_parts(name_of(k)), [&] { return synthetic_wgsl(name_of(k), 600); }, "x");
        const bool ok = made.text == synthetic_wgsl(name_of(k), 600);
        cache->flush();
        cache.reset();
        _exit(ok ? 0 : 1);
      }
      ASSERT_EQ(vyre::test::wait_worker_for(pid, std::chrono::seconds(60)), 0) << "child " << i;
    }
  }
}

TEST(SqliteStore, AnUnwritableDatabaseServesWhatItHasAndLowersTheRest) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes through file modes";
  TempDir tmp;
  {
    Cache cache(options_for(tmp.path(), CacheStore::sqlite));
    lookup(cache, 0);
  }
  chmod((tmp / vyre::aot::kSqliteStoreName).c_str(), 0400);
  Cache cache(options_for(tmp.path(), CacheStore::sqlite));
  EXPECT_TRUE(lookup(cache, 0));   // opened read-only: served
  EXPECT_FALSE(lookup(cache, 1));  // lowered, not stored: no failure
  EXPECT_FALSE(lookup(cache, 1));
  EXPECT_EQ(cache.stats().entries, 1u);
  chmod((tmp / vyre::aot::kSqliteStoreName).c_str(), 0600);
}

}  // namespace
