// Storage tiers (src/aot/entry/storage_tier.hpp): one get/put/remove/list/stats
// interface, the directory tier (the writable directory and read-only layers)
// as its implementation, and lookups composed over tiers in order.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "aot/cache_impl.hpp"
#include "aot/local/directory_tier.hpp"
#include "aot/tier_lookup.hpp"
#include "support/aot_fixtures.hpp"
#include "support/test_support.hpp"
#include "vyre/gpu.hpp"
#include "vyre/json.hpp"

namespace vyre::aot {
namespace {

using test::synthetic_parts;
using test::synthetic_wgsl;
using test::TempDir;

// A tier in process memory, as a test double and as the shape a memory tier
// in front of the disk would have. Like every tier, it verifies what it
// hands out.
class MemoryTier final : public StorageTier {
 public:
  const std::filesystem::path& location() const override { return location_; }
  bool writable() const override { return true; }
  sys::Result<Entry> do_get(const std::string& key, Use) override {
    ++gets;
    auto it = entries.find(key);
    if (it == entries.end()) return sys::failure(sys::Fault::missing, {});
    if (auto checked = check_entry(key, it->second.meta, it->second.text); !checked) return checked.failure();
    return it->second;
  }
  sys::Result<Stored> do_put(const Metadata& meta, std::string_view wgsl) override {
    entries[meta.key] = Entry{meta, std::string(wgsl), 0, 0};
    return Stored{true, wgsl.size()};
  }
  sys::Result<bool> do_remove(const std::string& key, bool) override { return entries.erase(key) > 0; }
  sys::Result<std::vector<EntryInfo>> do_list(const ListQuery&) const override { return std::vector<EntryInfo>{}; }
  sys::Result<TierStats> do_stats() const override { return TierStats{entries.size(), 0}; }

  std::map<std::string, Entry> entries;
  int gets = 0;

 private:
  std::filesystem::path location_ = "memory";
};

std::unique_ptr<DirectoryTier> local_tier(const std::filesystem::path& dir, DirectoryTierOptions options = {}) {
  auto opened = CacheDirectory::open_writable(dir);
  EXPECT_TRUE(opened) << opened.failure().message;
  return std::make_unique<DirectoryTier>(std::move(*opened), std::move(options));
}

std::unique_ptr<DirectoryTier> readonly_tier(const std::filesystem::path& dir) {
  auto opened = CacheDirectory::open_readonly(dir);
  EXPECT_TRUE(opened) << opened.failure().message;
  return std::make_unique<DirectoryTier>(std::move(*opened));
}

Metadata metadata_for(const std::string& name) {
  return make_metadata(synthetic_parts(name), name, synthetic_wgsl(name), 1.5);
}

TEST(AotStorage, AMemoryTierInFrontOfTheLocalDirectoryAnswersFirst) {
  TempDir dir;
  MemoryTier memory;
  auto local = local_tier(dir.path());
  const Metadata meta = metadata_for("a");
  ASSERT_TRUE(memory.put(meta, synthetic_wgsl("a")));

  std::vector<StorageTier*> tiers{&memory, local.get()};
  auto hit = find_in_tiers(tiers, meta.key, Use::serve, {});
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->tier, &memory);
  EXPECT_EQ(hit->entry.text, synthetic_wgsl("a"));
  EXPECT_EQ(test::file_count(dir.path()), 0u);
}

TEST(AotStorage, AMissInMemoryIsAnsweredByTheLocalDirectory) {
  TempDir dir;
  MemoryTier memory;
  auto local = local_tier(dir.path());
  const Metadata meta = metadata_for("a");
  auto stored = local->put(meta, synthetic_wgsl("a"));
  ASSERT_TRUE(stored) << stored.failure().message;
  EXPECT_TRUE(stored->written);

  std::vector<StorageTier*> tiers{&memory, local.get()};
  int troubles = 0;
  auto hit = find_in_tiers(tiers, meta.key, Use::serve, [&](StorageTier&, const sys::Failure&) { ++troubles; });
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->tier, local.get());
  EXPECT_EQ(hit->entry.meta.key, meta.key);
  EXPECT_EQ(hit->entry.meta.content_sha256, meta.content_sha256);
  EXPECT_EQ(memory.gets, 1);
  EXPECT_EQ(troubles, 0);  // a miss is not trouble
}

