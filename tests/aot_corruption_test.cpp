// Entries that cannot lie: every kind of damage to an entry is detected on
// the next lookup, counted as a bad entry, and replaced, and the lookup
// still returns the right text.
#include <gtest/gtest.h>

#include <fstream>

#include "support/aot_fixtures.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"

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

class AotCorruption : public ::testing::Test {
 protected:
  std::unique_ptr<Cache> open() {
    CacheOptions options;
    options.directory = tmp.path();
    return std::make_unique<Cache>(options);
  }
  vyre::aot::Artifact lookup(Cache& cache, const std::string& name, int* lowered = nullptr) {
    return cache.load_or_compile(
        synthetic_parts(name),
        [&] {
          if (lowered) ++*lowered;
          return synthetic_wgsl(name, 4096);
        },
        name);
  }
  std::string key(const std::string& name) { return synthetic_parts(name).key(); }
  void populate(const std::string& name) {
    auto cache = open();
    lookup(*cache, name);
  }

  // After damage to `name`'s entry: the next lookup lowers, returns the right
  // text, counts one bad entry, and leaves a good entry that the lookup after
  // it hits.
  void expect_detected_and_replaced(const std::vector<std::string>& names) {
    auto cache = open();
    uint64_t bad_before = cache->stats().bad_entries;
    for (const auto& name : names) {
      int lowered = 0;
      auto artifact = lookup(*cache, name, &lowered);
      EXPECT_FALSE(artifact.cache_hit) << name;
      EXPECT_EQ(artifact.text, synthetic_wgsl(name, 4096));
      EXPECT_EQ(lowered, 1);
      auto again = lookup(*cache, name, &lowered);
      EXPECT_TRUE(again.cache_hit) << name;
      EXPECT_EQ(again.text, artifact.text);
      EXPECT_EQ(lowered, 1);
    }
    EXPECT_EQ(cache->stats().bad_entries, bad_before + names.size());
    auto report = cache->verify();
    EXPECT_TRUE(report.bad.empty());
  }
  void expect_detected_and_replaced(const std::string& name) { expect_detected_and_replaced(std::vector{name}); }

  TempDir tmp;
};

TEST_F(AotCorruption, ABitFlipInTheWgslIsDetected) {
  populate("a");
  auto path = wgsl_path(tmp.path(), key("a"));
  std::string text = read_file(path);
  text[text.size() / 2] ^= 0x04;
  write_file(path, text);
  expect_detected_and_replaced("a");
}

TEST_F(AotCorruption, ABitFlipInTheMetadataIsDetected) {
  populate("a");
  auto path = metadata_path(tmp.path(), key("a"));
  std::string text = read_file(path);
  size_t at = text.find("content_sha256");
  ASSERT_NE(at, std::string::npos);
  at = text.find_first_of("'\"", at) + 5;
  text[at] = text[at] == '0' ? '1' : '0';
  write_file(path, text);
  expect_detected_and_replaced("a");
}

TEST_F(AotCorruption, TruncatedWgslIsDetected) {
  populate("a");
  auto path = wgsl_path(tmp.path(), key("a"));
  std::filesystem::resize_file(path, 100);
  expect_detected_and_replaced("a");
}

TEST_F(AotCorruption, EmptyWgslIsDetected) {
  populate("a");
  std::filesystem::resize_file(wgsl_path(tmp.path(), key("a")), 0);
  expect_detected_and_replaced("a");
}

TEST_F(AotCorruption, TruncatedMetadataIsDetected) {
  populate("a");
  auto path = metadata_path(tmp.path(), key("a"));
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  expect_detected_and_replaced("a");
}

