// The cache key: exact derivation, and sensitivity to every input that
// shapes the WGSL text and to nothing else.
#include <gtest/gtest.h>

#include <set>

#include "samples/programs.hpp"
#include "support/aot_fixtures.hpp"
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
