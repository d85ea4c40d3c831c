// Pipeline-mode dispatch through the public API: outputs into caller memory,
// outputs kept on the GPU and chained, batches, warm dispatches that create
// nothing, the errors a user can act on, and recovery from a lost device.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gpu/backend_state.hpp"
#include "support/programs.hpp"
#include "support/test_support.hpp"
#include "support/gpu_test_support.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"
#include "vyre/reference.hpp"

namespace vyre::gpu {
namespace {

using namespace vyre::build;

using vyre::test::contains;
using vyre::test::error_of;
using vyre::test::no_disk_cache;

std::vector<uint32_t> words(uint32_t n, uint32_t seed) {
  std::vector<uint32_t> v(n);
  for (uint32_t i = 0; i < n; ++i) v[i] = i * 2654435761u + seed;
  return v;
}

std::vector<uint32_t> xor_of(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  std::vector<uint32_t> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = a[i] ^ b[i];
  return out;
}

// sum = a + b and diff = a - b: two outputs, so that reading one alone shows.
Program sum_and_difference() {
  return ProgramBuilder("sum_diff")
      .workgroup_size(64)
      .input("a", 0, ScalarType::U32)
      .input("b", 1, ScalarType::U32)
      .output("sum", 2, ScalarType::U32)
      .output("diff", 3, ScalarType::U32)
      .body({let("i", gid()), if_(lt(var("i"), len("sum")), {store("sum", var("i"), add(load("a", var("i")), load("b", var("i")))),
                                                              store("diff", var("i"), sub(load("a", var("i")), load("b", var("i"))))})})
      .build();
}

// y = alpha * x + y, in place.
Program saxpy() {
  return ProgramBuilder("saxpy")
      .workgroup_size(64)
      .uniform("alpha", 0, ScalarType::F32, 1)
      .input("x", 1, ScalarType::F32)
      .output("y", 2, ScalarType::F32)
      .body({let("i", gid()), if_(lt(var("i"), len("y")), {store("y", var("i"), add(mul(load("alpha", u32(0)), load("x", var("i"))),
                                                                                     load("y", var("i"))))})})
      .build();
}

// Writes 7 into the first ten elements only: whatever else `out` holds shows.
Program first_ten() {
  return ProgramBuilder("first_ten")
      .workgroup_size(64)
      .output("out", 0, ScalarType::U32)
      .body({let("i", gid()), if_(land(lt(var("i"), u32(10)), lt(var("i"), len("out"))), {store("out", var("i"), u32(7))})})
      .build();
}

// ---- outputs into caller memory ----------------------------------------------

TEST(GpuDispatchInto, ReadsOnlyTheNamedOutputsIntoCallerMemory) {
  Backend backend(no_disk_cache());
  Pipeline pipeline = backend.compile(sum_and_difference());
  const auto a = words(300, 5), b = words(300, 9);
  Inputs in;
  in.view<uint32_t>("a", a).view<uint32_t>("b", b).size("sum", 300).size("diff", 300);

  std::vector<uint32_t> sum(300, 0xdead), diff(300, 0xbeef);
  OutputViews only_sum;
  only_sum.view<uint32_t>("sum", sum);
  pipeline.dispatch_into(in, only_sum);
  for (size_t i = 0; i < 300; ++i) ASSERT_EQ(sum[i], a[i] + b[i]) << i;
  EXPECT_EQ(diff, std::vector<uint32_t>(300, 0xbeef));

  OutputViews by_binding;
  by_binding.view<uint32_t>(3u, diff);
  pipeline.dispatch_into(in, by_binding);
  for (size_t i = 0; i < 300; ++i) ASSERT_EQ(diff[i], a[i] - b[i]) << i;
}

TEST(GpuDispatchInto, ViewsThatDoNotFitAreInvalidInputAndThePipelineStaysUsable) {
  Backend backend(no_disk_cache());
  Pipeline pipeline = backend.compile(test::xor_program());
  const auto a = words(64, 1), b = words(64, 2);
  Inputs in;
  in.view<uint32_t>("a", a).view<uint32_t>("b", b).size("out", 64);
  std::vector<uint32_t> short_out(63), long_out(65), out(64);
  std::vector<float> floats(64);

  auto refuse = [&](OutputViews views, const std::string& part) {
    const std::string msg = error_of(ErrorKind::invalid_input, [&] { pipeline.dispatch_into(in, views); });
    EXPECT_TRUE(contains(msg, part)) << msg;
  };
  refuse(OutputViews().view<uint32_t>("out", short_out), "has 252 bytes; this dispatch's output has 64 elements");
  refuse(OutputViews().view<uint32_t>("out", long_out), "give a view of exactly that size");
  refuse(OutputViews().view<float>("out", floats), "holds f32 elements; the buffer holds u32");
  refuse(OutputViews().view<uint32_t>("a", out), "which is not an output");
  refuse(OutputViews().view<uint32_t>("nope", out), "no buffer named 'nope'");
  refuse(OutputViews().view<uint32_t>("out", out).view<uint32_t>(2u, out), "given twice");

  pipeline.dispatch_into(in, OutputViews().view<uint32_t>("out", out));
  EXPECT_EQ(out, xor_of(a, b));
}

TEST(GpuDispatchInto, InputsOfTheWrongTypeSizeOrNameAreInvalidInput) {
  Backend backend(no_disk_cache());
  Pipeline pipeline = backend.compile(test::xor_program());
  const auto a = words(10, 1), b = words(10, 2);
  std::vector<uint32_t> out(10);
  const OutputViews views = OutputViews().view<uint32_t>("out", out);

  auto refuse = [&](const Inputs& in, const std::string& part) {
    const std::string msg = error_of(ErrorKind::invalid_input, [&] { pipeline.dispatch_into(in, views); });
    EXPECT_TRUE(contains(msg, part)) << msg;
  };
  refuse(Inputs().set<float>("a", {1.0f, 2.0f}).set<uint32_t>("b", b).size("out", 10),
         "is given as f32 elements; the buffer holds u32");
  refuse(Inputs().set<uint32_t>("a", a).size("out", 10), "missing input for 'b'");
  refuse(Inputs().set<uint32_t>("a", a).set<uint32_t>("b", b).set<uint32_t>("c", b).size("out", 10),
         "no buffer named 'c'");
  refuse(Inputs().bytes("a", {1, 2, 3}).set<uint32_t>("b", b).size("out", 10), "not a whole number of 4-byte");
  refuse(Inputs().set<uint32_t>("a", a).set<uint32_t>("b", b), "needs a length");
  refuse(Inputs().set<uint32_t>("a", a).set<uint32_t>(1u, b).set<uint32_t>("b", b).size("out", 10), "given twice");

  pipeline.dispatch_into(Inputs().view<uint32_t>("a", a).view<uint32_t>("b", b).size("out", 10), views);
  EXPECT_EQ(out, xor_of(a, b));
}

TEST(GpuDispatchInto, U32ValuesAreTheRawWordsOfAnyBuffer) {
  Backend backend(no_disk_cache());
  Pipeline pipeline = backend.compile(saxpy());
  const std::vector<float> x{1.5f, -2.0f, 0.25f};
  std::vector<uint32_t> x_bits(3), y_bits(3);
  std::memcpy(x_bits.data(), x.data(), 12);
  pipeline.dispatch_into(Inputs().set<float>("alpha", {2.0f}).set<uint32_t>("x", x_bits).set<float>("y", {1, 1, 1}),
                         OutputViews().view<uint32_t>("y", y_bits));
  std::vector<float> y(3);
  std::memcpy(y.data(), y_bits.data(), 12);
  EXPECT_EQ(y, (std::vector<float>{4.0f, -3.0f, 1.5f}));
}

// ---- outputs kept on the GPU -------------------------------------------------

TEST(GpuResident, OutputsChainIntoTheNextDispatchWithoutAReadback) {
  Backend backend(no_disk_cache());
  Pipeline pipeline = backend.compile(test::xor_program());
  const auto a = words(500, 3), b = words(500, 11);
  auto value = backend.upload(a);
  const auto key = backend.upload(b);
  EXPECT_EQ(value->elements(), 500u);
  EXPECT_EQ(value->type(), ScalarType::U32);

  const uint64_t submits = backend.counters().submits;
  std::vector<uint32_t> expected = a;
  for (int step = 0; step < 5; ++step) {
    Inputs in;
    in.device("a", value).device("b", key).size("out", 500);
    value = pipeline.dispatch_resident(in).get("out");
    expected = xor_of(expected, b);
  }
  EXPECT_EQ(backend.counters().submits - submits, 5u);  // one each, no readback
  EXPECT_EQ(value->read_as<uint32_t>(), expected);
  EXPECT_EQ(backend.counters().submits - submits, 6u);  // the read

  // A resident output read by a host dispatch of another pipeline, and by the reference interpreter.
  Pipeline sums = backend.compile(sum_and_difference());
  Inputs mixed;
  mixed.device("a", value).view<uint32_t>("b", b).size("sum", 500).size("diff", 500);
  const Outputs out = sums.dispatch(mixed);
  for (size_t i = 0; i < 500; ++i) ASSERT_EQ(out.get<uint32_t>("sum")[i], expected[i] + b[i]) << i;
  EXPECT_EQ(reference::run(sum_and_difference(), mixed), out);
}

TEST(GpuResident, ABufferTheProgramWritesIsUpdatedInPlace) {
  Backend backend(no_disk_cache());
  Pipeline pipeline = backend.compile(saxpy());
  std::vector<float> x(200), y(200);
  for (size_t i = 0; i < 200; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = 1.0f;
  }
  const auto gx = backend.upload(x);
  const auto gy = backend.upload(y);
  Inputs in;
  in.set<float>("alpha", {0.5f}).device("x", gx).device("y", gy);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(pipeline.dispatch_resident(in).get("y"), gy);  // the same buffer
  const auto result = gy->read_as<float>();
  for (size_t i = 0; i < 200; ++i) ASSERT_EQ(result[i], 1.0f + 1.5f * static_cast<float>(i)) << i;
}

TEST(GpuDispatchInto, UniformParametersAndLengthsThatChangeTakeEffect) {
  Backend backend(no_disk_cache());
  Pipeline pipeline = backend.compile(saxpy());
  for (uint32_t n : {300u, 300u, 20u, 300u}) {
    for (float alpha : {0.5f, 0.5f, 2.0f, 0.5f, -1.0f}) {
      std::vector<float> x(n), y(n, 3.0f), out(n);
      for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
      pipeline.dispatch_into(Inputs().set<float>("alpha", {alpha}).view<float>("x", x).view<float>("y", y),
                             OutputViews().view<float>("y", out));
      for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], alpha * static_cast<float>(i) + 3.0f) << n << " " << alpha;
    }
  }
}

