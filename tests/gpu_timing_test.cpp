// GPU timing by timestamps (BackendOptions::gpu_timestamps,
// Backend::set_gpu_timing): off unless asked for; where the device has
// timestamp-query, each timed submission (a dispatch, a Batch, a Batch whose
// passes are split by readback copies) is counted once, its GPU time lies
// within the call's own time on the host's clock, and its results are those
// of the same work untimed.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

#include "support/gpu_test_support.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"

namespace vyre::gpu {
namespace {

using namespace vyre::build;
using Clock = std::chrono::steady_clock;

// out[i] = in[i] * 3 + i, with a loop of `rounds` to give the GPU some work.
Program busy(uint32_t rounds) {
  return ProgramBuilder("busy_" + std::to_string(rounds))
      .workgroup_size(64)
      .input("in", 0, ScalarType::U32)
      .output("out", 1, ScalarType::U32)
      .body({let("i", gid()),
             if_(lt(var("i"), len("out")),
                 {let("acc", load("in", var("i"))),
                  loop("k", u32(0), u32(rounds), {assign("acc", add(mul(var("acc"), u32(3)), var("k")))}),
                  store("out", var("i"), var("acc"))})})
      .build();
}

std::vector<uint32_t> expected(const std::vector<uint32_t>& in, uint32_t rounds) {
  std::vector<uint32_t> out(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    uint32_t acc = in[i];
    for (uint32_t k = 0; k < rounds; ++k) acc = acc * 3 + k;
    out[i] = acc;
  }
  return out;
}

std::vector<uint32_t> words(uint32_t n) {
  std::vector<uint32_t> v(n);
  for (uint32_t i = 0; i < n; ++i) v[i] = i * 2654435761u + 17;
  return v;
}

BackendOptions timestamps() {
  BackendOptions options = test::no_disk_cache();
  options.gpu_timestamps = true;
  return options;
}

double ms_since(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

TEST(GpuTiming, OffUnlessAskedFor) {
  Backend backend(test::no_disk_cache());
  EXPECT_FALSE(backend.gpu_timing_available());
  const std::string why = test::error_of(ErrorKind::invalid_input, [&] { backend.set_gpu_timing(true); });
  EXPECT_NE(why.find("gpu_timestamps"), std::string::npos) << why;
  backend.set_gpu_timing(false);  // always allowed
  const std::vector<uint32_t> in = words(1000);
  Inputs inputs;
  inputs.set<uint32_t>("in", in).size("out", in.size());
  DispatchReport report;
  EXPECT_EQ(backend.compile(busy(4)).dispatch(inputs, std::nullopt, &report).get<uint32_t>("out"), expected(in, 4));
  EXPECT_EQ(report.gpu_ms, -1);
  EXPECT_EQ(backend.counters().timed_submits, 0u);
  EXPECT_EQ(backend.counters().gpu_ns, 0u);
}

TEST(GpuTiming, MaskedFeatureIsNotAvailable) {
  setenv("VYRE_MASK_FEATURES", "timestamp-query", 1);
  Backend backend(timestamps());
  unsetenv("VYRE_MASK_FEATURES");
  EXPECT_FALSE(backend.gpu_timing_available());
  const std::string why = test::error_of(ErrorKind::invalid_input, [&] { backend.set_gpu_timing(true); });
  EXPECT_NE(why.find("masked"), std::string::npos) << why;
}

TEST(GpuTiming, EachSubmissionTimedOnceWithinItsCall) {
  Backend backend(timestamps());
  if (!backend.gpu_timing_available()) GTEST_SKIP() << backend.adapter().name << " has no timestamp-query";
  Pipeline pipeline = backend.compile(busy(64));
  const std::vector<uint32_t> in = words(1 << 16);
  const std::vector<uint32_t> want = expected(in, 64);
  Inputs inputs;
  inputs.set<uint32_t>("in", in).size("out", in.size());
  // Available but not on: nothing timed.
  (void)pipeline.dispatch(inputs);
  EXPECT_EQ(backend.counters().timed_submits, 0u);

  backend.set_gpu_timing(true);
  for (int round = 0; round < 3; ++round) {
    // One dispatch, read back (its pass ends before the copies).
    const BackendCounters before = backend.counters();
    DispatchReport report;
    const auto start = Clock::now();
    EXPECT_EQ(pipeline.dispatch(inputs, std::nullopt, &report).get<uint32_t>("out"), want);
    const double wall = ms_since(start);
    const BackendCounters after = backend.counters();
    EXPECT_EQ(after.timed_submits - before.timed_submits, 1u);
    EXPECT_GT(report.gpu_ms, 0);
    EXPECT_LE(report.gpu_ms, wall);
    EXPECT_NEAR(static_cast<double>(after.gpu_ns - before.gpu_ns) / 1e6, report.gpu_ms, 1e-6);

    // A Batch: four chained dispatches kept on the GPU (one pass), then one
    // read into caller memory (a second pass after its copies): one submission.
    const BackendCounters batch_before = backend.counters();
    Batch batch(backend);
    Inputs first;
    first.set<uint32_t>("in", in).size("out", in.size());
    std::vector<DeviceOutputs> kept{batch.dispatch_resident(pipeline, first)};
    std::vector<Inputs> chained(3);
    for (int k = 0; k < 3; ++k) {
      chained[k].device("in", kept.back().get("out")).size("out", in.size());
      kept.push_back(batch.dispatch_resident(pipeline, chained[k]));
    }
    Inputs last;
    last.device("in", kept.back().get("out")).size("out", in.size());
    std::vector<uint32_t> got(in.size());
    OutputViews views;
    views.view<uint32_t>("out", got);
    batch.dispatch_into(pipeline, last, views);
    const auto batch_start = Clock::now();
    DispatchReport batch_report;
    batch.run(&batch_report);
    const double batch_wall = ms_since(batch_start);
    std::vector<uint32_t> chain = in;
    for (int k = 0; k < 5; ++k) chain = expected(chain, 64);
    EXPECT_EQ(got, chain);
    EXPECT_EQ(kept[1].get("out")->read_as<uint32_t>(), expected(expected(in, 64), 64));
    const BackendCounters batch_after = backend.counters();
    EXPECT_EQ(batch_after.timed_submits - batch_before.timed_submits, 1u);
    EXPECT_GT(batch_report.gpu_ms, 0);
    EXPECT_LE(batch_report.gpu_ms, batch_wall);
  }

  // Off again: nothing more counted, the same results.
  backend.set_gpu_timing(false);
  const BackendCounters before = backend.counters();
  DispatchReport report;
  EXPECT_EQ(pipeline.dispatch(inputs, std::nullopt, &report).get<uint32_t>("out"), want);
  EXPECT_EQ(report.gpu_ms, -1);
  EXPECT_EQ(backend.counters().timed_submits, before.timed_submits);
  EXPECT_EQ(backend.counters().gpu_ns, before.gpu_ns);
}

TEST(GpuTiming, LongerWorkTakesLongerOnTheGpu) {
  Backend backend(timestamps());
  if (!backend.gpu_timing_available()) GTEST_SKIP() << backend.adapter().name << " has no timestamp-query";
  backend.set_gpu_timing(true);
  const std::vector<uint32_t> in = words(1 << 16);
  Inputs inputs;
  inputs.set<uint32_t>("in", in).size("out", in.size());
  // The median of five of each: 64 times the loop's rounds take longer.
  auto median_gpu_ms = [&](uint32_t rounds) {
    Pipeline pipeline = backend.compile(busy(rounds));
    (void)pipeline.dispatch(inputs);
    std::vector<double> ms;
    for (int k = 0; k < 5; ++k) {
      DispatchReport report;
      EXPECT_EQ(pipeline.dispatch(inputs, std::nullopt, &report).get<uint32_t>("out"), expected(in, rounds));
      ms.push_back(report.gpu_ms);
    }
    std::sort(ms.begin(), ms.end());
    return ms[2];
  };
  const double short_ms = median_gpu_ms(16), long_ms = median_gpu_ms(1024);
  EXPECT_GT(long_ms, short_ms) << short_ms << " ms against " << long_ms << " ms";
}

}  // namespace
}  // namespace vyre::gpu
