// A dispatch that runs too long: with BackendOptions::dispatch_timeout the
// call fails with device_lost after the timeout instead of blocking, the
// device is given up (its work cannot be stopped) and the next call runs on a
// new one. The process then still ends without waiting for the old work.
#include <gtest/gtest.h>

#include <chrono>

#include "support/gpu_test_support.hpp"
#include "support/programs.hpp"
#include "support/test_support.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"

namespace vyre {
namespace {

using namespace vyre::build;
using vyre::test::contains;
using vyre::test::error_of;

TEST(DispatchTimeout, ADispatchPastTheTimeoutFailsAndTheNextCallRunsOnANewDevice) {
  gpu::BackendOptions options = vyre::test::no_disk_cache();
  options.dispatch_timeout = std::chrono::milliseconds(1500);
  gpu::Backend backend(options);
  // 65535 x 512 workgroups of atomics: seconds on lavapipe.
  const CheckedProgram busy = ProgramBuilder("busy")
                                  .output("out", 0, ScalarType::U32, 1)
                                  .body({eval(atomic(AtomicOp::Max, "out", u32(0), wid(Axis::Y)))})
                                  .build();
  gpu::Pipeline pipeline = backend.compile(busy);
  const auto start = std::chrono::steady_clock::now();
  try {
    pipeline.dispatch(Inputs{}, Dim3{65535, 512, 1});
    GTEST_SKIP() << "'" << backend.adapter().name << "' ran 65535 x 512 workgroups within 1.5 s";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::device_lost) << e.what();
    EXPECT_TRUE(contains(e.what(), "ran longer than the wait limit of 1500 ms")) << e.what();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 10.0);
  // Recovered: the next compile and dispatch run on a new device. On a CPU
  // device the abandoned work still holds the cores until it ends, so the
  // first dispatches on the new device may time out too; within a minute
  // one must succeed, each on a fresh device.
  std::optional<Outputs> out;
  for (int attempt = 0; attempt < 40 && !out; ++attempt) {
    try {
      out = backend.compile(vyre::test::xor_program())
                .dispatch(Inputs().set<uint32_t>("a", {1, 2}).set<uint32_t>("b", {3, 3}).size("out", 2));
    } catch (const Error& e) {
      ASSERT_EQ(e.kind(), ErrorKind::device_lost) << e.what();
    }
  }
  ASSERT_TRUE(out.has_value()) << "no dispatch succeeded on a new device";
  EXPECT_EQ(out->get<uint32_t>("out"), (std::vector<uint32_t>{2, 1}));
  EXPECT_GE(backend.counters().devices_opened, 2u);
}

TEST(DispatchTimeout, ALimitLongerThanTheClockCountsNeverExpires) {
  // now + milliseconds::max() overflows the steady clock's nanoseconds: the
  // deadline must saturate, not land in the past and fail every dispatch.
  for (const auto limit : {std::chrono::milliseconds::max(), std::chrono::milliseconds(9'300'000'000'000'000)}) {
    gpu::BackendOptions options = vyre::test::no_disk_cache();
    options.dispatch_timeout = limit;
    gpu::Backend backend(options);
    const Outputs out = backend.compile(vyre::test::xor_program())
                            .dispatch(Inputs().set<uint32_t>("a", {1, 2}).set<uint32_t>("b", {3, 3}).size("out", 2));
    EXPECT_EQ(out.get<uint32_t>("out"), (std::vector<uint32_t>{2, 1})) << limit.count();
  }
}

TEST(DispatchTimeout, AnEnvironmentDurationBeyondACenturyIsACentury) {
  vyre::test::ScopedEnv timeout("VYRE_DISPATCH_TIMEOUT", "300000000000h");
  EXPECT_EQ(gpu::BackendOptions::from_environment().dispatch_timeout,
            std::chrono::milliseconds(int64_t{36525} * 86400 * 1000));
}

TEST(DispatchTimeout, TheEnvironmentGivesItAndRefusesNonsense) {
  vyre::test::ScopedEnv timeout("VYRE_DISPATCH_TIMEOUT", "90s");
  EXPECT_EQ(gpu::BackendOptions::from_environment().dispatch_timeout, std::chrono::milliseconds(90'000));
  for (const char* nonsense : {"soon", "inf", "nan", "-5s", "1.5s"}) {
    vyre::test::ScopedEnv bad("VYRE_DISPATCH_TIMEOUT", nonsense);
    error_of(ErrorKind::invalid_input, [] { gpu::BackendOptions::from_environment(); });
  }
  vyre::test::ScopedEnv none("VYRE_DISPATCH_TIMEOUT", "0");
  EXPECT_FALSE(gpu::BackendOptions::from_environment().dispatch_timeout.has_value());
}

}  // namespace
}  // namespace vyre