TEST(GpuResident, DeviceBuffersThatCannotBeBoundAreRefusedClearly) {
  Backend backend(no_disk_cache());
  Pipeline pipeline = backend.compile(test::xor_program());
  const auto a = words(8, 1);
  const auto ga = backend.upload(a);

  // Read twice is fine; written while also read is a race the GPU API refuses.
  Inputs both_read;
  both_read.device("a", ga).device("b", ga).size("out", 8);
  EXPECT_EQ(pipeline.dispatch(both_read).get<uint32_t>("out"), std::vector<uint32_t>(8, 0));
  Inputs aliased;
  aliased.device("a", ga).set<uint32_t>("b", a).device("out", ga);
  EXPECT_TRUE(contains(error_of(ErrorKind::invalid_input, [&] { pipeline.dispatch(aliased); }),
                       "bound to both 'a' and 'out'"));

  std::vector<float> floats(8, 1.0f);
  Inputs wrong_type;
  wrong_type.device("a", backend.upload(floats)).set<uint32_t>("b", a).size("out", 8);
  EXPECT_TRUE(contains(error_of(ErrorKind::invalid_input, [&] { pipeline.dispatch(wrong_type); }),
                       "is a DeviceBuffer of f32 elements; the buffer holds u32"));

  Backend other(no_disk_cache());
  Inputs foreign;
  foreign.device("a", other.upload(a)).set<uint32_t>("b", a).size("out", 8);
  EXPECT_TRUE(contains(error_of(ErrorKind::invalid_input, [&] { pipeline.dispatch(foreign); }),
                       "belongs to another Backend's device"));

  Pipeline uniform = backend.compile(saxpy());
  Inputs uniform_on_gpu;
  uniform_on_gpu.device("alpha", backend.upload(floats)).set<float>("x", floats).set<float>("y", floats);
  EXPECT_TRUE(contains(error_of(ErrorKind::invalid_input, [&] { uniform.dispatch(uniform_on_gpu); }),
                       "a uniform takes host values"));

  std::vector<uint32_t> out(8);
  pipeline.dispatch_into(Inputs().device("a", ga).set<uint32_t>("b", a).size("out", 8),
                         OutputViews().view<uint32_t>("out", out));
  EXPECT_EQ(out, std::vector<uint32_t>(8, 0));
}