TEST_F(AotCorruption, SameLengthGarbageIsDetected) {
  populate("a");
  auto path = wgsl_path(tmp.path(), key("a"));
  std::string text = read_file(path);
  std::string garbage(text.size(), '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>('a' + (i * 7919) % 26);
  write_file(path, garbage);
  expect_detected_and_replaced("a");
}

TEST_F(AotCorruption, WgslSwappedBetweenEntriesIsDetected) {
  populate("a");
  populate("b");
  auto pa = wgsl_path(tmp.path(), key("a")), pb = wgsl_path(tmp.path(), key("b"));
  std::string ta = read_file(pa), tb = read_file(pb);
  write_file(pa, tb);
  write_file(pb, ta);
  expect_detected_and_replaced(std::vector<std::string>{"a", "b"});
}

TEST_F(AotCorruption, MetadataFromAnotherKeyIsDetected) {
  populate("a");
  populate("b");
  // A's WGSL with B's metadata (and B's WGSL beside it, so sizes may match).
  std::filesystem::copy_file(metadata_path(tmp.path(), key("b")), metadata_path(tmp.path(), key("a")),
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(wgsl_path(tmp.path(), key("b")), wgsl_path(tmp.path(), key("a")),
                             std::filesystem::copy_options::overwrite_existing);
  expect_detected_and_replaced("a");
}

TEST_F(AotCorruption, MetadataThatIsNotTomlIsDetected) {
  populate("a");
  write_file(metadata_path(tmp.path(), key("a")), "\x01\x02 this is [not toml");
  expect_detected_and_replaced("a");
}

TEST_F(AotCorruption, MetadataWithAWrongTypeIsDetected) {
  populate("a");
  auto path = metadata_path(tmp.path(), key("a"));
  std::string text = read_file(path);
  size_t at = text.find("wgsl_bytes = ");
  ASSERT_NE(at, std::string::npos);
  text.insert(at + 13, "\"");
  text.insert(text.find('\n', at), "\"");
  write_file(path, text);
  expect_detected_and_replaced("a");
}

TEST_F(AotCorruption, ANewerOrOlderFormatIsIgnoredAndReplacedNeverMisread) {
  for (const char* format : {"2", "0", "999"}) {
    populate("a");
    auto path = metadata_path(tmp.path(), key("a"));
    std::string text = read_file(path);
    size_t at = text.find("format = 1");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 10, std::string("format = ") + format);
    write_file(path, text);
    {
      auto cache = open();
      auto entries = cache->list();
      ASSERT_EQ(entries.size(), 1u);
      EXPECT_EQ(entries[0].state, vyre::aot::EntryState::other_format) << format;
    }
    expect_detected_and_replaced("a");
  }
}

TEST_F(AotCorruption, MetadataWithoutWgslIsAMissNotAHit) {
  populate("a");
  std::filesystem::remove(wgsl_path(tmp.path(), key("a")));
  auto cache = open();
  int lowered = 0;
  auto artifact = lookup(*cache, "a", &lowered);
  EXPECT_FALSE(artifact.cache_hit);
  EXPECT_EQ(artifact.text, synthetic_wgsl("a", 4096));
  EXPECT_TRUE(lookup(*cache, "a", &lowered).cache_hit);
  EXPECT_EQ(lowered, 1);
}

TEST_F(AotCorruption, VerifyFindsReportsAndRemovesEveryBadEntry) {
  for (const char* name : {"good1", "good2", "flip", "trunc", "swap"}) populate(name);
  auto flip = wgsl_path(tmp.path(), key("flip"));
  std::string text = read_file(flip);
  text[10] ^= 1;
  write_file(flip, text);
  std::filesystem::resize_file(wgsl_path(tmp.path(), key("trunc")), 3);
  std::filesystem::copy_file(metadata_path(tmp.path(), key("good1")), metadata_path(tmp.path(), key("swap")),
                             std::filesystem::copy_options::overwrite_existing);

  auto cache = open();
  auto report = cache->verify();
  EXPECT_EQ(report.checked, 5u);
  EXPECT_EQ(report.good, 2u);
  ASSERT_EQ(report.bad.size(), 3u);
  EXPECT_EQ(report.removed, 3u);
  for (const auto& bad : report.bad) EXPECT_FALSE(bad.problem.empty()) << bad.key;
  EXPECT_EQ(cache->stats().bad_entries, 3u);
  auto after = cache->verify();
  EXPECT_EQ(after.good, 2u);
  EXPECT_TRUE(after.bad.empty());
  EXPECT_FALSE(std::filesystem::exists(flip));
}

TEST_F(AotCorruption, ABadEntryInAReadOnlyLayerIsSkippedAndTheWritableOneServes) {
  TempDir layer;
  {
    CacheOptions options;
    options.directory = layer.path();
    Cache shipped(options);
    lookup(shipped, "a");
  }
  auto path = wgsl_path(layer.path(), key("a"));
  std::string text = read_file(path);
  text[0] ^= 1;
  write_file(path, text);

  CacheOptions options;
  options.directory = tmp.path();
  options.readonly_directories = {layer.path()};
  Cache cache(options);
  int lowered = 0;
  EXPECT_EQ(lookup(cache, "a", &lowered).text, synthetic_wgsl("a", 4096));
  EXPECT_EQ(lowered, 1);
  EXPECT_TRUE(lookup(cache, "a", &lowered).cache_hit);
  EXPECT_EQ(lowered, 1);
  EXPECT_EQ(read_file(path), text);  // the read-only layer is never written
  EXPECT_EQ(cache.stats().bad_entries, 1u);
}

}  // namespace
