// Entries that cannot lie: every kind of damage to an entry is detected on
// the next lookup, counted as a bad entry, and replaced, and the lookup
// still returns the right text.
#include <gtest/gtest.h>

#include <fstream>

#include "support/aot_fixtures.hpp"
#include "support/stored_entries.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"

namespace {

using vyre::aot::Cache;
using vyre::aot::CacheOptions;
using vyre::test::EntryPart;
using vyre::test::synthetic_parts;
using vyre::test::synthetic_wgsl;
using vyre::test::TempDir;

class AotCorruption : public ::testing::Test {
 protected:
  std::unique_ptr<Cache> open() {
    CacheOptions options = vyre::test::cache_options();
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
  // The stored part of `name`'s entry, in whichever store the suite runs.
  std::string part(const std::string& name, EntryPart which) {
    auto bytes = vyre::test::read_entry_part(tmp.path(), key(name), which);
    EXPECT_TRUE(bytes.has_value()) << name;
    return bytes.value_or("");
  }
  void set_part(const std::string& name, EntryPart which, const std::string& bytes) {
    vyre::test::write_entry_part(tmp.path(), key(name), which, bytes);
  }
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
  std::string text = part("a", EntryPart::wgsl);
  text[text.size() / 2] ^= 0x04;
  set_part("a", EntryPart::wgsl, text);
  expect_detected_and_replaced("a");
}

TEST_F(AotCorruption, ABitFlipInTheMetadataIsDetected) {
  populate("a");
  std::string text = part("a", EntryPart::metadata);
  size_t at = text.find("content_sha256");
  ASSERT_NE(at, std::string::npos);
  at = text.find_first_of("'\"", at) + 5;
  text[at] = text[at] == '0' ? '1' : '0';
  set_part("a", EntryPart::metadata, text);
  expect_detected_and_replaced("a");
}

TEST_F(AotCorruption, TruncatedWgslIsDetected) {
  populate("a");
  set_part("a", EntryPart::wgsl, part("a", EntryPart::wgsl).substr(0, 100));
  expect_detected_and_replaced("a");
}

TEST_F(AotCorruption, EmptyWgslIsDetected) {
  populate("a");
  set_part("a", EntryPart::wgsl, "");
  expect_detected_and_replaced("a");
}

TEST_F(AotCorruption, TruncatedMetadataIsDetected) {
  populate("a");
  const std::string text = part("a", EntryPart::metadata);
  set_part("a", EntryPart::metadata, text.substr(0, text.size() / 2));
  expect_detected_and_replaced("a");
}

TEST_F(AotCorruption, SameLengthGarbageIsDetected) {
  populate("a");
  std::string garbage(part("a", EntryPart::wgsl).size(), '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>('a' + (i * 7919) % 26);
  set_part("a", EntryPart::wgsl, garbage);
  expect_detected_and_replaced("a");
}

TEST_F(AotCorruption, WgslSwappedBetweenEntriesIsDetected) {
  populate("a");
  populate("b");
  const std::string ta = part("a", EntryPart::wgsl), tb = part("b", EntryPart::wgsl);
  set_part("a", EntryPart::wgsl, tb);
  set_part("b", EntryPart::wgsl, ta);
  expect_detected_and_replaced(std::vector<std::string>{"a", "b"});
}

TEST_F(AotCorruption, MetadataFromAnotherKeyIsDetected) {
  populate("a");
  populate("b");
  // A's WGSL with B's metadata (and B's WGSL beside it, so sizes may match).
  vyre::test::copy_entry_part(tmp.path(), key("b"), key("a"), EntryPart::metadata);
  vyre::test::copy_entry_part(tmp.path(), key("b"), key("a"), EntryPart::wgsl);
  expect_detected_and_replaced("a");
}

TEST_F(AotCorruption, MetadataThatIsNotTomlIsDetected) {
  populate("a");
  set_part("a", EntryPart::metadata, "\x01\x02 this is [not toml");
  expect_detected_and_replaced("a");
}

TEST_F(AotCorruption, MetadataWithAWrongTypeIsDetected) {
  populate("a");
  std::string text = part("a", EntryPart::metadata);
  size_t at = text.find("wgsl_bytes = ");
  ASSERT_NE(at, std::string::npos);
  text.insert(at + 13, "\"");
  text.insert(text.find('\n', at), "\"");
  set_part("a", EntryPart::metadata, text);
  expect_detected_and_replaced("a");
}

TEST_F(AotCorruption, ANewerOrOlderFormatIsIgnoredAndReplacedNeverMisread) {
  for (const char* format : {"2", "0", "999"}) {
    populate("a");
    std::string text = part("a", EntryPart::metadata);
    size_t at = text.find("format = 1");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 10, std::string("format = ") + format);
    set_part("a", EntryPart::metadata, text);
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
  VYRE_FILES_STORE_ONLY("a row holds both halves of its entry: there is no row with one half");
  populate("a");
  std::filesystem::remove(vyre::test::wgsl_path(tmp.path(), key("a")));
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
  std::string text = part("flip", EntryPart::wgsl);
  text[10] ^= 1;
  set_part("flip", EntryPart::wgsl, text);
  set_part("trunc", EntryPart::wgsl, part("trunc", EntryPart::wgsl).substr(0, 3));
  vyre::test::copy_entry_part(tmp.path(), key("good1"), key("swap"), EntryPart::metadata);

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
  EXPECT_FALSE(vyre::test::has_entry(tmp.path(), key("flip")));
}

TEST_F(AotCorruption, ABadEntryInAReadOnlyLayerIsSkippedAndTheWritableOneServes) {
  TempDir layer;
  {
    CacheOptions options = vyre::test::cache_options();
    options.directory = layer.path();
    Cache shipped(options);
    lookup(shipped, "a");
  }
  std::string text = *vyre::test::read_entry_part(layer.path(), key("a"), EntryPart::wgsl);
  text[0] ^= 1;
  vyre::test::write_entry_part(layer.path(), key("a"), EntryPart::wgsl, text);

  CacheOptions options = vyre::test::cache_options();
  options.directory = tmp.path();
  options.readonly_directories = {layer.path()};
  Cache cache(options);
  int lowered = 0;
  EXPECT_EQ(lookup(cache, "a", &lowered).text, synthetic_wgsl("a", 4096));
  EXPECT_EQ(lowered, 1);
  EXPECT_TRUE(lookup(cache, "a", &lowered).cache_hit);
  EXPECT_EQ(lowered, 1);
  // The read-only layer is never written.
  EXPECT_EQ(vyre::test::read_entry_part(layer.path(), key("a"), EntryPart::wgsl), text);
  EXPECT_EQ(cache.stats().bad_entries, 1u);
}

}  // namespace
