// Settings read from the environment in one place per layer, and the
// fingerprint's fields, which the GPU layer writes and the cache reads.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.hpp"
#include "util/fingerprint_fields.hpp"
#include "vyre/aot.hpp"
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

TEST(Settings, RemoteTimeoutsAreAtMostADayHoweverTheyAreWritten) {
  using std::chrono::milliseconds;
  ScopedEnv remote("VYRE_AOT_REMOTE", "redis://127.0.0.1:6379");
  const auto timeout_for = [](const char* value) {
    ScopedEnv timeout("VYRE_AOT_REMOTE_TIMEOUT", value);
    return aot::CacheOptions::from_environment().remote->operation_timeout;
  };
  EXPECT_EQ(timeout_for("2s"), milliseconds(2000));
  EXPECT_EQ(timeout_for("86400s"), milliseconds(86'400'000));
  EXPECT_EQ(timeout_for("86400000"), milliseconds(86'400'000));
  // Past a day, in seconds as in milliseconds, or no number at all: the default.
  const milliseconds fallback = aot::RemoteOptions{}.operation_timeout;
  for (const char* refused : {"86401s", "86400001ms", "9300000000000000s", "99999999999999999999999s", "inf", "nan"})
    EXPECT_EQ(timeout_for(refused), fallback) << refused;
  ScopedEnv wait("VYRE_AOT_REMOTE_LEASE_WAIT", "100000000s");
  EXPECT_EQ(aot::CacheOptions::from_environment().remote->lease_wait, aot::RemoteOptions{}.lease_wait);
}

TEST(Settings, ARemoteTtlBeyondACenturyIsACentury) {
  ScopedEnv remote("VYRE_AOT_REMOTE", "redis://127.0.0.1:6379");
  ScopedEnv ttl("VYRE_AOT_REMOTE_TTL", "300000000000h");
  EXPECT_EQ(aot::CacheOptions::from_environment().remote->ttl, std::chrono::seconds(int64_t{36525} * 86400));
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