TEST(AotStorage, ATornEntryInOneTierIsAMissThereAndTheNextTierIsAsked) {
  TempDir mine, shipped;
  const Metadata meta = metadata_for("a");
  ASSERT_TRUE(local_tier(shipped.path())->put(meta, synthetic_wgsl("a")));
  auto local = local_tier(mine.path());
  ASSERT_TRUE(local->put(meta, synthetic_wgsl("a")));
  // Same size, other bytes: only the digest can tell.
  std::string torn = synthetic_wgsl("a");
  torn[torn.size() / 2] ^= 1;
  test::write_file(test::wgsl_path(mine.path(), meta.key), torn);

  auto layer = readonly_tier(shipped.path());
  std::vector<StorageTier*> tiers{local.get(), layer.get()};
  std::vector<std::pair<StorageTier*, sys::Fault>> troubles;
  auto hit = find_in_tiers(tiers, meta.key, Use::serve,
                           [&](StorageTier& tier, const sys::Failure& f) { troubles.emplace_back(&tier, f.kind); });
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->tier, layer.get());
  EXPECT_EQ(hit->entry.text, synthetic_wgsl("a"));
  ASSERT_EQ(troubles.size(), 1u);
  EXPECT_EQ(troubles[0].first, local.get());
  EXPECT_EQ(troubles[0].second, sys::Fault::mismatch);
  EXPECT_TRUE(is_bad_entry(sys::failure(troubles[0].second, {})));
}

TEST(AotStorage, MetadataWithoutItsWgslIsAPlainMissNotABadEntry) {
  TempDir dir;
  auto local = local_tier(dir.path());
  const Metadata meta = metadata_for("a");
  ASSERT_TRUE(local->put(meta, synthetic_wgsl("a")));
  std::filesystem::remove(test::wgsl_path(dir.path(), meta.key));
  auto got = local->get(meta.key, Use::inspect);
  ASSERT_FALSE(got);
  EXPECT_TRUE(is_miss(got.failure()));
  EXPECT_FALSE(is_bad_entry(got.failure()));
}

TEST(AotStorage, AReadOnlyTierRefusesPutAndRemoveAndChangesNothing) {
  TempDir shipped;
  const Metadata meta = metadata_for("a");
  ASSERT_TRUE(local_tier(shipped.path())->put(meta, synthetic_wgsl("a")));
  auto layer = readonly_tier(shipped.path());
  EXPECT_FALSE(layer->writable());

  auto put = layer->put(metadata_for("b"), synthetic_wgsl("b"));
  ASSERT_FALSE(put);
  EXPECT_EQ(put.failure().kind, sys::Fault::read_only);
  EXPECT_TRUE(test::contains(put.failure().message, "VYRE_AOT_CACHE_DIR"));  // says where writes go
  auto removed = layer->remove(meta.key, false);
  ASSERT_FALSE(removed);
  EXPECT_EQ(removed.failure().kind, sys::Fault::read_only);

  EXPECT_EQ(test::file_count(shipped.path()), 2u);
  EXPECT_TRUE(layer->get(meta.key, Use::inspect));
}

TEST(AotStorage, OnlyTheWritableDirectoryRefreshesRecencyAndOnlyWhenServing) {
  TempDir dir;
  const Metadata meta = metadata_for("a");
  auto local = local_tier(dir.path(), DirectoryTierOptions{std::chrono::milliseconds(0), {}});
  ASSERT_TRUE(local->put(meta, synthetic_wgsl("a")));
  const std::filesystem::path metadata = test::metadata_path(dir.path(), meta.key);
  const auto old_time = std::filesystem::last_write_time(metadata) - std::chrono::hours(24);
  std::filesystem::last_write_time(metadata, old_time);

  // The same directory as a read-only layer: served, never touched.
  auto layer = readonly_tier(dir.path());
  EXPECT_FALSE(layer->writable());
  EXPECT_TRUE(local->writable());
  ASSERT_TRUE(layer->get(meta.key, Use::serve));
  EXPECT_EQ(std::filesystem::last_write_time(metadata), old_time);
  // Tools look without using.
  ASSERT_TRUE(local->get(meta.key, Use::inspect));
  EXPECT_EQ(std::filesystem::last_write_time(metadata), old_time);
  ASSERT_TRUE(local->get(meta.key, Use::serve));
  EXPECT_GT(std::filesystem::last_write_time(metadata), old_time);
}

