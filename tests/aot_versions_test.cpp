// Never cached, never stale (docs/cache.md, "A failure is never an entry"
// and "Older versions"): a lowering that fails leaves nothing in the cache,
// a device that refuses a program leaves no entry of the refusal, an entry
// that another version wrote is never served, and the tools count and
// remove such entries on request, never touching this version's.
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "gpu/backend_state.hpp"
#include "support/aot_fixtures.hpp"
#include "support/programs.hpp"
#include "support/stored_entries.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"
#include "vyre/lower.hpp"
#include "vyre/version.hpp"

namespace {

using namespace vyre::build;
using vyre::aot::Cache;
using vyre::aot::CacheOptions;
using vyre::aot::KeyParts;
using vyre::test::TempDir;

CacheOptions options_in(const std::filesystem::path& dir) {
  CacheOptions options = vyre::test::cache_options();
  options.directory = dir;
  options.stats_flush_interval = std::chrono::milliseconds(0);
  options.driver_cache = false;
  return options;
}

// What a failed publication could leave: entries (in whichever store) and
// the cache's temporaries (`.tmp.*`). (The stats folder's own temporaries
// are its flushes, which a background thread may be making at any moment.)
size_t entries_and_temporaries(const std::filesystem::path& dir) {
  if (!std::filesystem::exists(dir)) return 0;
  size_t n = vyre::test::stored_keys(dir).size();
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().starts_with(".tmp.")) ++n;
  return n;
}

// Key parts as this build makes them (kVersion, kLoweringVersion).
KeyParts current_parts(const std::string& program) {
  KeyParts parts = vyre::test::synthetic_parts(program);
  parts.lowering_version = vyre::kLoweringVersion;
  parts.vyre_version = vyre::kVersion;
  return parts;
}

std::string made(const std::string& text, int* calls) {
  ++*calls;
  return text;
}

vyre::CheckedProgram doubler() { return vyre::test::doubler_program(); }

vyre::CheckedProgram f64_twice() {
  return ProgramBuilder("f64_twice")
      .workgroup_size(64)
      .input("a", 0, ScalarType::F64)
      .output("out", 1, ScalarType::F64)
      .body({let("i", gid()), if_(ge(var("i"), len("out")), {return_()}),
             store("out", var("i"), mul(load("a", var("i")), f64(2.0)))})
      .build();
}

// ---- A failure is never an entry ----------------------------------------------

TEST(AotNeverCached, ALoweringThatThrowsLeavesNoEntryNoTemporaryAndNoMemoryOfTheFailure) {
  TempDir tmp;
  Cache cache(options_in(tmp / "cache"));
  int calls = 0;
  (void)cache.load_or_compile(current_parts("good"), [&] { return made("// good\n", &calls); }, "good");
  ASSERT_EQ(entries_and_temporaries(tmp / "cache"), 1u);

  const KeyParts failing = current_parts("failing");
  EXPECT_THROW((void)cache.load_or_compile(failing, []() -> std::string {
                 throw vyre::Error(vyre::ErrorKind::lowering, "the lowering failed");
               }, "failing"),
               vyre::Error);
  cache.flush();
  EXPECT_EQ(entries_and_temporaries(tmp / "cache"), 1u) << "the failure left a file";
  EXPECT_FALSE(vyre::test::has_entry(tmp / "cache", failing.key()));
  EXPECT_EQ(cache.stats().entries, 1u);
  EXPECT_EQ(cache.stats().writes, 1u);

  // No negative entry: the next lookup lowers, and this time stores.
  auto again = cache.load_or_compile(failing, [&] { return made("// lowered at last\n", &calls); }, "failing");
  EXPECT_FALSE(again.cache_hit);
  EXPECT_EQ(again.text, "// lowered at last\n");
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(entries_and_temporaries(tmp / "cache"), 2u);

  // Nor does a failing replacement touch the entry it was to replace.
  EXPECT_THROW((void)cache.replace(failing, []() -> std::string { throw vyre::Error(vyre::ErrorKind::lowering, "no"); },
                                   "failing"),
               vyre::Error);
  EXPECT_EQ(vyre::test::read_entry_part(tmp / "cache", failing.key(), vyre::test::EntryPart::wgsl).value_or(""), "// lowered at last\n");
  EXPECT_EQ(entries_and_temporaries(tmp / "cache"), 2u);
}

