// Backend::tune on a real device: the tuned configuration gives the same
// results as the program's own (element-wise, two-dimensional and
// workgroup-bound programs), the record is reused by a later Backend without
// timing anything, a hostile or stale record is replaced, and a choice that
// does not fit a dispatch is not applied.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "dispatch/plan.hpp"
#include "dispatch/retile.hpp"
#include "lower/widening.hpp"
#include "support/element_wise_programs.hpp"
#include "support/gpu_test_support.hpp"
#include "support/programs.hpp"
#include "support/test_support.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"
#include "vyre/json.hpp"
#include "vyre/reference.hpp"

namespace vyre {
namespace {

using namespace vyre::build;
using vyre::test::example;
using vyre::test::grid_2d_program;
using vyre::test::TempDir;

gpu::BackendOptions on_cache(const std::filesystem::path& dir) {
  aot::CacheOptions c;
  c.directory = dir;
  gpu::BackendOptions o;
  o.cache = std::make_shared<aot::Cache>(c);
  o.widen = false;
  return o;
}

gpu::BackendOptions on_cache(const std::shared_ptr<aot::Cache>& cache) {
  gpu::BackendOptions o;
  o.cache = cache;
  o.widen = false;
  return o;
}

std::shared_ptr<aot::Cache> cache_in(const std::filesystem::path& dir) {
  aot::CacheOptions c;
  c.directory = dir;
  return std::make_shared<aot::Cache>(c);
}

gpu::TuneOptions quick() {
  gpu::TuneOptions t;
  t.warmup = 1;
  t.repetitions = 3;
  return t;
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (float& f : v) f = d(rng);
  return v;
}

Inputs saxpy_inputs(uint32_t n) {
  Inputs in;
  in.set<float>("alpha", {1.5f}).set("x", random_floats(n, 1)).set("y", random_floats(n, 2)).size("out", n);
  return in;
}

// Each invocation adds its own index into a read_write buffer it also
// reads: a tuner that let timed dispatches pile up, or wrote the caller's
// data, would show here.
CheckedProgram accumulate_program() {
  return ProgramBuilder("accumulate")
      .workgroup_size(64)
      .output("acc", 0, ScalarType::U32)
      .body({let("i", gid()), if_(lt(var("i"), len("acc")), {store("acc", var("i"), add(load("acc", var("i")), var("i")))})})
      .build();
}

// One invocation per element of n: the grid the programs here without a
// bounds check are dispatched with (nothing proves them element-wise, so
// no default grid is taken for them).
Dim3 one_per_element(const CheckedProgram& p, uint32_t n) {
  const uint32_t w = p.program().workgroup_size[0];
  return {(n + w - 1) / w, 1, 1};
}

// The same without the bounds check: not element-wise, so a shape must
// divide the invocation count to run the same invocations.
CheckedProgram unguarded_program() {
  return ProgramBuilder("unguarded")
      .workgroup_size(64)
      .output("acc", 0, ScalarType::U32)
      .body({let("i", gid()), store("acc", var("i"), add(load("acc", var("i")), var("i")))})
      .build();
}

// A read_write buffer of bytes whose length is no multiple of 4: the tuner
// restores it before each timed dispatch by a GPU copy, which WebGPU takes
// in whole words only (the buffer's last word is partly padding).
TEST(GpuTuning, AWrittenByteBufferOfAnOddLengthIsRestoredForEachCandidate) {
  TempDir dir;
  gpu::Backend backend(on_cache(dir.path()));
  const CheckedProgram p = ProgramBuilder("bytes_in_place")
                               .workgroup_size(64)
                               .buffer(Buffer{"b", 0, Access::ReadWrite, ScalarType::U8, 0, true})
                               .body({let("i", gid()), if_(lt(var("i"), len("b")), {store("b", var("i"), add(load("b", var("i")), u32(1)))})})
                               .build();
  std::vector<uint8_t> bytes(1001);
  for (size_t k = 0; k < bytes.size(); ++k) bytes[k] = static_cast<uint8_t>(k);
  Inputs in;
  in.set<uint8_t>("b", bytes);
  gpu::Tuned tuned = backend.tune(p, in, std::nullopt, {}, quick());
  const auto got = tuned.pipeline.dispatch(in, tuned.grid).get<uint8_t>("b");
  ASSERT_EQ(got.size(), bytes.size());
  for (size_t k = 0; k < bytes.size(); ++k) EXPECT_EQ(got[k], static_cast<uint8_t>(k + 1)) << k;
}

TEST(GpuTuning, TunedSaxpyMatchesTheOwnConfigurationAndTheReference) {
  TempDir dir;
  gpu::Backend backend(on_cache(dir.path()));
  const CheckedProgram p = example("saxpy");
  const Inputs in = saxpy_inputs(1 << 16);
  gpu::Tuned tuned = backend.tune(p, in, std::nullopt, {}, quick());
  EXPECT_FALSE(tuned.reused);
  EXPECT_TRUE(tuned.applied);
  const aot::TuningRecord& r = tuned.record;
  EXPECT_EQ(r.own_workgroup, (Dim3{64, 1, 1}));
  // The own configuration, widening, and six shapes each with and without it.
  ASSERT_GE(r.candidates.size(), 10u);
  EXPECT_EQ(r.candidates[0].workgroup, (Dim3{64, 1, 1}));
  EXPECT_EQ(r.candidates[0].vector_width, 1);
  size_t ran = 0;
  for (const auto& c : r.candidates) ran += c.ran ? 1 : 0;
  EXPECT_GE(ran, 10u);
  EXPECT_EQ(tuned.pipeline.interface().workgroup_size, r.workgroup);
  EXPECT_EQ(tuned.pipeline.interface().vector_width, r.vector_width);

  gpu::DispatchReport report;
  const std::vector<float> got = tuned.pipeline.dispatch(in, tuned.grid, &report).get<float>("out");
  EXPECT_EQ(report.vector_width, r.vector_width);
  // alpha * x + y: WGSL lets a compiler fuse it into one rounding or not, and
  // a driver may decide differently for two shaders of the same program (the
  // H200 does), so configurations agree within two roundings of the terms,
  // not to the bit (docs/tuning.md; the u32 programs below are bit-exact).
  const std::vector<float> own = backend.compile(p).dispatch(in).get<float>("out");
  const std::vector<float> want = reference::run(p, in).get<float>("out");
  const std::vector<float> x = random_floats(1 << 16, 1), y = random_floats(1 << 16, 2);
  ASSERT_EQ(got.size(), x.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const float bound = std::ldexp(std::abs(1.5f * x[i]) + std::abs(y[i]), -22);
    ASSERT_LE(std::abs(got[i] - own[i]), bound) << i;
    ASSERT_LE(std::abs(got[i] - want[i]), bound) << i;
  }
}

TEST(GpuTuning, ALaterBackendReusesTheRecordWithoutTiming) {
  TempDir dir;
  const CheckedProgram p = example("saxpy");
  const Inputs in = saxpy_inputs(4096);
  aot::TuningRecord first;
  std::string key;
  {
    gpu::Backend backend(on_cache(dir.path()));
    gpu::Tuned tuned = backend.tune(p, in, std::nullopt, {}, quick());
    first = tuned.record;
    key = tuned.record_key;
    EXPECT_GT(backend.counters().submits, 10u);  // the candidates were dispatched
  }
  const auto cache = cache_in(dir.path());
  gpu::Backend later(on_cache(cache));
  const uint64_t submits_before = later.counters().submits;
  const gpu::Tuned again = later.tune(p, in, std::nullopt, {}, quick());
  EXPECT_TRUE(again.reused);
  EXPECT_EQ(again.record_key, key);
  EXPECT_EQ(later.counters().submits, submits_before);  // nothing was dispatched to tune
  EXPECT_EQ(again.record.workgroup, first.workgroup);
  EXPECT_EQ(again.record.vector_width, first.vector_width);
  EXPECT_EQ(again.record.candidates.size(), first.candidates.size());
  // The record is an entry of the cache, shown as one.
  std::string text;
  const std::optional<aot::EntryInfo> entry = cache->show(key, &text);
  ASSERT_TRUE(entry);
  EXPECT_TRUE(aot::is_tuning_record(entry->parts));
  EXPECT_EQ(entry->parts.fingerprint, later.fingerprint());
  EXPECT_TRUE(aot::decode_tuning_record(text));

  // Another size class is tuned afresh; --retune times again.
  EXPECT_FALSE(later.tune(p, saxpy_inputs(1 << 15), std::nullopt, {}, quick()).reused);
  gpu::TuneOptions retune = quick();
  retune.retune = true;
  EXPECT_FALSE(later.tune(p, in, std::nullopt, {}, retune).reused);
}

TEST(GpuTuning, TwoDimensionalProgramKeepsItsResultsOnEveryShape) {
  TempDir dir;
  gpu::Backend backend(on_cache(dir.path()));
  const CheckedProgram p = grid_2d_program();
  const uint32_t width = 128, height = 64;
  std::vector<uint32_t> a(width * height);
  std::mt19937 rng(7);
  for (uint32_t& v : a) v = rng();
  Inputs in;
  in.set<uint32_t>("width", {width}).set("a", a).size("out", width * height);
  const Dim3 grid{width / 8, height / 8, 1};
  gpu::Tuned tuned = backend.tune(p, in, grid, {}, quick());
  // Shapes of 64 and 256 invocations that divide 128 x 64, besides 8x8.
  size_t ran = 0;
  for (const auto& c : tuned.record.candidates) {
    ran += c.ran ? 1 : 0;
    EXPECT_EQ(width % c.workgroup[0], 0u);
    EXPECT_EQ(height % c.workgroup[1], 0u);
  }
  EXPECT_GE(ran, 8u);
  const Outputs expected = reference::run(p, in, {}, grid);
  EXPECT_EQ(tuned.pipeline.dispatch(in, tuned.grid).bytes("out"), expected.bytes("out"));
  // Every candidate's configuration gives the same bytes.
  for (const auto& c : tuned.record.candidates) {
    ShaderOptions o;
    o.workgroup_override = c.workgroup;
    const Dim3 g{width / c.workgroup[0], height / c.workgroup[1], 1};
    EXPECT_EQ(backend.compile(p, o).dispatch(in, g).bytes("out"), expected.bytes("out"))
        << c.workgroup[0] << "x" << c.workgroup[1];
  }
}

TEST(GpuTuning, WorkgroupBoundProgramKeepsItsShapeAndSaysWhy) {
  TempDir dir;
  gpu::Backend backend(on_cache(dir.path()));
  const CheckedProgram p = example("reduction");
  std::vector<uint32_t> values(64 * 32);
  std::mt19937 rng(3);
  for (uint32_t& v : values) v = rng() % 1000;
  Inputs in;
  in.set("values", values).size("sums", 32);
  gpu::Tuned tuned = backend.tune(p, in, Dim3{32, 1, 1}, {}, quick());
  EXPECT_TRUE(tuned.record.chose_own());
  EXPECT_EQ(tuned.record.candidates.size(), 1u);
  EXPECT_NE(tuned.record.reason.find("workgroup buffer 'scratch'"), std::string::npos) << tuned.record.reason;
  EXPECT_EQ(tuned.grid, (std::optional<Dim3>{Dim3{32, 1, 1}}));
  EXPECT_EQ(tuned.pipeline.dispatch(in, tuned.grid).bytes("sums"), backend.compile(p).dispatch(in, Dim3{32, 1, 1}).bytes("sums"));
}

TEST(GpuTuning, TimedDispatchesNeverTouchTheCallersData) {
  TempDir dir;
  gpu::Backend backend(on_cache(dir.path()));
  const CheckedProgram p = accumulate_program();
  const uint32_t n = 8192;
  std::vector<uint32_t> start(n);
  for (uint32_t i = 0; i < n; ++i) start[i] = 1000 + i;
  // Given as a device buffer: written in place by a dispatch, so the tuner
  // must work on a copy.
  const std::shared_ptr<gpu::DeviceBuffer> acc = backend.upload(start);
  Inputs in;
  in.device("acc", acc);
  gpu::Tuned tuned = backend.tune(p, in, std::nullopt, {}, quick());
  EXPECT_GE(tuned.record.candidates.size(), 4u);
  EXPECT_EQ(acc->read_as<uint32_t>(), start);  // untouched by the timed dispatches
  tuned.pipeline.dispatch_resident(in, tuned.grid);
  const std::vector<uint32_t> after = acc->read_as<uint32_t>();
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(after[i], 1000 + 2 * i) << i;  // exactly one dispatch's worth
}

TEST(GpuTuning, HostileRecordIsReplacedAndAStaleChoiceIsNotApplied) {
  TempDir dir;
  const auto shared = cache_in(dir.path());
  gpu::Backend backend(on_cache(shared));
  aot::Cache& cache = *shared;
  const CheckedProgram p = unguarded_program();
  const uint32_t n = 64 * 66;  // divides by 64, not by 128 or 256
  Inputs in;
  in.set("acc", std::vector<uint32_t>(n, 5));
  const std::string size_class = "invocations 2^13 x 2^0 x 2^0";
  const aot::KeyParts parts = aot::tuning_key_parts(p, backend.fingerprint(), size_class);

  // Garbage under the record's key (it verifies: the cache stored it as given).
  cache.replace(parts, [] { return std::string("this is not a record"); }, "unguarded");
  const gpu::Tuned retuned = backend.tune(p, in, one_per_element(p, n), {}, quick());
  EXPECT_FALSE(retuned.reused);
  EXPECT_EQ(retuned.record_key, parts.key());
  std::string text;
  ASSERT_TRUE(cache.show(parts.key(), &text));
  EXPECT_TRUE(aot::decode_tuning_record(text)) << text;

  // A record (from another dispatch of this size class) choosing 256: this
  // dispatch's 4224 invocations do not re-tile onto it, so the own shape runs.
  aot::TuningRecord planted = retuned.record;
  planted.workgroup = {256, 1, 1};
  planted.vector_width = 1;
  cache.replace(parts, [&] { return aot::encode_tuning_record(planted); }, "unguarded");
  gpu::Tuned stale = backend.tune(p, in, one_per_element(p, n), {}, quick());
  EXPECT_TRUE(stale.reused);
  EXPECT_FALSE(stale.applied);
  EXPECT_NE(stale.not_applied.find("256x1x1"), std::string::npos) << stale.not_applied;
  EXPECT_EQ(stale.pipeline.interface().workgroup_size, (Dim3{64, 1, 1}));
  const std::vector<uint32_t> out = stale.pipeline.dispatch(in, stale.grid).get<uint32_t>("acc");
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 5 + i);
}

// Every configuration tuning times must compute what the program's own does:
// random element-wise programs (any shape covering the length) and the same
// bodies without their bounds check (shapes that divide the invocations).
TEST(GpuTuning, RandomWorkgroupFreeProgramsGiveTheReferenceResultsInEveryCandidate) {
  TempDir dir;
  gpu::Backend backend(on_cache(dir.path()));
  gpu::TuneOptions once;
  once.warmup = 0;
  once.repetitions = 1;
  size_t configurations = 0, widened = 0;
  for (uint32_t seed = 0; seed < 16; ++seed) {
    for (const bool guarded : {true, false}) {
      const CheckedProgram p = test::ElementWise(seed).program(guarded);
      for (const uint32_t n : guarded ? std::vector<uint32_t>{1000, 4096} : std::vector<uint32_t>{4096}) {
        Inputs in;
        in.set<uint32_t>("a", test::words(n, seed)).set<uint32_t>("b", test::words(n, seed + 1000));
        in.set<uint32_t>("g", test::words(37, seed + 7));
        in.set<uint32_t>("out", test::words(n, seed + 3)).set<uint32_t>("c", test::words(n, seed + 5));
        const std::optional<Dim3> grid = guarded ? std::nullopt : std::optional<Dim3>(one_per_element(p, n));
        const Outputs want = reference::run(p, in, {}, grid);
        gpu::Tuned tuned = backend.tune(p, in, grid, {}, once);
        const Outputs got = tuned.pipeline.dispatch(in, tuned.grid);
        ASSERT_EQ(got.get<uint32_t>("out"), want.get<uint32_t>("out")) << "seed " << seed << " n " << n;
        ASSERT_EQ(got.get<uint32_t>("c"), want.get<uint32_t>("c")) << "seed " << seed << " n " << n;
        // And every candidate that ran, on the grid tuning gave it.
        const DispatchPlan plan = plan_dispatch(p, {}, in, grid);
        ShaderOptions wide;
        wide.vector_width = 4;
        const std::optional<Widening> widening = find_widening(p, wide);
        EXPECT_EQ(widening.has_value(), guarded);
        for (const aot::TuningCandidate& c : tuned.record.candidates) {
          if (!c.ran) continue;
          ShaderOptions o;
          o.vector_width = c.vector_width;
          if (c.workgroup != plan.workgroup_size) o.workgroup_override = c.workgroup;
          const std::optional<Dim3> retiled = retiled_grid(p.program(), plan, c.workgroup, widening);
          ASSERT_TRUE(retiled) << c.workgroup[0];
          gpu::DispatchReport report;
          const Outputs each = backend.compile(p, o).dispatch(in, retiled, &report);
          EXPECT_EQ(report.vector_width, c.vector_width);
          ASSERT_EQ(each.get<uint32_t>("out"), want.get<uint32_t>("out"))
              << "seed " << seed << " n " << n << " workgroup " << c.workgroup[0] << " width " << int{c.vector_width};
          ASSERT_EQ(each.get<uint32_t>("c"), want.get<uint32_t>("c"));
          ++configurations;
          widened += c.vector_width == 4 ? 1 : 0;
        }
        if (!guarded) {  // 4096 divides by every size from 32 to 1024, none widens
          EXPECT_EQ(tuned.record.candidates.size(), 6u);
        }
      }
    }
  }
  EXPECT_GE(configurations, 16u * 30);
  EXPECT_GT(widened, 16u * 8);
}

TEST(GpuTuning, InputsTheProgramCannotTakeAreRefusedBeforeTuning) {
  TempDir dir;
  const auto cache = cache_in(dir.path());
  gpu::Backend backend(on_cache(cache));
  Inputs in;
  in.set<float>("alpha", {1.0f}).set("x", std::vector<float>(16)).set("nope", std::vector<float>(16)).size("out", 16);
  test::error_of(ErrorKind::invalid_input, [&] { backend.tune(example("saxpy"), in); });
  EXPECT_EQ(cache->list().size(), 0u);
}

}  // namespace
}  // namespace vyre