TEST(AotStorage, TheLocalDirectoryListsCountsAndRemovesWhatItStores) {
  TempDir dir;
  auto local = local_tier(dir.path());
  const Metadata a = metadata_for("a");
  ASSERT_TRUE(local->put(a, synthetic_wgsl("a")));
  ASSERT_TRUE(local->put(metadata_for("b"), synthetic_wgsl("b")));
  auto again = local->put(a, synthetic_wgsl("a"));
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->written);  // already there: not written twice

  auto listed = local->list({});
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 2u);
  for (const auto& info : *listed) {
    EXPECT_EQ(info.state, EntryState::ok);
    EXPECT_EQ(info.directory, dir.path());
    EXPECT_FALSE(info.readonly_layer);
  }
  auto stats = local->stats();
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->entries, 2u);

  auto removed = local->remove(a.key, false);
  ASSERT_TRUE(removed);
  EXPECT_TRUE(*removed);
  EXPECT_TRUE(local->get(a.key, Use::inspect).failed_with(sys::Fault::missing));
  EXPECT_EQ(local->stats()->entries, 1u);
}

TEST(AotStorage, RemovingOnlyIfBadLeavesAGoodEntryAlone) {
  TempDir dir;
  auto local = local_tier(dir.path());
  const Metadata a = metadata_for("a");
  ASSERT_TRUE(local->put(a, synthetic_wgsl("a")));
  auto removed = local->remove(a.key, /*only_if_bad=*/true);
  ASSERT_TRUE(removed);
  EXPECT_FALSE(*removed);
  EXPECT_TRUE(local->get(a.key, Use::inspect));
}

// A tier whose every call throws, as a broken implementation would.
class ThrowingTier final : public StorageTier {
 public:
  const std::filesystem::path& location() const override { return location_; }
  bool writable() const override { return true; }
  int calls = 0;

 private:
  [[noreturn]] void fail() {
    ++calls;
    throw std::runtime_error("the tier broke");
  }
  sys::Result<Entry> do_get(const std::string&, Use) override { fail(); }
  sys::Result<Stored> do_put(const Metadata&, std::string_view) override { fail(); }
  sys::Result<bool> do_remove(const std::string&, bool) override { fail(); }
  sys::Result<std::vector<EntryInfo>> do_list(const ListQuery&) const override {
    throw std::runtime_error("the tier broke");
  }
  sys::Result<TierStats> do_stats() const override { throw std::runtime_error("the tier broke"); }
  std::filesystem::path location_ = "throwing";
};

TEST(AotStorage, ATierThatThrowsAnswersWithAFailureAtItsBoundary) {
  ThrowingTier tier;
  auto got = tier.get("k", Use::serve);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.failure().kind, sys::Fault::io);
  EXPECT_NE(got.failure().message.find("the tier broke"), std::string::npos) << got.failure().message;
  EXPECT_FALSE(tier.put(metadata_for("a"), synthetic_wgsl("a")));
  EXPECT_FALSE(tier.remove("k", false));
  EXPECT_FALSE(tier.list({}));
  EXPECT_FALSE(tier.stats());
}

// A tier that throws in front of the others costs its lookups, never the
// dispatch: a GPU dispatch through a cache with one still computes the
// right values, and the next lookup is served by the local directory.
TEST(AotStorage, ADispatchSucceedsThroughACacheWithATierThatThrows) {
  TempDir dir;
  CacheOptions options = vyre::test::cache_options();
  options.directory = dir.path();
  auto cache = std::make_shared<Cache>(options);
  auto& impl = CacheInternals::of(*cache);
  auto thrower = std::make_unique<ThrowingTier>();
  ThrowingTier* broken = thrower.get();
  impl.nearby.insert(impl.nearby.begin(), broken);
  impl.owned_tiers.insert(impl.owned_tiers.begin(), std::move(thrower));

  gpu::BackendOptions backend_options;
  backend_options.cache = cache;
  gpu::Backend backend(backend_options);
  const CheckedProgram program = program_from_json(test::read_file(test::source_path("examples/xor.json")));
  Inputs inputs;
  inputs.set<uint32_t>("a", {1, 2, 3, 4}).set<uint32_t>("b", {4, 4, 4, 4}).size("out", 4);
  const Outputs out = backend.compile(program).dispatch(inputs);
  EXPECT_EQ(out.get<uint32_t>("out"), (std::vector<uint32_t>{5, 6, 7, 0}));
  EXPECT_GE(broken->calls, 2) << "asked and written to";
  // The lowered text reached the local directory past the broken tier.
  gpu::Backend second(backend_options);
  EXPECT_TRUE(second.compile(program).compile_report().cache_hit);
  EXPECT_GE(cache->stats().errors, 1u) << "the broken tier's failures are counted";
}

}  // namespace
}  // namespace vyre::aot