TEST(AotNeverCached, AProgramRefusedForADeviceFeatureLeavesNoEntry) {
  TempDir tmp;
  const vyre::CheckedProgram f64_program = f64_twice();
  ASSERT_EQ(setenv("VYRE_MASK_FEATURES", "shader-f64", 1), 0);
  std::optional<vyre::gpu::Backend> masked;
  try {
    vyre::gpu::BackendOptions options;
    options.cache = std::make_shared<Cache>(options_in(tmp / "cache"));
    masked.emplace(options);
  } catch (const vyre::Error& e) {
    unsetenv("VYRE_MASK_FEATURES");
    GTEST_SKIP() << "no GPU adapter: " << e.what();
  }
  unsetenv("VYRE_MASK_FEATURES");
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      (void)masked->compile(f64_program);
      ADD_FAILURE() << "an f64 program compiled on a device opened without shader-f64";
    } catch (const vyre::Error& e) {
      EXPECT_EQ(e.kind(), vyre::ErrorKind::limit_exceeded) << e.what();
    }
  }
  EXPECT_EQ(entries_and_temporaries(tmp / "cache"), 0u) << "the refusal left a file";
}

// A program the device refuses when its pipeline is made: f64 arithmetic on
// a device opened without shader-f64, past the check that refuses it before
// the cache is asked (straight to the step that looks up, lowers and makes
// the pipeline). The WGSL is the right lowering for its key, which names no
// device, so it is kept for devices that take it; the refusal is not, and a
// later compile on this device is refused again, without writing the entry
// again.
TEST(AotNeverCached, APipelineTheDeviceRefusesIsNotCachedAsARefusalNorRewritten) {
  TempDir tmp;
  const vyre::CheckedProgram program = f64_twice();
  auto cache = std::make_shared<Cache>(options_in(tmp / "cache"));
  auto compile_in_a_new_backend = [&]() -> std::optional<vyre::Error> {
    vyre::gpu::BackendOptions options;
    options.cache = cache;
    options.widen = false;
    if (setenv("VYRE_MASK_FEATURES", "shader-f64", 1) != 0) return vyre::Error(vyre::ErrorKind::io, "setenv");
    std::optional<vyre::gpu::Backend> backend;
    try {
      backend.emplace(options);
    } catch (...) {
      unsetenv("VYRE_MASK_FEATURES");
      throw;
    }
    unsetenv("VYRE_MASK_FEATURES");
    const auto& state = vyre::gpu::state_of(*backend);
    vyre::gpu::CompileReport report;
    try {
      (void)state->compiled(vyre::aot::key_parts(program, state->shaping_fingerprint), program, {}, report);
    } catch (const vyre::Error& e) {
      return e;
    }
    return std::nullopt;
  };
  std::optional<vyre::Error> first;
  try {
    first = compile_in_a_new_backend();
  } catch (const vyre::Error& e) {
    GTEST_SKIP() << "no GPU adapter: " << e.what();
  }
  ASSERT_TRUE(first.has_value()) << "a device opened without shader-f64 made an f64 pipeline";
  EXPECT_EQ(first->kind(), vyre::ErrorKind::gpu) << first->what();
  const auto entries = cache->list();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].state, vyre::aot::EntryState::ok);
  const std::string text = vyre::test::read_entry_part(tmp / "cache", entries[0].key, vyre::test::EntryPart::wgsl).value_or("");
  EXPECT_EQ(text, vyre::lower_to_wgsl(program)) << "the entry is the lowered WGSL, not an error";
  EXPECT_EQ(entries_and_temporaries(tmp / "cache"), 1u);

  // Later: the entry hits, the device refuses it again, the same error.
  const auto second = compile_in_a_new_backend();
  ASSERT_TRUE(second.has_value()) << "the refused program compiled the second time";
  EXPECT_EQ(second->kind(), vyre::ErrorKind::gpu) << second->what();
  EXPECT_EQ(vyre::test::read_entry_part(tmp / "cache", entries[0].key, vyre::test::EntryPart::wgsl).value_or(""), text);
  EXPECT_EQ(entries_and_temporaries(tmp / "cache"), 1u);
  const auto stats = cache->stats();
  EXPECT_EQ(stats.writes, 1u) << "a right entry the device refused was written again";
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(cache->verify(false).good, 1u);
}

