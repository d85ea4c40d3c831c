// The cache key: exact derivation, and sensitivity to every input that
// shapes the WGSL text and to nothing else.
#include <gtest/gtest.h>

#include <array>
#include <set>

#include "samples/programs.hpp"
#include "support/aot_fixtures.hpp"
#include "support/conformance_cases.hpp"
#include "support/programs.hpp"
#include "vyre/aot.hpp"
#include "vyre/builder.hpp"
#include "vyre/lower.hpp"
#include "vyre/version.hpp"
#include "vyre/wire.hpp"

namespace {

using namespace vyre::build;
using vyre::aot::KeyParts;
using vyre::samples::xor_program;

KeyParts example_parts() {
  KeyParts parts;
  for (int i = 0; i < 32; ++i) parts.program_digest += "ab";
  parts.shaping = "workgroup=128,1,1";
  parts.lowering_version = 1;
  parts.vyre_version = "0.1.0";
  parts.fingerprint = "backend=vulkan;driver=Mesa 22.3.6";
  return parts;
}

vyre::Program xor_program_buffers_reordered() {
  return ProgramBuilder("xor")
      .workgroup_size(64)
      .output("out", 2, ScalarType::U32)
      .input("b", 1, ScalarType::U32)
      .input("a", 0, ScalarType::U32)
      .body({
          let("i", gid()),
          if_(lt(var("i"), len("out")), {store("out", var("i"), bit_xor(load("a", var("i")), load("b", var("i"))))}),
      })
      .build();
}

vyre::Program exp_program() {
  return ProgramBuilder("exp")
      .workgroup_size(64)
      .input("x", 0, ScalarType::F32)
      .output("y", 1, ScalarType::F32)
      .body({
          let("i", gid()),
          if_(lt(var("i"), len("y")), {store("y", var("i"), unary(vyre::Op::Exp, load("x", var("i"))))}),
      })
      .build();
}

// Golden values computed independently (Python hashlib) from the encoding
// documented in docs/cache.md: strings as u64-LE length + bytes, integers
// as u32-LE, each hash under its domain tag.
TEST(AotKey, DerivationMatchesTheDocumentedEncoding) {
  KeyParts parts = example_parts();
  EXPECT_EQ(parts.spec_hash(), "01755a40f099dfd8050de35ad44e3dd6ca98c160a8accd38305e60ffbcdffe86");
  EXPECT_EQ(parts.key(), "0750dade430cfca9196bc68fe176c1d71d9bf09a13573f5a11ed9a06c40523cc");
  EXPECT_EQ(vyre::aot::cache_key(parts.spec_hash(), parts.fingerprint), parts.key());
}

TEST(AotKey, KeysAreSixtyFourLowercaseHexDigits) {
  std::string key = example_parts().key();
  EXPECT_TRUE(vyre::aot::is_valid_key(key));
  EXPECT_FALSE(vyre::aot::is_valid_key(key.substr(1)));
  EXPECT_FALSE(vyre::aot::is_valid_key(key + "0"));
  std::string upper = key;
  upper[0] = 'A';
  EXPECT_FALSE(vyre::aot::is_valid_key(upper));
  EXPECT_FALSE(vyre::aot::is_valid_key("../../../../etc/passwd" + std::string(42, 'a')));
  EXPECT_FALSE(vyre::aot::is_valid_key(""));
}

TEST(AotKey, EveryComponentChangesTheKey) {
  const KeyParts base = example_parts();
  std::vector<KeyParts> variants(5, base);
  variants[0].program_digest[0] = 'c';
  variants[1].shaping = "workgroup=64,1,1";
  variants[2].lowering_version = 2;
  variants[3].vyre_version = "0.1.1";
  variants[4].fingerprint = "backend=vulkan;driver=Mesa 23.0.0";
  std::set<std::string> keys{base.key()};
  for (const auto& v : variants) keys.insert(v.key());
  EXPECT_EQ(keys.size(), 6u);
  // The fingerprint is outside the spec hash; everything else is inside.
  EXPECT_EQ(variants[4].spec_hash(), base.spec_hash());
  for (int i = 0; i < 4; ++i) EXPECT_NE(variants[i].spec_hash(), base.spec_hash()) << i;
}

TEST(AotKey, LengthPrefixesKeepFieldBoundaries) {
  KeyParts a = example_parts(), b = example_parts();
  a.shaping = "ab";
  a.vyre_version = "c";
  b.shaping = "a";
  b.vyre_version = "bc";
  EXPECT_NE(a.key(), b.key());
  EXPECT_NE(vyre::aot::cache_key("ab", "c"), vyre::aot::cache_key("a", "bc"));
}

TEST(AotKey, PartsNameTheProgramDigestLoweringAndVyreVersions) {
  vyre::Program p = xor_program();
  KeyParts parts = vyre::aot::key_parts(p, "fp");
  EXPECT_EQ(parts.program_digest, vyre::digest(p).hex());
  EXPECT_EQ(parts.shaping, vyre::shaping_signature(p, {}));
  EXPECT_EQ(parts.lowering_version, vyre::kLoweringVersion);
  EXPECT_EQ(parts.vyre_version, vyre::kVersion);
  EXPECT_EQ(parts.fingerprint, "fp");
}

TEST(AotKey, NameAndBufferOrderDoNotChangeTheKey) {
  std::string key = vyre::aot::key_parts(xor_program(), "fp").key();
  EXPECT_EQ(vyre::aot::key_parts(xor_program("another label"), "fp").key(), key);
  EXPECT_EQ(vyre::aot::key_parts(xor_program_buffers_reordered(), "fp").key(), key);
}

TEST(AotKey, WorkgroupOverrideChangesTheKeyUnlessItRepeatsTheProgramsOwn) {
  vyre::Program p = xor_program();
  std::string key = vyre::aot::key_parts(p, "fp").key();
  vyre::ShaderOptions other;
  other.workgroup_override = vyre::Dim3{128, 1, 1};
  EXPECT_NE(vyre::aot::key_parts(p, "fp", other).key(), key);
  vyre::ShaderOptions same;
  same.workgroup_override = vyre::Dim3{64, 1, 1};
  EXPECT_EQ(vyre::aot::key_parts(p, "fp", same).key(), key);
}

// Both ways at once, against the real lowering: two configs give the same
// key exactly when they give the same WGSL text.
TEST(AotKey, ConfigsChangeTheKeyExactlyWhenTheyChangeTheText) {
  std::vector<vyre::ShaderOptions> configs(1);
  for (vyre::Dim3 wg : {vyre::Dim3{64, 1, 1}, vyre::Dim3{128, 1, 1}, vyre::Dim3{32, 2, 1}, vyre::Dim3{1, 1, 1}}) {
    vyre::ShaderOptions c;
    c.workgroup_override = wg;
    configs.push_back(c);
  }
  for (int ulp : {0, 1, 4, 255}) {
    vyre::ShaderOptions c;
    c.ulp_budget = static_cast<uint8_t>(ulp);
    configs.push_back(c);
  }
  vyre::ShaderOptions all;
  all.workgroup_override = vyre::Dim3{128, 1, 1};
  all.ulp_budget = 4;
  configs.push_back(all);

  for (const vyre::CheckedProgram& p : {vyre::CheckedProgram(xor_program()), vyre::CheckedProgram(exp_program())}) {
    for (size_t i = 0; i < configs.size(); ++i)
      for (size_t j = 0; j < configs.size(); ++j) {
        bool same_text = vyre::lower_to_wgsl(p, configs[i]) == vyre::lower_to_wgsl(p, configs[j]);
        bool same_key = vyre::aot::key_parts(p, "fp", configs[i]).key() == vyre::aot::key_parts(p, "fp", configs[j]).key();
        EXPECT_EQ(same_text, same_key) << p.name() << " configs " << i << " and " << j;
      }
  }
}

TEST(AotKey, ProgramChangesChangeTheKey) {
  vyre::Program p = xor_program();
  vyre::Program q = p;
  q.workgroup_size = {32, 1, 1};
  EXPECT_NE(vyre::aot::key_parts(q, "fp").key(), vyre::aot::key_parts(p, "fp").key());
  vyre::Program r = p;  // the same program on i32 buffers
  for (auto& b : r.buffers) b.type = ScalarType::I32;
  EXPECT_NE(vyre::aot::key_parts(r, "fp").key(), vyre::aot::key_parts(p, "fp").key());
}

TEST(AotKey, FingerprintChangesTheKey) {
  vyre::Program p = xor_program();
  EXPECT_NE(vyre::aot::key_parts(p, "driver=a").key(), vyre::aot::key_parts(p, "driver=b").key());
}

}  // namespace

