// The cache's basic promises: a miss lowers and publishes, a hit returns the
// same text without lowering, entries carry honest metadata, the directory
// is private, and a cache that cannot be used never fails a lookup.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "aot/local/sqlite_tier.hpp"
#include "support/aot_fixtures.hpp"
#include "support/stored_entries.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"
#include "vyre/lower.hpp"

namespace {

using vyre::aot::Cache;
using vyre::aot::CacheOptions;
using vyre::test::synthetic_parts;
using vyre::test::synthetic_wgsl;
using vyre::test::TempDir;

CacheOptions options_for(const std::filesystem::path& dir) {
  CacheOptions options = vyre::test::cache_options();
  options.directory = dir;
  return options;
}

// Looks up a synthetic program, counting how often it had to be lowered.
vyre::aot::Artifact lookup(Cache& cache, const std::string& name, int* lowered = nullptr) {
  return cache.load_or_compile(
      synthetic_parts(name),
      [&] {
        if (lowered != nullptr) ++*lowered;
        return synthetic_wgsl(name);
      },
      name);
}

mode_t mode_of(const std::filesystem::path& p) {
  struct stat st {};
  EXPECT_EQ(lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

using vyre::test::ScopedEnv;

TEST(AotCache, MissLowersThenHitReturnsTheSameTextWithoutLowering) {
  TempDir tmp;
  Cache cache(options_for(tmp.path()));
  int lowered = 0;
  auto first = lookup(cache, "a", &lowered);
  EXPECT_FALSE(first.cache_hit);
  EXPECT_EQ(first.text, synthetic_wgsl("a"));
  EXPECT_EQ(first.key, synthetic_parts("a").key());
  EXPECT_GE(first.lower_ms, 0.0);
  auto second = lookup(cache, "a", &lowered);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.text, first.text);
  EXPECT_EQ(second.key, first.key);
  EXPECT_EQ(second.lower_ms, 0.0);
  EXPECT_EQ(lowered, 1);
}

TEST(AotCache, AnotherCacheOnTheSameDirectoryHits) {
  TempDir tmp;
  { Cache writer(options_for(tmp.path())); lookup(writer, "shared"); }
  Cache reader(options_for(tmp.path()));
  int lowered = 0;
  EXPECT_TRUE(lookup(reader, "shared", &lowered).cache_hit);
  EXPECT_EQ(lowered, 0);
}

TEST(AotCache, AnEntryIsItsWgslAndAMetadataTableStoredUnderTheKey) {
  TempDir tmp;
  Cache cache(options_for(tmp.path()));
  auto parts = synthetic_parts("meta", "backend=vulkan;driver=X");
  auto artifact = cache.load_or_compile(parts, [] { return std::string("fn main() {}\n"); }, "meta");
  using vyre::test::EntryPart;
  EXPECT_EQ(vyre::test::read_entry_part(tmp.path(), artifact.key, EntryPart::wgsl), "fn main() {}\n");
  auto table = toml::parse(vyre::test::read_entry_part(tmp.path(), artifact.key, EntryPart::metadata).value_or(""));
  EXPECT_EQ(table["format"].value<int64_t>(), int64_t{vyre::aot::kCacheVersion});
  EXPECT_EQ(table["key"].value<std::string>(), artifact.key);
  EXPECT_EQ(table["program"].value<std::string>(), "meta");
  EXPECT_EQ(table["program_digest"].value<std::string>(), parts.program_digest);
  EXPECT_EQ(table["shaping"].value<std::string>(), parts.shaping);
  EXPECT_EQ(table["lowering_version"].value<int64_t>(), int64_t{parts.lowering_version});
  EXPECT_EQ(table["vyre_version"].value<std::string>(), parts.vyre_version);
  EXPECT_EQ(table["fingerprint"].value<std::string>(), parts.fingerprint);
  EXPECT_EQ(table["spec_hash"].value<std::string>(), parts.spec_hash());
  EXPECT_EQ(table["wgsl_bytes"].value<int64_t>(), int64_t{13});
  // `printf 'fn main() {}\n' | sha256sum`
  EXPECT_EQ(table["content_sha256"].value<std::string>(),
            "536e506bb90914c243a12b397b9a998f85ae2cbd9ba02dfd03a9e155ca5ca0f4");
  EXPECT_GT(table["created_unix_ms"].value<int64_t>().value_or(0), int64_t{1'600'000'000'000});
  EXPECT_TRUE(table["lower_ms"].is_number());
}

TEST(AotCache, DirectoryIsPrivateAndFilesAreReadableByTheUserOnly) {
  TempDir tmp;
  auto dir = tmp.path() / "created" / "aot";
  Cache cache(options_for(dir));
  auto artifact = lookup(cache, "private");
  EXPECT_EQ(mode_of(dir), 0700u);
  EXPECT_EQ(mode_of(tmp.path() / "created"), 0700u);
  if (vyre::test::keeps_rows(dir)) {
    EXPECT_EQ(mode_of(dir / vyre::aot::kSqliteStoreName), 0600u);
  } else {
    EXPECT_EQ(mode_of(vyre::test::wgsl_path(dir, artifact.key)), 0600u);
    EXPECT_EQ(mode_of(vyre::test::metadata_path(dir, artifact.key)), 0600u);
  }
}

TEST(AotCache, NothingButEntriesLivesUnderEntryNames) {
  TempDir tmp;
  {
    Cache cache(options_for(tmp.path()));
    for (int i = 0; i < 5; ++i) lookup(cache, "n" + std::to_string(i));
  }
  const bool rows = vyre::test::keeps_rows(tmp.path());
  for (const auto& e : std::filesystem::directory_iterator(tmp.path())) {
    std::string name = e.path().filename().string();
    if (name.starts_with(".")) continue;  // .locks, .stats
    if (rows) {  // the database and its journal
      EXPECT_TRUE(name.starts_with(vyre::aot::kSqliteStoreName)) << name;
      continue;
    }
    ASSERT_EQ(name.size(), 69u) << name;
    EXPECT_TRUE(vyre::aot::is_valid_key(name.substr(0, 64))) << name;
    EXPECT_TRUE(name.ends_with(".wgsl") || name.ends_with(".toml")) << name;
  }
}

TEST(AotCache, DefaultDirectoryPrefersTheExplicitSettingThenXdgThenHome) {
  ScopedEnv a("VYRE_AOT_CACHE_DIR", "/explicit/dir");
  ScopedEnv b("XDG_CACHE_HOME", "/xdg");
  ScopedEnv c("HOME", "/home/someone");
  EXPECT_EQ(Cache::default_directory(), std::filesystem::path("/explicit/dir"));
  {
    ScopedEnv unset("VYRE_AOT_CACHE_DIR", nullptr);
    EXPECT_EQ(Cache::default_directory(), std::filesystem::path("/xdg/vyre/aot"));
    ScopedEnv no_xdg("XDG_CACHE_HOME", nullptr);
    EXPECT_EQ(Cache::default_directory(), std::filesystem::path("/home/someone/.cache/vyre/aot"));
    ScopedEnv relative_xdg("XDG_CACHE_HOME", "relative/cache");
    EXPECT_EQ(Cache::default_directory(), std::filesystem::path("/home/someone/.cache/vyre/aot"));
  }
}

TEST(AotCache, WithoutHomeThereIsNoDiskCacheAndNeverTheCurrentDirectory) {
  TempDir tmp;
  auto old_cwd = std::filesystem::current_path();
  std::filesystem::current_path(tmp.path());
  {
    ScopedEnv a("VYRE_AOT_CACHE_DIR", nullptr);
    ScopedEnv b("XDG_CACHE_HOME", nullptr);
    ScopedEnv c("HOME", nullptr);
    EXPECT_EQ(Cache::default_directory(), std::nullopt);
    Cache cache = Cache::from_environment();
    EXPECT_EQ(cache.directory(), std::nullopt);
    int lowered = 0;
    EXPECT_EQ(lookup(cache, "x", &lowered).text, synthetic_wgsl("x"));
    EXPECT_FALSE(lookup(cache, "x", &lowered).cache_hit);
    EXPECT_EQ(lowered, 2);
  }
  std::filesystem::current_path(old_cwd);
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));
}