// ---- Older versions are never served --------------------------------------------

TEST(AotNeverStale, AnEntryOfAnotherVersionIsNeverServedAndTheProgramIsLoweredAnew) {
  TempDir tmp;
  Cache cache(options_in(tmp / "cache"));
  const vyre::CheckedProgram program = doubler();
  const KeyParts now = vyre::aot::key_parts(program, "backend=test");
  KeyParts older_vyre = now;
  older_vyre.vyre_version = "0.0.1";
  KeyParts older_lowering = now;
  older_lowering.lowering_version = now.lowering_version - 1;
  int calls = 0;
  for (const KeyParts& old : {older_vyre, older_lowering}) {
    ASSERT_NE(old.key(), now.key());
    (void)cache.load_or_compile(old, [&] { return made("// written by another version\n", &calls); }, "doubler");
  }
  ASSERT_EQ(calls, 2);
  auto served = cache.load_or_compile(program, "backend=test");
  EXPECT_FALSE(served.cache_hit) << "an entry of another version was served";
  EXPECT_EQ(served.text, vyre::lower_to_wgsl(program));
  EXPECT_TRUE(cache.load_or_compile(program, "backend=test").cache_hit);

  // An older entry's files put at this version's key are a bad entry, not a
  // hit: its recorded parts hash to another key.
  TempDir other;
  Cache planted(options_in(other / "cache"));
  (void)planted.load_or_compile(older_vyre, [&] { return made("// written by another version\n", &calls); }, "doubler");
  vyre::test::move_entry(other / "cache", older_vyre.key(), now.key());
  auto relowered = planted.load_or_compile(program, "backend=test");
  EXPECT_FALSE(relowered.cache_hit);
  EXPECT_EQ(relowered.text, vyre::lower_to_wgsl(program));
  EXPECT_EQ(vyre::test::read_entry_part(other / "cache", now.key(), vyre::test::EntryPart::wgsl).value_or(""), vyre::lower_to_wgsl(program));
}

TEST(AotNeverStale, ThisBuildsVersionsAreCurrentPerKindOfEntry) {
  const vyre::CheckedProgram program = doubler();
  EXPECT_TRUE(vyre::aot::is_current_version(vyre::aot::key_parts(program, "fp")));
  EXPECT_TRUE(vyre::aot::is_current_version(vyre::aot::tuning_key_parts(program, "fp", "2^10")));
  EXPECT_TRUE(vyre::aot::is_current_version(vyre::aot::shape_record_key_parts("reduce f32 sum", "2^20", "fp")));
  KeyParts parts = vyre::aot::tuning_key_parts(program, "fp", "2^10");
  parts.lowering_version = vyre::kLoweringVersion;  // a record's version is its format's, not the lowering's
  if (vyre::kLoweringVersion != vyre::aot::kTuningRecordFormat) {
    EXPECT_FALSE(vyre::aot::is_current_version(parts));
  }
  parts = vyre::aot::shape_record_key_parts("reduce f32 sum", "2^20", "fp");
  parts.vyre_version += "-older";
  EXPECT_FALSE(vyre::aot::is_current_version(parts));
  parts = vyre::aot::key_parts(program, "fp");
  parts.lowering_version += 1;
  EXPECT_FALSE(vyre::aot::is_current_version(parts));
}