namespace {

// A digest, once published, never changes: every version-1 example keeps
// the digest and the cache key (for one fingerprint, at this lowering and
// library version) it had before format version 4 existed, and the 244
// conformance programs keep their digests (one hash over all of them).
// Written down when version 4 came, from the build before it (`vyre hash`,
// `VYRE_WIDEN=0 vyre cache explain --fingerprint pinned-fingerprint --json`,
// the shader without vector widening, and the same
// hash over the digests of its conformance programs).
TEST(AotKey, VersionOneProgramsKeepTheirDigestsAndKeys) {
  const std::vector<std::array<const char*, 3>> pinned = {
      {"xor", "a3de9b847d61fd7438eb89ee330bb7700fb90d9e266e5e1dbeb586295038b364",
       "95eea1d7a5e70bb3726cdfd4913010cb8d440035a6bd6442bf0deea7406d5d8d"},
      {"saxpy", "ba2b237382ba20caeed24326f4d2b9b4ebb81b4bdbdf2dac5130cedb1109bc52",
       "456e379db628472a330249a1b9e449b3a78f31fba2220619afd7134a6e28db78"},
      {"collatz", "0654b7c588967af130c8f3599342854508ae29e3b0c81a9527beff6f41b309fc",
       "0346f14414c00dcb42655e2e12b6139a063ecc4fe534d5ead55f4d28225ca824"},
      {"histogram", "deaf934d8d1563820aea35335eeca03124ce528cc9011f2ef8915bd8db1e08dc",
       "83877aa50b9abdecfa05c6d3cf0c0310e30267a2352f64f0c8867b270d8543fc"},
      {"reduction", "759c7f1f70841c076aed293ae22ef80c1f37414eea67f06b85a203c16ada215b",
       "72ee19afab245da79d9fa3de74126d5d19a2532bd6d8c5bbc0da0cd9bf463680"},
      {"prefix_sum", "0c69bc8b7e621d5a8fb8a69a0d5d55a4321912df3e8b701acc3c69649761bd1d",
       "fa7d35c64f64061b8088dc4b1c7f26ce127663efcfb52c7f9b7f3f130a7642b3"},
      {"matmul_tiled", "2edd9f169afbe2225fc63d8eaebaa8f30d69b7576143fc0f7a79efc8f70b2111",
       "e969e0b0e654947b3e3663e61ca3cb0472bbebb3fb246db0bad4f6efdf34f563"},
      {"softmax", "603c40e84831babde62951581e8da8ed96d2578517e4c765761c585f3ae2a7ae",
       "21f0e881cf477b69afea5c5a19de06a4245b99086a6beb271c9bac6fe4f8ed71"},
      {"bitonic_sort", "cc851969583ad625181ce746c7ff57e95cefc33fbccf1dbd3835e1b9a4d89192",
       "52073c842eab567ca8e05ec3eab5dc69e1d780b78d0963dd236e68bac96afc9c"},
  };
  EXPECT_EQ(vyre::kLoweringVersion, 10u);
  for (const auto& [name, digest, key] : pinned) {
    const vyre::CheckedProgram p = vyre::test::example(name);
    EXPECT_EQ(vyre::format_version(p.program()), 1u) << name;
    EXPECT_EQ(vyre::digest(p).hex(), digest) << name;
    KeyParts parts = vyre::aot::key_parts(p, "pinned-fingerprint");
    parts.vyre_version = "0.1.0";  // the library's version when the keys were written down
    EXPECT_EQ(parts.key(), key) << name;
  }
  std::string digests;
  for (const auto& c : vyre::test::conformance::all_cases()) {
    digests += vyre::digest(vyre::test::conformance::loaded_program(*c)).hex();
    digests += vyre::digest(vyre::test::conformance::literal_program(*c)).hex();
  }
  for (const auto& s : vyre::test::conformance::construct_scenarios())
    if (vyre::format_version(s.program) == 1) digests += vyre::digest(s.program).hex();
  EXPECT_EQ(digests.size(), 244u * 64);
  EXPECT_EQ(vyre::sha256(digests).hex(), "f8e8a060a650991938ad5315f5ccfdf507c5faf6cb3ab960196e2be44819a9c7");
}

}  // namespace