TEST(AotCache, BoundsAndLayersComeFromTheEnvironment) {
  ScopedEnv a("VYRE_AOT_CACHE_MAX_BYTES", "64M");
  ScopedEnv b("VYRE_AOT_CACHE_MAX_ENTRIES", "1234");
  ScopedEnv c("VYRE_AOT_CACHE_READONLY_DIRS", "/opt/app/cache::/usr/share/app/cache:relative");
  CacheOptions options = CacheOptions::from_environment();
  EXPECT_EQ(options.max_bytes, 64u << 20);
  EXPECT_EQ(options.max_entries, 1234u);
  ASSERT_EQ(options.readonly_directories.size(), 2u);
  EXPECT_EQ(options.readonly_directories[0], "/opt/app/cache");
  EXPECT_EQ(options.readonly_directories[1], "/usr/share/app/cache");
  ScopedEnv bad("VYRE_AOT_CACHE_MAX_BYTES", "lots");
  EXPECT_EQ(CacheOptions::from_environment().max_bytes, vyre::aot::kDefaultMaxBytes);
}

TEST(AotCache, NoDirectoryMeansLoweringEveryTime) {
  Cache cache{vyre::test::cache_options()};
  int lowered = 0;
  lookup(cache, "x", &lowered);
  lookup(cache, "x", &lowered);
  EXPECT_EQ(lowered, 2);
  EXPECT_EQ(cache.stats().hits, 0u);
}

