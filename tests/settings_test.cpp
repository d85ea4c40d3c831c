// Settings read from the environment in one place per layer, and the
// fingerprint's fields, which the GPU layer writes and the cache reads.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.hpp"
#include "util/fingerprint_fields.hpp"
#include "vyre/gpu.hpp"

namespace vyre {
namespace {

using test::ScopedEnv;

TEST(Settings, BackendOptionsFromEnvironmentReadsTheThreeGpuSettings) {
  ScopedEnv backend("WGPU_BACKEND", "vulkan");
  ScopedEnv adapter("VYRE_WGPU_ADAPTER", "1");
  ScopedEnv fingerprint("VYRE_BACKEND_FINGERPRINT_OVERRIDE", "shared-fleet");
  const gpu::BackendOptions options = gpu::BackendOptions::from_environment();
  EXPECT_EQ(options.backend, "vulkan");
  EXPECT_EQ(options.adapter, "1");
  EXPECT_EQ(options.fingerprint_override, "shared-fleet");
  EXPECT_FALSE(options.cache);  // the cache reads its own settings
}

TEST(Settings, AnEmptyGpuSettingIsUnset) {
  ScopedEnv backend("WGPU_BACKEND", "");
  ScopedEnv adapter("VYRE_WGPU_ADAPTER", nullptr);
  ScopedEnv fingerprint("VYRE_BACKEND_FINGERPRINT_OVERRIDE", "");
  const gpu::BackendOptions options = gpu::BackendOptions::from_environment();
  EXPECT_FALSE(options.backend);
  EXPECT_FALSE(options.adapter);
  EXPECT_FALSE(options.fingerprint_override);
}

TEST(Settings, FingerprintFieldsReadBackWhatWasWritten) {
  const FingerprintFields fields{{"backend", "vulkan"}, {"vendor", "0x10de"}, {"driver", "Mesa 23.1.0 (LLVM 15)"}};
  const std::string written = format_fingerprint(fields);
  EXPECT_EQ(written, "backend=vulkan;vendor=0x10de;driver=Mesa 23.1.0 (LLVM 15)");
  EXPECT_EQ(fingerprint_fields(written), fields);
  // An override may be any string: not fields, compared whole.
  EXPECT_FALSE(fingerprint_fields("shared-fleet"));
  EXPECT_FALSE(fingerprint_fields(""));
}

}  // namespace
}  // namespace vyre
