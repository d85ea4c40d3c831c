// Authorship of cache entries: Ed25519 signatures, and the directories they
// make usable: a group- or world-writable directory, or a layer owned by
// another user (a CI account), is refused unless trusted keys are set, and
// then serves only entries a trusted key signed.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "aot/entry/entry.hpp"
#include "aot/entry/entry_signature.hpp"
#include "aot/entry/hashing.hpp"
#include "support/aot_fixtures.hpp"
#include "support/remote_fixtures.hpp"
#include "support/signing_keys.hpp"
#include "support/stored_entries.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"

namespace {

using vyre::aot::Cache;
using vyre::aot::CacheOptions;
using vyre::test::synthetic_parts;
using vyre::test::synthetic_wgsl;
using vyre::test::TempDir;
using vyre::test::checked_lookup;


void fill(const std::filesystem::path& dir, const std::vector<std::string>& names,
          const std::optional<std::filesystem::path>& signing_key = std::nullopt) {
  CacheOptions options = vyre::test::cache_options();
  options.directory = dir;
  options.signing_key = signing_key;
  Cache cache(options);
  for (const auto& n : names) checked_lookup(cache, n);
}

// A layer is refused without trusted keys; with them, its signed entry is
// served and its unsigned one rejected.
void expect_served_only_when_signed(const TempDir& tmp, const vyre::test::KeyPair& ci, const char* why) {
  CacheOptions options = vyre::test::cache_options();
  options.directory = tmp / "mine";
  options.readonly_directories = {tmp / "layer"};
  {
    Cache cache(options);
    EXPECT_FALSE(checked_lookup(cache, "signed").cache_hit) << why;
  }
  std::filesystem::remove_all(tmp / "mine");
  options.trusted_keys = {ci.public_pem};
  Cache cache(options);
  EXPECT_TRUE(checked_lookup(cache, "signed").cache_hit);
  EXPECT_FALSE(checked_lookup(cache, "unsigned").cache_hit);
  EXPECT_EQ(cache.stats().rejected, 1u);
  // verify reports the unsigned one as bad.
  auto report = cache.verify(false);
  bool found = false;
  for (const auto& bad : report.bad) found = found || bad.key == synthetic_parts("unsigned").key();
  EXPECT_TRUE(found);
}

TEST(EntrySignature, CoversTheKeyAndTheContent) {
  TempDir tmp;
  auto ci = vyre::test::make_key_pair(tmp.path(), "ci");
  auto other = vyre::test::make_key_pair(tmp.path(), "other");
  auto signer = vyre::aot::EntrySigner::load(ci.private_pem);
  ASSERT_TRUE(signer) << signer.failure().message;
  auto trusted = vyre::aot::TrustedKeys::load({ci.public_pem});
  ASSERT_TRUE(trusted) << trusted.failure().message;
  auto meta = vyre::aot::make_metadata(synthetic_parts("a"), "a", synthetic_wgsl("a"), 1.0);
  meta.signature = (*signer)->sign(meta);
  EXPECT_TRUE(meta.signature.starts_with("ed25519:" + (*signer)->key_id() + ":")) << meta.signature;
  EXPECT_TRUE((*trusted)->verify(meta));

  auto changed = meta;
  changed.content_sha256[0] = changed.content_sha256[0] == 'a' ? 'b' : 'a';
  EXPECT_EQ((*trusted)->verify(changed).failure().kind, vyre::sys::Fault::untrusted);
  changed = meta;
  changed.key = synthetic_parts("b").key();
  EXPECT_FALSE((*trusted)->verify(changed));
  changed = meta;
  changed.wgsl_bytes += 1;
  EXPECT_FALSE((*trusted)->verify(changed));
  changed = meta;
  changed.signature.clear();
  EXPECT_TRUE(vyre::test::contains((*trusted)->verify(changed).failure().message, "unsigned"));
  changed.signature = (*vyre::aot::EntrySigner::load(other.private_pem))->sign(meta);
  EXPECT_TRUE(vyre::test::contains((*trusted)->verify(changed).failure().message, "not among"));
  changed.signature = "ed25519:zz";
  EXPECT_FALSE((*trusted)->verify(changed));

  // The label and timings are not covered: changing them keeps the signature valid.
  changed = meta;
  changed.program = "renamed";
  changed.lower_ms = 99;
  EXPECT_TRUE((*trusted)->verify(changed));
}

TEST(EntrySignature, KeysAreCheckedWhenLoaded) {
  TempDir tmp;
  auto ci = vyre::test::make_key_pair(tmp.path(), "ci");
  ::chmod(ci.private_pem.c_str(), 0644);
  auto readable = vyre::aot::EntrySigner::load(ci.private_pem);
  ASSERT_FALSE(readable);
  EXPECT_TRUE(vyre::test::contains(readable.failure().message, "chmod 600")) << readable.failure().message;
  EXPECT_FALSE(vyre::aot::EntrySigner::load(ci.public_pem));  // not a private key
  vyre::test::write_file(tmp / "junk.pub", "not a key");
  auto junk = vyre::aot::TrustedKeys::load({tmp / "junk.pub"});
  ASSERT_FALSE(junk);
  EXPECT_TRUE(vyre::test::contains(junk.failure().message, "openssl genpkey")) << junk.failure().message;
}

TEST(EntrySignature, SignedEntriesKeepTheirSignatureThroughExportAndBackfill) {
  TempDir tmp;
  auto ci = vyre::test::make_key_pair(tmp.path(), "ci");
  fill(tmp / "ci-cache", {"a"}, ci.private_pem);
  const std::string key = synthetic_parts("a").key();
  EXPECT_TRUE(vyre::test::contains(vyre::test::read_entry_part(tmp / "ci-cache", key, vyre::test::EntryPart::metadata).value_or(""),
                                   "ed25519:"));
  CacheOptions options = vyre::test::cache_options();
  options.directory = tmp / "ci-cache";
  Cache(options).export_to(tmp / "exported");
  EXPECT_TRUE(vyre::test::contains(vyre::test::read_entry_part(tmp / "exported", key, vyre::test::EntryPart::metadata).value_or(""),
                                   "ed25519:"));
}

// An imported entry is served from the user's own directory unchecked, so
// with trusted keys import takes only what a trusted key signed: an export
// whose WGSL was edited (digest and size fixed up) is refused, not served.
TEST(EntrySignature, ImportWithTrustedKeysRefusesWhatNoTrustedKeySigned) {
  TempDir tmp;
  auto ci = vyre::test::make_key_pair(tmp.path(), "ci");
  fill(tmp / "plain-cache", {"a", "b"});
  fill(tmp / "ci-cache", {"c"}, ci.private_pem);
  CacheOptions from_plain = vyre::test::cache_options();
  from_plain.directory = tmp / "plain-cache";
  Cache(from_plain).export_to(tmp / "exported");
  // The attack: an edited text with its metadata made consistent again.
  const std::string key = synthetic_parts("a").key();
  const std::string forged = "// forged\n" + synthetic_wgsl("a");
  vyre::test::write_file(vyre::test::wgsl_path(tmp / "exported", key), forged);
  vyre::aot::Metadata meta;
  ASSERT_TRUE(vyre::aot::parse_metadata(vyre::test::read_file(vyre::test::metadata_path(tmp / "exported", key)), meta));
  meta.content_sha256 = vyre::aot::sha256_hex(forged);
  meta.wgsl_bytes = forged.size();
  vyre::test::write_file(vyre::test::metadata_path(tmp / "exported", key), vyre::aot::encode_metadata(meta));
  CacheOptions from_ci = vyre::test::cache_options();
  from_ci.directory = tmp / "ci-cache";
  Cache(from_ci).export_to(tmp / "exported");

  CacheOptions options = vyre::test::cache_options();
  options.directory = tmp / "mine";
  options.trusted_keys = {ci.public_pem};
  Cache cache(options);
  auto report = cache.import_from(tmp / "exported", std::nullopt);
  EXPECT_EQ(report.copied, 1u) << "the signed entry";
  EXPECT_EQ(report.refused_unsigned, 2u);
  EXPECT_NE(report.refused_reason.find("unsigned"), std::string::npos) << report.refused_reason;
  EXPECT_FALSE(checked_lookup(cache, "a").cache_hit) << "the forged text is not served";
  EXPECT_TRUE(checked_lookup(cache, "c").cache_hit);
  // Without trusted keys import checks integrity only, as documented.
  CacheOptions plain = vyre::test::cache_options();
  plain.directory = tmp / "theirs";
  EXPECT_EQ(Cache(plain).import_from(tmp / "exported", std::nullopt).refused_unsigned, 0u);
}

TEST(DirectoryPermissions, AGroupWritableCacheDirectoryIsRefusedUnlessEntriesMustBeSigned) {
  TempDir tmp;
  auto ci = vyre::test::make_key_pair(tmp.path(), "ci");
  std::filesystem::create_directory(tmp / "shared");
  ::chmod((tmp / "shared").c_str(), 0775);
  CacheOptions options = vyre::test::cache_options();
  options.directory = tmp / "shared";
  {
    Cache cache(options);
    EXPECT_FALSE(cache.directory()) << "group-writable: others could plant entries";
    int lowered = 0;
    checked_lookup(cache, "a", &lowered);
    checked_lookup(cache, "a", &lowered);
    EXPECT_EQ(lowered, 2);
  }
  // With trusted keys it is used, and serves only signed entries.
  options.trusted_keys = {ci.public_pem};
  options.signing_key = ci.private_pem;
  Cache cache(options);
  ASSERT_TRUE(cache.directory());
  int lowered = 0;
  checked_lookup(cache, "a", &lowered);
  EXPECT_TRUE(checked_lookup(cache, "a", &lowered).cache_hit);
  EXPECT_EQ(lowered, 1);
  // An unsigned entry planted there (by a process without the key) is refused.
  fill(tmp / "plain", {"b"});
  const std::string key = synthetic_parts("b").key();
  // (A signed-only directory keeps files, whichever store `plain` has.)
  using vyre::test::EntryPart;
  vyre::test::write_file(vyre::test::wgsl_path(tmp / "shared", key),
                         vyre::test::read_entry_part(tmp / "plain", key, EntryPart::wgsl).value_or(""));
  vyre::test::write_file(vyre::test::metadata_path(tmp / "shared", key),
                         vyre::test::read_entry_part(tmp / "plain", key, EntryPart::metadata).value_or(""));
  EXPECT_FALSE(checked_lookup(cache, "b", &lowered).cache_hit);
  EXPECT_GE(cache.stats().rejected, 1u);
}

// A process that trusts keys but signs with none of them would write
// entries that it and every trusting reader then refuse, run after run: it
// writes nothing into a directory that serves only signed entries.
TEST(DirectoryPermissions, AProcessWithoutATrustedSigningKeyWritesNothingIntoASignedOnlyDirectory) {
  TempDir tmp;
  auto ci = vyre::test::make_key_pair(tmp.path(), "ci");
  std::filesystem::create_directory(tmp / "shared");
  ::chmod((tmp / "shared").c_str(), 0775);
  CacheOptions options = vyre::test::cache_options();
  options.directory = tmp / "shared";
  options.trusted_keys = {ci.public_pem};
  {
    Cache cache(options);
    ASSERT_TRUE(cache.directory());
    int lowered = 0;
    checked_lookup(cache, "a", &lowered);
    checked_lookup(cache, "a", &lowered);
    EXPECT_EQ(lowered, 2) << "nothing it could serve was written";
    EXPECT_EQ(cache.list().size(), 0u);
    EXPECT_EQ(cache.stats().bad_entries, 0u) << "no entry of its own rejected";
  }
  // The signer's entry there is served to it, and it never replaces it.
  options.signing_key = ci.private_pem;
  { Cache signer(options); checked_lookup(signer, "a"); }
  options.signing_key.reset();
  Cache reader(options);
  EXPECT_TRUE(checked_lookup(reader, "a").cache_hit);
}

TEST(DirectoryPermissions, AWorldWritableLayerServesOnlySignedEntriesWithTrustedKeys) {
  TempDir tmp;
  auto ci = vyre::test::make_key_pair(tmp.path(), "ci");
  fill(tmp / "layer", {"signed"}, ci.private_pem);
  fill(tmp / "layer", {"unsigned"});
  ::chmod((tmp / "layer").c_str(), 0777);
  expect_served_only_when_signed(tmp, ci, "a world-writable layer is refused");
}

TEST(DirectoryPermissions, ALayerOwnedByACiAccountWorksWithTrustedKeys) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the layer to another user (chown)";
  TempDir tmp;
  auto ci = vyre::test::make_key_pair(tmp.path(), "ci");
  fill(tmp / "layer", {"signed"}, ci.private_pem);
  fill(tmp / "layer", {"unsigned"});
  for (const auto& e : std::filesystem::recursive_directory_iterator(tmp / "layer"))
    ASSERT_EQ(::lchown(e.path().c_str(), 4242, 4242), 0);
  ASSERT_EQ(::chown((tmp / "layer").c_str(), 4242, 4242), 0);
  expect_served_only_when_signed(tmp, ci, "owned by another user, no trusted keys: refused");
}

TEST(DirectoryPermissions, UnusableTrustedKeysFailClosed) {
  TempDir tmp;
  auto ci = vyre::test::make_key_pair(tmp.path(), "ci");
  fill(tmp / "layer", {"signed"}, ci.private_pem);
  ::chmod((tmp / "layer").c_str(), 0777);
  CacheOptions options = vyre::test::cache_options();
  options.directory = tmp / "mine";
  options.readonly_directories = {tmp / "layer"};
  options.trusted_keys = {tmp / "missing.pub"};
  Cache cache(options);
  EXPECT_FALSE(checked_lookup(cache, "signed").cache_hit);
}

}  // namespace