TEST(GpuResident, AnOutputBeyondTheDeviceLimitIsLimitExceeded) {
  Backend backend(no_disk_cache());
  const auto& limits = state_of(backend)->live().device->limits();
  Pipeline pipeline = backend.compile(first_ten());
  Inputs huge;
  huge.size("out", static_cast<uint32_t>(limits.maxStorageBufferBindingSize / 4 + 1));
  const std::string msg = error_of(ErrorKind::limit_exceeded, [&] { pipeline.dispatch_resident(huge, Dim3{1, 1, 1}); });
  EXPECT_TRUE(contains(msg, "buffer 'out'")) << msg;
  EXPECT_TRUE(contains(msg, "maxStorageBufferBindingSize")) << msg;
  const auto out = pipeline.dispatch_resident(Inputs().size("out", 12)).get("out")->read_as<uint32_t>();
  EXPECT_EQ(out, (std::vector<uint32_t>{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 0, 0}));
}

// ---- zero-filled outputs on reused buffers ---------------------------------------

TEST(GpuDispatchInto, ReusedOutputsStartFromZeroLargeAndSmall) {
  Backend backend(no_disk_cache());
  Pipeline pipeline = backend.compile(first_ten());
  for (uint32_t n : {100'000u, 1000u}) {  // cleared on the GPU, and zeroed by a write
    SCOPED_TRACE(n);
    std::vector<uint32_t> out(n);
    const OutputViews views = OutputViews().view<uint32_t>("out", out);
    pipeline.dispatch_into(Inputs().set<uint32_t>("out", std::vector<uint32_t>(n, 5)), views);
    EXPECT_EQ(out[9], 7u);
    EXPECT_EQ(out[n - 1], 5u);
    pipeline.dispatch_into(Inputs().size("out", n), views);
    EXPECT_EQ(out[9], 7u);
    EXPECT_EQ(std::count(out.begin() + 10, out.end(), 0u), static_cast<long>(n - 10));
  }
}

// ---- batches ------------------------------------------------------------------

TEST(GpuBatch, ManyDispatchesOfSeveralPipelinesRunInOneSubmission) {
  Backend backend(no_disk_cache());
  Pipeline xors = backend.compile(test::xor_program());
  Pipeline sums = backend.compile(sum_and_difference());
  constexpr int kDispatches = 10;
  std::vector<std::vector<uint32_t>> a, b, out(kDispatches), sum(kDispatches);
  std::vector<Inputs> xin(kDispatches), sin(kDispatches);
  Batch batch(backend);
  for (int k = 0; k < kDispatches; ++k) {
    const uint32_t n = 50 + 17 * k;
    a.push_back(words(n, k));
    b.push_back(words(n, 100 + k));
    out[k].resize(n);
    sum[k].resize(n);
    xin[k].view<uint32_t>("a", a[k]).view<uint32_t>("b", b[k]).size("out", n);
    sin[k].view<uint32_t>("a", a[k]).view<uint32_t>("b", b[k]).size("sum", n).size("diff", n);
    batch.dispatch_into(xors, xin[k], OutputViews().view<uint32_t>("out", out[k]));
    batch.dispatch_into(sums, sin[k], OutputViews().view<uint32_t>("sum", sum[k]));
  }
  EXPECT_EQ(batch.size(), 2u * kDispatches);
  const uint64_t submits = backend.counters().submits;
  batch.run();
  EXPECT_EQ(backend.counters().submits - submits, 1u);
  EXPECT_EQ(batch.size(), 0u);
  for (int k = 0; k < kDispatches; ++k) {
    EXPECT_EQ(out[k], xor_of(a[k], b[k])) << k;
    for (size_t i = 0; i < sum[k].size(); ++i) ASSERT_EQ(sum[k][i], a[k][i] + b[k][i]) << k << " " << i;
  }
}

TEST(GpuBatch, ADispatchBindsTheResidentOutputOfAnEarlierOneInTheSameBatch) {
  Backend backend(no_disk_cache());
  Pipeline pipeline = backend.compile(test::xor_program());
  const auto a = words(256, 1), b = words(256, 2), c = words(256, 3);
  Batch batch(backend);
  Inputs first;
  first.view<uint32_t>("a", a).view<uint32_t>("b", b).size("out", 256);
  const auto middle = batch.dispatch_resident(pipeline, first).get("out");

  // Not before the batch has run.
  EXPECT_TRUE(contains(error_of(ErrorKind::invalid_input, [&] { middle->read(); }), "run() it first"));
  Inputs outside;
  outside.device("a", middle).view<uint32_t>("b", c).size("out", 256);
  EXPECT_TRUE(contains(error_of(ErrorKind::invalid_input, [&] { pipeline.dispatch(outside); }),
                       "written by a Batch that has not run"));

  std::vector<uint32_t> out(256);
  batch.dispatch_into(pipeline, outside, OutputViews().view<uint32_t>("out", out));
  batch.run();
  EXPECT_EQ(out, xor_of(xor_of(a, b), c));
  EXPECT_EQ(middle->read_as<uint32_t>(), xor_of(a, b));
}

TEST(GpuBatch, EachDispatchReadsBackWhatItLeftNotWhatALaterOneWrote) {
  Backend backend(no_disk_cache());
  Pipeline pipeline = backend.compile(saxpy());
  std::vector<float> x(5000, 1.0f), y(5000, 10.0f);
  const auto gy = backend.upload(y);
  Inputs in;
  in.set<float>("alpha", {1.0f}).view<float>("x", x).device("y", gy);
  std::vector<std::vector<float>> seen(3, std::vector<float>(5000));
  Batch batch(backend);
  for (auto& s : seen) batch.dispatch_into(pipeline, in, OutputViews().view<float>("y", s));
  // Large outputs cleared on the GPU, in the same batch.
  Pipeline tens = backend.compile(first_ten());
  std::vector<uint32_t> big1(100'000, 1), big2(100'000, 2);
  batch.dispatch_into(tens, Inputs().size("out", 100'000), OutputViews().view<uint32_t>("out", big1));
  batch.dispatch_into(tens, Inputs().size("out", 100'000), OutputViews().view<uint32_t>("out", big2));
  batch.run();
  EXPECT_EQ(seen[0], std::vector<float>(5000, 11.0f));
  EXPECT_EQ(seen[1], std::vector<float>(5000, 12.0f));
  EXPECT_EQ(seen[2], std::vector<float>(5000, 13.0f));
  for (const auto* big : {&big1, &big2}) {
    EXPECT_EQ(std::count(big->begin(), big->begin() + 10, 7u), 10);
    EXPECT_EQ(std::count(big->begin() + 10, big->end(), 0u), 100'000 - 10);
  }
}

TEST(GpuBatch, APipelineOfAnotherBackendIsRefused) {
  Backend backend(no_disk_cache()), other(no_disk_cache());
  Pipeline foreign = other.compile(test::xor_program());
  Batch batch(backend);
  const auto a = words(4, 1);
  Inputs in;
  in.view<uint32_t>("a", a).view<uint32_t>("b", a).size("out", 4);
  std::vector<uint32_t> out(4);
  EXPECT_TRUE(contains(error_of(ErrorKind::invalid_input,
                                [&] { batch.dispatch_into(foreign, in, OutputViews().view<uint32_t>("out", out)); }),
                       "another Backend"));
  EXPECT_EQ(batch.size(), 0u);
}

// ---- nothing created once warm ------------------------------------------------------

TEST(GpuWarm, WarmDispatchesCreateNoBuffersAndNoBindGroups) {
  Backend backend(no_disk_cache());
  Pipeline pipeline = backend.compile(test::xor_program());
  const auto a = words(1000, 1), b = words(1000, 2);
  std::vector<uint32_t> out(1000);
  Inputs in;
  in.view<uint32_t>("a", a).view<uint32_t>("b", b).size("out", 1000);
  const OutputViews views = OutputViews().view<uint32_t>("out", out);
  pipeline.dispatch_into(in, views);
  pipeline.dispatch(in);
  const BackendCounters warm = backend.counters();
  for (int k = 0; k < 50; ++k) {
    pipeline.dispatch_into(in, views);
    ASSERT_EQ(pipeline.dispatch(in).get<uint32_t>("out"), xor_of(a, b));
  }
  EXPECT_EQ(backend.counters().buffers_created, warm.buffers_created);
  EXPECT_EQ(backend.counters().bind_groups_created, warm.bind_groups_created);
  EXPECT_EQ(backend.counters().submits - warm.submits, 100u);

  // Chained on the GPU, ping-pong: the pool and the bind-group cache serve every step.
  auto value = backend.upload(a);
  const auto key = backend.upload(b);
  auto step = [&] {
    Inputs chained;
    chained.device("a", value).device("b", key).size("out", 1000);
    value = pipeline.dispatch_resident(chained).get("out");
  };
  for (int k = 0; k < 4; ++k) step();
  const BackendCounters chained_warm = backend.counters();
  for (int k = 0; k < 50; ++k) step();
  EXPECT_EQ(backend.counters().buffers_created, chained_warm.buffers_created);
  EXPECT_EQ(backend.counters().bind_groups_created, chained_warm.bind_groups_created);
  EXPECT_EQ(value->read_as<uint32_t>(), a);  // an even number of xors with b

  // A batch refilled and run again.
  Batch batch(backend);
  auto fill_and_run = [&] {
    for (int k = 0; k < 4; ++k) batch.dispatch_into(pipeline, in, views);
    batch.run();
  };
  fill_and_run();
  const BackendCounters batch_warm = backend.counters();
  for (int k = 0; k < 10; ++k) fill_and_run();
  EXPECT_EQ(backend.counters().buffers_created, batch_warm.buffers_created);
  EXPECT_EQ(backend.counters().bind_groups_created, batch_warm.bind_groups_created);
  EXPECT_EQ(out, xor_of(a, b));
}

TEST(GpuWarm, ThreadsDispatchingOnePipelineEachGetTheirOwnResults) {
  Backend backend(no_disk_cache());
  Pipeline pipeline = backend.compile(test::xor_program());
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (uint32_t round = 0; round < 20; ++round) {
        const auto a = words(100 + t * 31 + round, t), b = words(100 + t * 31 + round, round);
        std::vector<uint32_t> out(a.size());
        pipeline.dispatch_into(Inputs().view<uint32_t>("a", a).view<uint32_t>("b", b).size("out", a.size()),
                               OutputViews().view<uint32_t>("out", out));
        if (out != xor_of(a, b)) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

// ---- a lost device ----------------------------------------------------------------

TEST(GpuDeviceLoss, IsReportedOnceThenTheBackendOpensANewDevice) {
  Backend backend(no_disk_cache());
  Pipeline pipeline = backend.compile(test::xor_program());
  const auto a = words(100, 1), b = words(100, 2);
  Inputs in;
  in.view<uint32_t>("a", a).view<uint32_t>("b", b).size("out", 100);
  ASSERT_EQ(pipeline.dispatch(in).get<uint32_t>("out"), xor_of(a, b));
  const auto before = backend.upload(a);

  wgpuDeviceDestroy(state_of(backend)->live().device->device());
  const std::string msg = error_of(ErrorKind::device_lost, [&] { pipeline.dispatch(in); });
  EXPECT_TRUE(contains(msg, "was lost")) << msg;
  EXPECT_TRUE(contains(msg, "opens a new device on its next compile or dispatch")) << msg;

  // The next call runs on a new device.
  EXPECT_EQ(pipeline.dispatch(in).get<uint32_t>("out"), xor_of(a, b));
  EXPECT_EQ(backend.counters().devices_opened, 2u);
  std::vector<uint32_t> out(100);
  pipeline.dispatch_into(in, OutputViews().view<uint32_t>("out", out));
  EXPECT_EQ(out, xor_of(a, b));
  Inputs sum_inputs;
  sum_inputs.view<uint32_t>("a", a).view<uint32_t>("b", b).size("sum", 100).size("diff", 100);
  EXPECT_EQ(backend.compile(sum_and_difference()).dispatch(sum_inputs).bytes("sum").size(), 400u);

  // What lived on the lost device is gone, and says so.
  EXPECT_TRUE(contains(error_of(ErrorKind::device_lost, [&] { before->read(); }), "was lost"));
  Inputs stale;
  stale.device("a", before).view<uint32_t>("b", b).size("out", 100);
  EXPECT_TRUE(contains(error_of(ErrorKind::device_lost, [&] { pipeline.dispatch(stale); }), "its contents are gone"));
  EXPECT_EQ(pipeline.dispatch_resident(Inputs().device("a", backend.upload(a)).view<uint32_t>("b", b).size("out", 100))
                .get("out")
                ->read_as<uint32_t>(),
            xor_of(a, b));
}

}  // namespace
}  // namespace vyre::gpu
