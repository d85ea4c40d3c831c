// Vector widening: which programs are widenable, what the widened shader
// looks like, and that a widened dispatch gives the reference's results
// (random element-wise programs, lengths that allow widening and lengths
// that fall back to the one-element shader, the grid forms, Batch).
#include <gtest/gtest.h>

#include <random>

#include "samples/programs.hpp"
#include "support/gpu_test_support.hpp"
#include "support/element_wise_programs.hpp"
#include "support/test_support.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"
#include "vyre/lower.hpp"
#include "vyre/reference.hpp"

namespace vyre {
namespace {

using namespace vyre::build;
using vyre::test::contains;
using vyre::test::error_of;
using vyre::test::no_disk_cache;
using vyre::test::ElementWise;
using vyre::test::words;

gpu::Backend& widening_backend() {
  static gpu::Backend b = [] {
    gpu::BackendOptions o = no_disk_cache();
    o.widen = true;
    return gpu::Backend(o);
  }();
  return b;
}

gpu::Backend& scalar_backend() {
  static gpu::Backend b = [] {
    gpu::BackendOptions o = no_disk_cache();
    o.widen = false;
    return gpu::Backend(o);
  }();
  return b;
}

// out[i] = a[i] ^ b[i] over runtime-sized u32 buffers.
CheckedProgram xor_program(Expr index = gid(Axis::X), uint32_t workgroup = 64) {
  return ProgramBuilder("xor")
      .workgroup_size(workgroup)
      .input("a", 0, ScalarType::U32)
      .input("b", 1, ScalarType::U32)
      .output("out", 2, ScalarType::U32)
      .body({let("i", std::move(index)),
             if_(lt(var("i"), len("out")), {store("out", var("i"), bit_xor(load("a", var("i")), load("b", var("i"))))})})
      .build();
}

std::string why_not(const CheckedProgram& p) {
  std::string why;
  EXPECT_FALSE(widenable(p, {}, &why));
  return why;
}

TEST(Widening, ElementWiseProgramsAreWidenableAndTheRestSayWhyNot) {
  EXPECT_TRUE(widenable(xor_program()));
  EXPECT_TRUE(widenable(samples::saxpy_program()));  // i = gid.x + gid.y * (nwg.x * 256)
  // examples/saxpy.json's form: i = gid.x, alpha a fixed-size buffer.
  EXPECT_TRUE(widenable(ProgramBuilder("saxpy")
                            .input("alpha", 0, ScalarType::F32, 1)
                            .input("x", 1, ScalarType::F32)
                            .output("out", 2, ScalarType::F32)
                            .body({let("i", gid(Axis::X)),
                                   if_(lt(var("i"), len("out")),
                                       {store("out", var("i"), add(mul(load("alpha", u32(0)), load("x", var("i"))), f32(1.0f)))})})
                            .build()));

  auto with_body = [](std::vector<Stmt> inner) {
    return ProgramBuilder("p")
        .input("a", 0, ScalarType::U32)
        .output("out", 1, ScalarType::U32)
        .output("count", 2, ScalarType::U32, 1)
        .body({let("i", gid(Axis::X)), if_(lt(var("i"), len("out")), std::move(inner))})
        .build();
  };
  EXPECT_TRUE(contains(why_not(with_body({store("out", add(var("i"), u32(1)), u32(1))})), "not a runtime-sized buffer at index i"))
      << why_not(with_body({store("out", add(var("i"), u32(1)), u32(1))}));
  EXPECT_TRUE(contains(why_not(with_body({store("count", u32(0), u32(1))})), "'count'"));
  EXPECT_TRUE(contains(why_not(with_body({eval(atomic(AtomicOp::Add, "count", u32(0), u32(1)))})), "atomic"));
  EXPECT_TRUE(contains(why_not(with_body({store("out", var("i"), lid())})), "built-in"));
  EXPECT_TRUE(contains(why_not(with_body({store("out", var("i"), load("a", var("i"))), return_()})), "return"));
  EXPECT_TRUE(contains(why_not(with_body({store("out", var("i"), load("out", u32(0)))})), "both at 'i'"));
  EXPECT_TRUE(contains(why_not(xor_program(gid(Axis::Y))), "not gid.x"));
  // The two-dimensional index must use the workgroup's own x size.
  EXPECT_TRUE(contains(why_not(xor_program(add(gid(Axis::X), mul(gid(Axis::Y), mul(nwg(Axis::X), u32(128)))), 64)),
                       "not gid.x"));
}

TEST(Widening, TheWidenedShaderIsKeyedAndReadsAndWritesVec4) {
  const CheckedProgram p = xor_program();
  ShaderOptions wide;
  wide.vector_width = 4;
  EXPECT_EQ(shaping_signature(p, wide), "vector_width=4");
  EXPECT_EQ(shaping_signature(p), "");
  const ShaderSpec spec = lower(p, wide);
  EXPECT_TRUE(contains(spec.wgsl, "array<vec4<u32>>")) << spec.wgsl;
  EXPECT_TRUE(contains(spec.wgsl, "b_out[vyre_j] = vyre_v_out;")) << spec.wgsl;
  EXPECT_EQ(spec.interface.vector_width, 4);
  ShaderOptions three;
  three.vector_width = 3;
  EXPECT_TRUE(contains(error_of(ErrorKind::invalid_input, [&] { lower(p, three); }), "vector width 3"));
  const CheckedProgram not_wide = ProgramBuilder("one")
                                      .output("out", 0, ScalarType::U32, 1)
                                      .body({store("out", u32(0), u32(7))})
                                      .build();
  EXPECT_TRUE(contains(error_of(ErrorKind::invalid_input, [&] { lower(not_wide, wide); }), "cannot be widened"));
}

// ---- random element-wise programs against the reference ---------------------

TEST(Widening, RandomElementWiseProgramsGiveTheReferenceResultsWidenedOrNot) {
  int widened = 0, fell_back = 0;
  for (uint32_t seed = 0; seed < 40; ++seed) {
    const CheckedProgram p = ElementWise(seed).program();
    ASSERT_TRUE(widenable(p)) << seed;
    gpu::Pipeline pipeline = widening_backend().compile(p);
    for (const uint32_t n : {4u, 256u, 1000u, 1001u, 1027u}) {
      Inputs in;
      in.set<uint32_t>("a", words(n, seed)).set<uint32_t>("b", words(n, seed + 1000)).set<uint32_t>("g", words(37, seed + 7));
      in.set<uint32_t>("out", words(n, seed + 3)).set<uint32_t>("c", words(n, seed + 5));  // unwritten lanes keep these
      const Outputs want = reference::run(p, in);
      gpu::DispatchReport report;
      const Outputs got = pipeline.dispatch(in, std::nullopt, &report);
      EXPECT_EQ(got.get<uint32_t>("out"), want.get<uint32_t>("out")) << "seed " << seed << " n " << n;
      EXPECT_EQ(got.get<uint32_t>("c"), want.get<uint32_t>("c")) << "seed " << seed << " n " << n;
      EXPECT_EQ(report.vector_width, n % 4 == 0 ? 4 : 1) << n;
      (report.vector_width == 4 ? widened : fell_back) += 1;
    }
  }
  EXPECT_EQ(widened, 40 * 3);
  EXPECT_EQ(fell_back, 40 * 2);
}

TEST(Widening, ADispatchWhoseGridOrLengthsDoNotAllowItRunsTheOneElementShader) {
  const CheckedProgram p = xor_program();
  gpu::Pipeline pipeline = widening_backend().compile(p);
  const uint32_t n = 1024;
  Inputs in;
  in.set<uint32_t>("a", words(n, 1)).set<uint32_t>("b", words(n, 2)).size("out", n);
  gpu::DispatchReport report;
  // A grid covering only part of out: only those elements are written.
  const Dim3 half{8, 1, 1};
  EXPECT_EQ(pipeline.dispatch(in, half, &report).get<uint32_t>("out"), reference::run(p, in, {}, half).get<uint32_t>("out"));
  EXPECT_EQ(report.vector_width, 1);
  // The default grid: widened, on a quarter of the workgroups.
  EXPECT_EQ(pipeline.dispatch(in, std::nullopt, &report).get<uint32_t>("out"), reference::run(p, in).get<uint32_t>("out"));
  EXPECT_EQ(report.vector_width, 4);
  EXPECT_EQ(report.grid, (Dim3{4, 1, 1}));
  // An input shorter than out: the one-element shader.
  Inputs shorter;
  shorter.set<uint32_t>("a", words(n - 4, 1)).set<uint32_t>("b", words(n, 2)).size("out", n);
  pipeline.dispatch(shorter, std::nullopt, &report);
  EXPECT_EQ(report.vector_width, 1);
  // Off by option: never widened.
  scalar_backend().compile(p).dispatch(in, std::nullopt, &report);
  EXPECT_EQ(report.vector_width, 1);
}

TEST(Widening, IsOnUnlessTheOptionsOrVyreWidenSayOtherwise) {
  const CheckedProgram p = xor_program();
  const uint32_t n = 1024;
  Inputs in;
  in.set<uint32_t>("a", words(n, 1)).set<uint32_t>("b", words(n, 2)).size("out", n);
  const auto width_with = [&](std::optional<bool> widen, const char* env) {
    test::ScopedEnv setting("VYRE_WIDEN", env);
    gpu::BackendOptions o;
    o.cache = std::make_shared<aot::Cache>(aot::CacheOptions{});
    o.widen = widen;
    gpu::Backend backend(o);
    gpu::DispatchReport report;
    EXPECT_EQ(backend.compile(p).dispatch(in, std::nullopt, &report).get<uint32_t>("out"),
              reference::run(p, in).get<uint32_t>("out"));
    EXPECT_EQ(backend.widens(), report.vector_width == 4);
    return report.vector_width;
  };
  EXPECT_EQ(width_with(std::nullopt, nullptr), 4) << "on by default";
  EXPECT_EQ(width_with(std::nullopt, "0"), 1);
  EXPECT_EQ(width_with(std::nullopt, "1"), 4);
  EXPECT_EQ(width_with(false, "1"), 1) << "the option takes precedence";
  EXPECT_EQ(width_with(true, "0"), 4);
}

TEST(Widening, TheTwoDimensionalIndexWidensOnTheCallersGrid) {
  const CheckedProgram p = samples::saxpy_program();
  gpu::Pipeline pipeline = widening_backend().compile(p);
  for (const uint64_t n : {uint64_t{1} << 12, (uint64_t{1} << 16) + 4}) {
    std::vector<float> x(n), y(n);
    for (uint64_t k = 0; k < n; ++k) {
      x[k] = static_cast<float>(k % 97);
      y[k] = static_cast<float>(k % 13);
    }
    Inputs in;
    in.set<float>("alpha", {2.0f}).set<float>("x", x).set<float>("y", y);
    gpu::DispatchReport report;
    const auto got = pipeline.dispatch(in, samples::saxpy_grid(n), &report).get<float>("y");
    EXPECT_EQ(report.vector_width, 4);
    for (uint64_t k = 0; k < n; ++k) ASSERT_EQ(got[k], 2.0f * x[k] + y[k]) << k;  // small integers: exact
  }
}

TEST(Widening, ABatchMixesWidenedAndOneElementDispatches) {
  const CheckedProgram p = xor_program();
  gpu::Pipeline pipeline = widening_backend().compile(p);
  gpu::Batch batch(widening_backend());
  std::vector<Inputs> inputs(2);
  inputs[0].set<uint32_t>("a", words(64, 1)).set<uint32_t>("b", words(64, 2)).size("out", 64);
  inputs[1].set<uint32_t>("a", words(63, 1)).set<uint32_t>("b", words(63, 2)).size("out", 63);
  std::vector<std::vector<uint32_t>> out{std::vector<uint32_t>(64), std::vector<uint32_t>(63)};
  for (size_t k = 0; k < 2; ++k) batch.dispatch_into(pipeline, inputs[k], OutputViews().view<uint32_t>("out", out[k]));
  batch.run();
  for (size_t k = 0; k < 2; ++k) EXPECT_EQ(out[k], reference::run(p, inputs[k]).get<uint32_t>("out")) << k;
}

}  // namespace
}  // namespace vyre