// ---- Counting and removing them -----------------------------------------------

class AotOlderVersions : public ::testing::Test {
 protected:
  // Three entries of this version (a WGSL entry, a tuning record and a shape
  // record) and three of others (an older vyre, an older lowering, a tuning
  // record of an older vyre).
  void SetUp() override {
    const vyre::CheckedProgram program = doubler();
    current = {vyre::aot::key_parts(program, "fp"), vyre::aot::tuning_key_parts(program, "fp", "2^10"),
               vyre::aot::shape_record_key_parts("reduce f32 sum", "2^20", "fp")};
    KeyParts older_vyre = current[0];
    older_vyre.vyre_version = "0.0.1";
    KeyParts older_lowering = current[0];
    older_lowering.lowering_version -= 1;
    KeyParts older_record = current[1];
    older_record.vyre_version = "0.0.1";
    older = {older_vyre, older_lowering, older_record};
    Cache cache(options_in(tmp / "cache"));
    for (const auto& parts : current) (void)cache.load_or_compile(parts, [] { return std::string("// now\n"); }, "now");
    for (const auto& parts : older) (void)cache.load_or_compile(parts, [] { return std::string("// old\n"); }, "old");
  }
  TempDir tmp;
  std::vector<KeyParts> current;
  std::vector<KeyParts> older;
};

TEST_F(AotOlderVersions, StatsAndVerifyCountThem) {
  Cache cache(options_in(tmp / "cache"));
  const auto stats = cache.stats();
  EXPECT_EQ(stats.entries, 6u);
  EXPECT_EQ(stats.older_versions, 3u);
  const auto report = cache.verify();
  EXPECT_EQ(report.good, 6u);
  EXPECT_EQ(report.older_versions, 3u);
  EXPECT_TRUE(report.bad.empty());
  EXPECT_EQ(cache.stats().entries, 6u) << "verify removed a good entry of another version";
  // A bad entry is verify's, not a version's: verify does not count it here.
  vyre::test::write_entry_part(tmp / "cache", older[0].key(), vyre::test::EntryPart::wgsl, "// odd\n");
  EXPECT_EQ(cache.stats().older_versions, 3u) << "stats reads no digest";
  const auto again = cache.verify(/*remove_bad=*/false);
  EXPECT_EQ(again.older_versions, 2u);
  EXPECT_EQ(again.bad.size(), 1u);
}

TEST_F(AotOlderVersions, PruneRemovesExactlyThemAndOnlyWhenAsked) {
  Cache cache(options_in(tmp / "cache"));
  auto plain = cache.prune({});
  EXPECT_EQ(plain.older_versions_removed, 0u);
  EXPECT_EQ(cache.stats().older_versions, 3u) << "a prune without older_versions removed some";

  vyre::aot::PruneOptions options;
  options.older_versions = true;
  const auto report = cache.prune(options);
  EXPECT_EQ(report.older_versions_removed, 3u);
  EXPECT_EQ(report.evicted, 0u);
  EXPECT_EQ(report.entries, 3u);
  EXPECT_GT(report.bytes_freed, 0u);
  EXPECT_EQ(report.not_removed.count, 0u);
  for (const auto& parts : older)
    EXPECT_FALSE(vyre::test::has_entry(tmp / "cache", parts.key()));
  for (const auto& parts : current) {
    auto hit = cache.load_or_compile(parts, [] { return std::string("// lowered again\n"); }, "now");
    EXPECT_TRUE(hit.cache_hit) << "an entry of this version was removed";
    EXPECT_EQ(hit.text, "// now\n");
  }
  EXPECT_EQ(cache.stats().older_versions, 0u);
  EXPECT_EQ(cache.stats().entries, 3u);
  EXPECT_EQ(cache.prune(options).older_versions_removed, 0u);
}

}  // namespace
