// What a WGSL cache entry's key holds of the adapter: only what shapes the
// text, so that a driver update or another GPU with the same traits keeps
// every entry, while a driver workaround that changes the text still
// changes the key.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "gpu/fingerprint.hpp"
#include "support/programs.hpp"
#include "support/test_support.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"
#include "vyre/lower.hpp"

namespace vyre::gpu {
namespace {

const std::string kLavapipe =
    "wgpu-native=29.0.0.0;backend=vulkan;vendor=0x10005;device=0x0000;name=llvmpipe (LLVM 15.0.6, 256 bits);"
    "driver=Mesa 22.3.6 (LLVM 15.0.6)";
const std::string kLavapipeUpdated =
    "wgpu-native=29.0.1.0;backend=vulkan;vendor=0x10005;device=0x0000;name=llvmpipe (LLVM 16.0.6, 256 bits);"
    "driver=Mesa 23.1.0 (LLVM 16.0.6)";
const std::string kH200 =
    "wgpu-native=29.0.0.0;backend=vulkan;vendor=0x10de;device=0x2335;name=NVIDIA H200;driver=580.159.04";
const std::string kH200Updated =
    "wgpu-native=29.0.0.0;backend=vulkan;vendor=0x10de;device=0x2335;name=NVIDIA H200;driver=590.10.01";

TEST(WgslTarget, ADriverUpdateKeepsTheKey) {
  for (const char* name : {"xor", "softmax", "matmul_tiled"}) {
    const CheckedProgram program = test::example(name);
    EXPECT_EQ(wgsl_target(program, kH200).parts.key(), wgsl_target(program, kH200Updated).parts.key()) << name;
    EXPECT_EQ(wgsl_target(program, kLavapipe).parts.key(), wgsl_target(program, kLavapipeUpdated).parts.key()) << name;
  }
}

TEST(WgslTarget, TheKeyNamesTheTextTargetNotTheDevice) {
  const CheckedProgram program = test::example("xor");
  const WgslTarget t = wgsl_target(program, kH200);
  EXPECT_EQ(t.parts.fingerprint, "target=wgsl");
  EXPECT_EQ(t.parts.fingerprint.find("H200"), std::string::npos);
  // A loop-free program has the same text, so the same entry, on every GPU.
  EXPECT_EQ(t.parts.key(), wgsl_target(program, kLavapipe).parts.key());
}

TEST(WgslTarget, ADriverWorkaroundThatChangesTheTextChangesTheKey) {
  // softmax loops: on lavapipe it runs with the loop guard, which changes its text.
  const CheckedProgram program = test::example("softmax");
  ASSERT_TRUE(program.has_loop());
  const WgslTarget nvidia = wgsl_target(program, kH200);
  const WgslTarget lavapipe = wgsl_target(program, kLavapipe);
  EXPECT_FALSE(nvidia.options.loop_guard);
  EXPECT_TRUE(lavapipe.options.loop_guard);
  EXPECT_NE(nvidia.parts.key(), lavapipe.parts.key());
  EXPECT_NE(lower_to_wgsl(program, nvidia.options), lower_to_wgsl(program, lavapipe.options))
      << "the keys differ because the texts do";
}

TEST(WgslTarget, AnOverrideStandsForTheTargetWhole) {
  const CheckedProgram program = test::example("softmax");
  const WgslTarget t = wgsl_target(program, "shared-ci-fleet");
  EXPECT_EQ(t.parts.fingerprint, "shared-ci-fleet");
  EXPECT_FALSE(t.options.loop_guard) << "an override names no adapter, so no workaround";
}

TEST(WgslTarget, AFingerprintIsReadBackIntoTheAdapterItNames) {
  const auto adapter = adapter_from_fingerprint(kH200);
  ASSERT_TRUE(adapter);
  EXPECT_EQ(adapter->name, "NVIDIA H200");
  EXPECT_EQ(adapter->driver, "580.159.04");
  EXPECT_EQ(adapter->vendor_id, 0x10deu);
  EXPECT_EQ(adapter->device_id, 0x2335u);
  EXPECT_FALSE(adapter_from_fingerprint("shared-ci-fleet"));
  EXPECT_FALSE(adapter_from_fingerprint("backend=vulkan;driver=x")) << "no name: not an adapter's";
  EXPECT_FALSE(adapter_from_fingerprint("name=x;vendor=0xZZ")) << "a vendor id that is not hex";
}

// On the local adapter: a Backend looks programs up by exactly these parts,
// so an entry written for the same GPU under another driver is a hit.
TEST(WgslTarget, ABackendHitsAnEntryWrittenUnderAnotherDriver) {
  test::TempDir tmp;
  aot::CacheOptions cache_options;
  cache_options.directory = tmp / "cache";
  auto cache = std::make_shared<aot::Cache>(cache_options);
  BackendOptions options;
  options.cache = cache;
  options.fingerprint_override = std::string();  // the adapter's own, whatever the environment says
  std::optional<Backend> backend;
  try {
    backend.emplace(options);
  } catch (const Error& e) {
    GTEST_SKIP() << "no GPU adapter: " << e.what();
  }
  const CheckedProgram program = test::example("softmax");
  std::string other_driver = backend->adapter().fingerprint;
  other_driver = other_driver.substr(0, other_driver.find(";driver=")) + ";driver=an older release";
  const WgslTarget old = wgsl_target(program, other_driver);
  EXPECT_EQ(old.parts, backend->wgsl_target(program).parts);
  const aot::Artifact written =
      cache->load_or_compile(old.parts, [&] { return lower_to_wgsl(program, old.options); }, program.name());
  ASSERT_FALSE(written.cache_hit);
  const Pipeline pipeline = backend->compile(program);
  EXPECT_TRUE(pipeline.compile_report().cache_hit);
  EXPECT_EQ(pipeline.compile_report().cache_key, written.key);
}

}  // namespace
}  // namespace vyre::gpu