TEST(AotCache, ADirectoryPathThatIsAFileDegradesToLowering) {
  TempDir tmp;
  vyre::test::write_file(tmp / "file", "not a directory");
  Cache cache(options_for(tmp / "file" / "aot"));
  EXPECT_EQ(cache.directory(), std::nullopt);
  EXPECT_EQ(lookup(cache, "x").text, synthetic_wgsl("x"));
}

TEST(AotCache, ADirectoryOwnedByAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
  TempDir tmp;
  auto dir = tmp / "theirs";
  std::filesystem::create_directory(dir);
  ASSERT_EQ(chown(dir.c_str(), 65534, 65534), 0);
  Cache cache(options_for(dir));
  EXPECT_EQ(cache.directory(), std::nullopt);
  EXPECT_EQ(lookup(cache, "x").text, synthetic_wgsl("x"));
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(AotCache, ASymlinkedDirectoryIsFollowedOnlyWhenTheLinkIsTheUsers) {
  TempDir tmp;
  auto real = tmp / "real";
  std::filesystem::create_directory(real);
  std::filesystem::create_directory_symlink(real, tmp / "link");
  {
    Cache cache(options_for(tmp / "link"));
    ASSERT_TRUE(cache.directory().has_value());
    lookup(cache, "x");
  }
  EXPECT_TRUE(vyre::test::has_entry(real, synthetic_parts("x").key()));
  if (geteuid() != 0) return;
  ASSERT_EQ(lchown((tmp / "link").c_str(), 65534, 65534), 0);
  Cache refused(options_for(tmp / "link"));
  EXPECT_EQ(refused.directory(), std::nullopt);
}

TEST(AotCache, LoweringErrorsPropagateAndCacheNothing) {
  TempDir tmp;
  Cache cache(options_for(tmp.path()));
  EXPECT_THROW(cache.load_or_compile(synthetic_parts("bad"),
                                     []() -> std::string { throw vyre::Error(vyre::ErrorKind::lowering, "no"); }),
               vyre::Error);
  EXPECT_TRUE(cache.list().empty());
  EXPECT_EQ(lookup(cache, "bad").cache_hit, false);
}

TEST(AotCache, WgslOverTheReadBoundIsReturnedButNotCached) {
  TempDir tmp;
  Cache cache(options_for(tmp.path()));
  std::string huge(vyre::aot::kMaxWgslBytes + 1, 'x');
  auto parts = synthetic_parts("huge");
  auto first = cache.load_or_compile(parts, [&] { return huge; });
  EXPECT_EQ(first.text.size(), huge.size());
  EXPECT_FALSE(std::filesystem::exists(vyre::test::wgsl_path(tmp.path(), first.key)));
  EXPECT_FALSE(cache.load_or_compile(parts, [&] { return huge; }).cache_hit);
}

TEST(AotCache, ProgramsAreKeyedByTheirPartsAndLabelledByTheirName) {
  using namespace vyre::build;
  vyre::Program p = ProgramBuilder("labelled")
                        .workgroup_size(64)
                        .output("out", 0, ScalarType::U32)
                        .body({let("i", gid()), if_(lt(var("i"), len("out")), {store("out", var("i"), var("i"))})})
                        .build();
  TempDir tmp;
  Cache cache(options_for(tmp.path()));
  auto miss = cache.load_or_compile(p, "fp");
  EXPECT_FALSE(miss.cache_hit);
  EXPECT_EQ(miss.key, vyre::aot::key_parts(p, "fp").key());
  EXPECT_EQ(miss.text, vyre::lower_to_wgsl(p));
  auto hit = cache.load_or_compile(p, "fp");
  EXPECT_TRUE(hit.cache_hit);
  EXPECT_EQ(hit.text, miss.text);
  auto entries = cache.list();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].program, "labelled");
  EXPECT_EQ(entries[0].parts, vyre::aot::key_parts(p, "fp"));
}

TEST(AotCache, ThreadsOfOneProcessShareACache) {
  TempDir tmp;
  Cache cache(options_for(tmp.path()));
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 40; ++i) {
        std::string name = "t" + std::to_string(i % 20);
        if (lookup(cache, name).text != synthetic_wgsl(name)) ++wrong;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong, 0);
  auto report = cache.verify();
  EXPECT_EQ(report.good, 20u);
  EXPECT_TRUE(report.bad.empty());
}

}  // namespace
