// Read-only layers (caches shipped with an application), searched after the
// writable directory and never written; export and import of verified entries.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "support/aot_fixtures.hpp"
#include "support/stored_entries.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"

namespace {

using vyre::aot::Cache;
using vyre::aot::CacheOptions;
using vyre::test::synthetic_parts;
using vyre::test::synthetic_wgsl;
using vyre::test::TempDir;

void fill(const std::filesystem::path& dir, const std::vector<std::string>& names) {
  CacheOptions options = vyre::test::cache_options();
  options.directory = dir;
  Cache cache(options);
  for (const auto& n : names) cache.load_or_compile(synthetic_parts(n), [&] { return synthetic_wgsl(n); }, n);
}

vyre::aot::Artifact lookup(Cache& cache, const std::string& name, int* lowered) {
  return cache.load_or_compile(synthetic_parts(name), [&] {
    ++*lowered;
    return synthetic_wgsl(name);
  });
}

using vyre::test::file_count;

TEST(AotLayers, ReadOnlyLayersServeHitsAfterTheWritableDirectory) {
  TempDir shipped_a, shipped_b, mine;
  fill(shipped_a.path(), {"a"});
  fill(shipped_b.path(), {"b"});
  std::filesystem::remove_all(shipped_a / ".stats");
  std::filesystem::remove_all(shipped_a / ".locks");
  CacheOptions options = vyre::test::cache_options();
  options.directory = mine.path();
  options.readonly_directories = {shipped_a.path(), shipped_b.path()};
  Cache cache(options);
  int lowered = 0;
  EXPECT_TRUE(lookup(cache, "a", &lowered).cache_hit);
  EXPECT_TRUE(lookup(cache, "b", &lowered).cache_hit);
  EXPECT_FALSE(lookup(cache, "c", &lowered).cache_hit);
  EXPECT_EQ(lowered, 1);
  // Hits from a layer are not copied; the miss went to the writable directory only.
  EXPECT_EQ(vyre::test::stored_keys(mine.path()), std::vector{synthetic_parts("c").key()});
  EXPECT_EQ(vyre::test::stored_keys(shipped_a.path()), std::vector{synthetic_parts("a").key()});
  EXPECT_FALSE(std::filesystem::exists(shipped_a / ".stats"));  // nothing written there, not even stats
  EXPECT_EQ(cache.stats().hits, 2u);
}

TEST(AotLayers, ALayerAloneWorksWithoutAWritableDirectory) {
  TempDir shipped;
  fill(shipped.path(), {"a"});
  CacheOptions options = vyre::test::cache_options();
  options.readonly_directories = {shipped.path()};
  Cache cache(options);
  int lowered = 0;
  EXPECT_TRUE(lookup(cache, "a", &lowered).cache_hit);
  EXPECT_FALSE(lookup(cache, "b", &lowered).cache_hit);
  EXPECT_EQ(lowered, 1);
}

TEST(AotLayers, AMissingLayerIsSkipped) {
  TempDir mine;
  CacheOptions options = vyre::test::cache_options();
  options.directory = mine.path();
  options.readonly_directories = {mine / "does-not-exist"};
  Cache cache(options);
  int lowered = 0;
  EXPECT_FALSE(lookup(cache, "a", &lowered).cache_hit);
  EXPECT_TRUE(lookup(cache, "a", &lowered).cache_hit);
}

TEST(AotLayers, LayerFilesOfAnotherUserAreRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to hand files to another user";
  TempDir shipped, mine;
  fill(shipped.path(), {"a"});
  for (const auto& e : std::filesystem::directory_iterator(shipped.path()))
    ASSERT_EQ(lchown(e.path().c_str(), 65534, 65534), 0);
  CacheOptions options = vyre::test::cache_options();
  options.directory = mine.path();
  options.readonly_directories = {shipped.path()};
  Cache cache(options);
  int lowered = 0;
  EXPECT_FALSE(lookup(cache, "a", &lowered).cache_hit);  // entry files of another user: refused
}

TEST(AotLayers, ExportCopiesVerifiedEntriesAndImportBringsThemBack) {
  TempDir source, exported, target;
  fill(source.path(), {"a", "b", "c"});
  // Damage c: it must not travel.
  const std::string c = synthetic_parts("c").key();
  std::string text = *vyre::test::read_entry_part(source.path(), c, vyre::test::EntryPart::wgsl);
  text[5] ^= 1;
  vyre::test::write_entry_part(source.path(), c, vyre::test::EntryPart::wgsl, text);

  CacheOptions from = vyre::test::cache_options();
  from.directory = source.path();
  auto report = Cache(from).export_to(exported / "ship");
  EXPECT_EQ(report.copied, 2u);
  EXPECT_EQ(report.skipped_bad, 1u);
  EXPECT_EQ(file_count(exported / "ship"), 4u);
  struct stat st {};
  ASSERT_EQ(stat(vyre::test::wgsl_path(exported / "ship", synthetic_parts("a").key()).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);  // meant to be shipped and read by others
  EXPECT_EQ(Cache(from).export_to(exported / "ship").skipped_present, 2u);

  CacheOptions to = vyre::test::cache_options();
  to.directory = target.path();
  Cache cache(to);
  auto imported = cache.import_from(exported / "ship");
  EXPECT_EQ(imported.copied, 2u);
  EXPECT_EQ(cache.import_from(exported / "ship").skipped_present, 2u);
  int lowered = 0;
  EXPECT_TRUE(lookup(cache, "a", &lowered).cache_hit);
  EXPECT_TRUE(lookup(cache, "b", &lowered).cache_hit);
  EXPECT_EQ(lowered, 0);
  auto entries = cache.list();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].program.empty(), false);
}

}  // namespace
