// vyre::lib::reduce on lavapipe: every type and operator at the lengths where
// passes and partial groups change (0, 1, 31, 32, 33, 1000, 65537,
// 2^20 + 3), against the host's fold and, for one pass, the reference
// interpreter; edge values (NaN, infinities, zeros, integer extremes); a
// grid beyond 65,535 workgroups; and the refusals.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <memory>

#include "kernels/passes.hpp"
#include "support/lib_inputs.hpp"
#include "support/lowering_backend.hpp"
#include "vyre/error.hpp"
#include "vyre/lib/reduce.hpp"
#include "vyre/reference.hpp"

using namespace vyre;
using lib::ReduceOp;

namespace {

gpu::Backend& backend() { return vyre::test::lowering_backend(); }

using test::random_values;
const std::vector<uint32_t>& kLengths = test::kLibLengths;

template <class T>
T host_fold(const std::vector<T>& v, ReduceOp op) {
  using U = std::make_unsigned_t<std::conditional_t<std::is_integral_v<T>, T, int>>;
  T acc = v[0];
  for (size_t i = 1; i < v.size(); ++i) {
    const T x = v[i];
    switch (op) {
      case ReduceOp::Sum:
        if constexpr (std::is_integral_v<T>) acc = static_cast<T>(static_cast<U>(acc) + static_cast<U>(x));  // wraps
        else acc += x;
        break;
      case ReduceOp::Min: acc = std::min(acc, x); break;
      case ReduceOp::Max: acc = std::max(acc, x); break;
      case ReduceOp::And: if constexpr (std::is_integral_v<T>) acc &= x; break;
      case ReduceOp::Or: if constexpr (std::is_integral_v<T>) acc |= x; break;
      case ReduceOp::Xor: if constexpr (std::is_integral_v<T>) acc ^= x; break;
    }
  }
  return acc;
}

// The most additions on any element's way to the result: its invocation's
// items in every round of the first pass and the workgroup's tree, then the
// items and tree of each later pass (docs/lib.md).
double additions_bound(size_t n, const lib::ReduceShape& shape, uint32_t invocations = lib::detail::kReduceInvocations) {
  const uint32_t groups = lib::detail::reduce_first_groups(n, shape, invocations);
  const uint64_t stride = uint64_t{groups} * shape.workgroup * shape.items;
  const double rounds = static_cast<double>((n + stride - 1) / stride);
  double bound = rounds * shape.items + std::log2(shape.workgroup);
  const lib::ReduceShape rest = lib::detail::reduce_rest_shape(groups);
  for (uint64_t left = groups; left > 1; left = (left + rest.workgroup * rest.items - 1) / (rest.workgroup * rest.items))
    bound += rest.items + std::log2(rest.workgroup);
  return bound;
}

template <class T>
void check_every_operator(uint32_t seed) {
  constexpr bool integer = std::is_integral_v<T>;
  for (uint32_t n : kLengths) {
    const std::vector<T> x = random_values<T>(n, seed + n);
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max, ReduceOp::And, ReduceOp::Or, ReduceOp::Xor}) {
      if (!integer && (op == ReduceOp::And || op == ReduceOp::Or || op == ReduceOp::Xor)) continue;
      const T got = lib::reduce(backend(), x, op);
      if (integer || op != ReduceOp::Sum) {
        EXPECT_EQ(got, host_fold(x, op)) << lib::to_string(op) << " of " << n;
        continue;
      }
      // A float sum: within the rounding of its additions (docs/lib.md).
      double exact = 0, magnitude = 0;
      for (T v : x) exact += static_cast<double>(v), magnitude += std::fabs(static_cast<double>(v));
      const double bound = additions_bound(n, lib::default_reduce_shape(backend())) * std::numeric_limits<T>::epsilon() * magnitude;
      EXPECT_LE(std::fabs(static_cast<double>(got) - exact), bound) << "sum of " << n;
    }
  }
}

TEST(LibReduce, U32EveryOperatorAtEveryLength) { check_every_operator<uint32_t>(1); }
TEST(LibReduce, I32EveryOperatorAtEveryLength) { check_every_operator<int32_t>(2); }
TEST(LibReduce, F32EveryOperatorAtEveryLength) { check_every_operator<float>(3); }

TEST(LibReduce, F64WhereTheDeviceHasIt) {
  try {
    backend().compile(lib::reduce_pass(ScalarType::F64, ReduceOp::Sum));
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::limit_exceeded) throw;
    GTEST_SKIP() << "no shader-f64: " << e.what();
  }
  check_every_operator<double>(4);
}

TEST(LibReduce, OnePassIsTheReferenceInterpretersResult) {
  for (uint32_t n : {1000u, 3000u}) {
    const std::vector<float> x = random_values<float>(n, 7);
    const Program pass = lib::reduce_pass(ScalarType::F32, ReduceOp::Sum);
    const uint32_t groups = (n + 1023) / 1024;
    Inputs in;
    in.set<float>("in", x).size("out", groups);
    const Dim3 grid{groups, 1, 1};
    // The same order of additions: the same bits.
    EXPECT_EQ(backend().compile(pass).dispatch(in, grid).get<float>("out"), reference::run(pass, in, {}, grid).get<float>("out"))
        << n;
  }
}

// The first pass in rounds: capped at a few workgroups, so that each takes
// span after span, at every length, every operator; and its program against
// the reference interpreter over several rounds.
TEST(LibReduce, FirstPassInRoundsAtEveryLength) {
  const lib::ReduceShape shape{64, 4};
  for (uint32_t invocations : {64u, 256u, 4096u}) {
    for (uint32_t n : kLengths) {
      if (n == 0) continue;
      const std::vector<uint32_t> u = random_values<uint32_t>(n, 21 + n);
      const std::vector<float> f = random_values<float>(n, 22 + n);
      const auto on_gpu_u = backend().upload(u);
      const auto on_gpu_f = backend().upload(f);
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max, ReduceOp::And, ReduceOp::Or, ReduceOp::Xor}) {
        EXPECT_EQ(lib::detail::reduce_with(backend(), on_gpu_u, op, shape, invocations)->read_as<uint32_t>()[0], host_fold(u, op))
            << lib::to_string(op) << " of " << n << ", " << invocations << " invocations";
        if (op == ReduceOp::Min || op == ReduceOp::Max) {
          EXPECT_EQ(lib::detail::reduce_with(backend(), on_gpu_f, op, shape, invocations)->read_as<float>()[0], host_fold(f, op))
              << lib::to_string(op) << " of " << n;
        }
      }
      const float got = lib::detail::reduce_with(backend(), on_gpu_f, ReduceOp::Sum, shape, invocations)->read_as<float>()[0];
      double exact = 0, magnitude = 0;
      for (float v : f) exact += v, magnitude += std::fabs(v);
      EXPECT_LE(std::fabs(got - exact), additions_bound(n, shape, invocations) * std::numeric_limits<float>::epsilon() * magnitude)
          << "sum of " << n << ", " << invocations << " invocations";
    }
  }
  for (uint32_t n : {1000u, 5000u, 65537u}) {
    const std::vector<float> x = random_values<float>(n, 23);
    const Program pass = lib::detail::checked_reduce_strided_pass(ScalarType::F32, ReduceOp::Sum, shape).program();
    const uint32_t groups = 3;  // rounds of 768 elements
    Inputs in;
    in.set<float>("in", x).size("out", groups);
    const Dim3 grid{groups, 1, 1};
    EXPECT_EQ(backend().compile(pass).dispatch(in, grid).get<float>("out"), reference::run(pass, in, {}, grid).get<float>("out"))
        << n;
  }
}

// A span's loads unrolled (the default) or in a loop: the same additions in
// the same order, so the same bits, at every length and shape tried.
TEST(LibReduce, UnrolledLoadsGiveTheLoopsBits) {
  for (const lib::ReduceShape shape : {lib::ReduceShape{64, 4}, lib::ReduceShape{32, 32}, lib::ReduceShape{1, 2}}) {
    for (uint32_t n : {1u, 33u, 1000u, 65537u}) {
      const auto x = backend().upload(random_values<float>(n, 31 + n));
      for (uint32_t invocations : {64u, lib::detail::kReduceInvocations}) {
        lib::detail::set_reduce_loads_unrolled(false);
        const std::vector<float> looped = lib::detail::reduce_with(backend(), x, ReduceOp::Sum, shape, invocations)->read_as<float>();
        lib::detail::set_reduce_loads_unrolled(true);
        const std::vector<float> unrolled = lib::detail::reduce_with(backend(), x, ReduceOp::Sum, shape, invocations)->read_as<float>();
        EXPECT_EQ(std::bit_cast<uint32_t>(looped[0]), std::bit_cast<uint32_t>(unrolled[0]))
            << n << " at " << shape.workgroup << "x" << shape.items << ", " << invocations << " invocations";
      }
    }
  }
}

TEST(LibReduce, EdgeValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t at : {size_t{0}, size_t{500}, size_t{4095}}) {  // NaN first, inside, last
    std::vector<float> x(4096, 1.0f);
    x[at] = nan;
    EXPECT_TRUE(std::isnan(lib::reduce(backend(), x, ReduceOp::Min))) << at;
    EXPECT_TRUE(std::isnan(lib::reduce(backend(), x, ReduceOp::Max))) << at;
    EXPECT_TRUE(std::isnan(lib::reduce(backend(), x, ReduceOp::Sum))) << at;
  }
  std::vector<float> y = {3.0f, -inf, 2.0f, inf, -0.0f};
  EXPECT_EQ(lib::reduce(backend(), y, ReduceOp::Min), -inf);
  EXPECT_EQ(lib::reduce(backend(), y, ReduceOp::Max), inf);
  EXPECT_TRUE(std::isnan(lib::reduce(backend(), y, ReduceOp::Sum)));  // inf + -inf
  EXPECT_EQ(lib::reduce(backend(), std::vector<float>{-0.0f, 0.0f}, ReduceOp::Max), 0.0f);  // a zero; its sign unspecified
  // Negative zeros sum to -0.0, as in NumPy; zero elements to +0.
  EXPECT_TRUE(std::signbit(lib::reduce(backend(), std::vector<float>(3000, -0.0f), ReduceOp::Sum)));
  EXPECT_FALSE(std::signbit(lib::reduce(backend(), std::vector<float>{}, ReduceOp::Sum)));
  const std::vector<int32_t> ints = {INT32_MAX, 1, INT32_MIN, -1, INT32_MIN};
  EXPECT_EQ(lib::reduce(backend(), ints, ReduceOp::Sum), INT32_MAX);  // wraps at 32 bits: MAX + 1 + MIN - 1 + MIN
  EXPECT_EQ(lib::reduce(backend(), ints, ReduceOp::Min), INT32_MIN);
  EXPECT_EQ(lib::reduce(backend(), ints, ReduceOp::Max), INT32_MAX);
  EXPECT_EQ(lib::reduce(backend(), std::vector<uint32_t>{UINT32_MAX, 2}, ReduceOp::Sum), 1u);
  // Zero elements: the identity where there is one.
  EXPECT_EQ(lib::reduce(backend(), std::vector<float>{}, ReduceOp::Sum), 0.0f);
  EXPECT_EQ(lib::reduce(backend(), std::vector<uint32_t>{}, ReduceOp::And), UINT32_MAX);
  EXPECT_EQ(lib::reduce(backend(), std::vector<int32_t>{}, ReduceOp::Xor), 0);
}

TEST(LibReduce, ShapesAndAGridBeyondOneAxis) {
  const std::vector<uint32_t> x = random_values<uint32_t>(140001, 9);
  const uint32_t want = host_fold(x, ReduceOp::Sum);
  // {1, 2}: 70,001 workgroups on a grid of 65,535 x 2 (the last 61,069 have
  // no span), then 35,001, ...; {1, 1} would never shrink and is refused.
  for (const lib::ReduceShape shape : {lib::ReduceShape{1, 2}, lib::ReduceShape{64, 1}, lib::ReduceShape{1024, 16}})
    EXPECT_EQ(lib::reduce(backend(), x, ReduceOp::Sum, shape), want) << shape.workgroup << "x" << shape.items;
}

TEST(LibReduce, ABufferOnTheGpuStaysThere) {
  const std::vector<int32_t> x = random_values<int32_t>(100000, 11);
  const std::shared_ptr<gpu::DeviceBuffer> sum = lib::reduce(backend(), backend().upload(x), ReduceOp::Sum);
  ASSERT_EQ(sum->elements(), 1u);
  EXPECT_EQ(sum->type(), ScalarType::I32);
  EXPECT_EQ(sum->read_as<int32_t>()[0], host_fold(x, ReduceOp::Sum));
}

TEST(LibReduce, RefusalsSayWhy) {
  const auto message = [](auto f) { return test::invalid_input_message(f); };
  EXPECT_NE(message([] { lib::reduce(backend(), std::vector<float>{}, ReduceOp::Min); }).find("zero elements has no value"),
            std::string::npos);
  EXPECT_NE(message([] { lib::reduce(backend(), std::vector<float>{1}, ReduceOp::Xor); }).find("takes integer or bool elements"),
            std::string::npos);
  EXPECT_NE(message([] { lib::reduce(backend(), std::vector<uint32_t>{1}, ReduceOp::Sum, lib::ReduceShape{100, 4}); }).find("power of two"),
            std::string::npos);
  EXPECT_NE(message([] { lib::reduce_pass(ScalarType::F16, ReduceOp::Or); }).find("reduce or takes integer or bool elements"),
            std::string::npos);
  EXPECT_NE(message([] { lib::reduce_pass(ScalarType::U32, ReduceOp::Sum, {1, 1}); }).find("2 or more items"),
            std::string::npos);
  const std::vector<uint8_t> odd(7);
  EXPECT_NE(message([&] { lib::reduce_bytes(backend(), odd, ScalarType::U32, ReduceOp::Sum); }).find("whole u32"),
            std::string::npos);
  EXPECT_EQ(lib::reduce_op_from_string("xor"), ReduceOp::Xor);
  EXPECT_FALSE(lib::reduce_op_from_string("prod"));
}

}  // namespace

namespace {

// Narrow, bool and f16 elements reduce in their accumulator type
// (accumulator_type): the elements widened, then folded as u32, i32 or f32.
template <class T>
void check_widened(uint32_t seed) {
  using Acc = lib::accumulator_t<T>;
  for (uint32_t n : {1u, 3u, 31u, 33u, 1001u, 65537u}) {  // odd lengths end mid-word
    const test::Widened<T> values = test::widened_values<T>(n, seed + n);
    const std::vector<Acc>& wide = values.wide;
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max, ReduceOp::And, ReduceOp::Or, ReduceOp::Xor}) {
      if (std::is_same_v<T, half> && op >= ReduceOp::And) continue;
      const Acc got = lib::reduce(backend(), std::span<const T>(values.x.get(), n), op);
      static_assert(std::is_same_v<decltype(got), const Acc>);
      // Eighths of at most 1000 in an f32 sum of up to 2^17 terms are exact.
      EXPECT_EQ(got, host_fold(wide, op)) << lib::to_string(op) << " of " << n;
    }
  }
}

TEST(LibReduce, NarrowBoolAndF16ElementsAccumulateInTheirWiderType) {
  EXPECT_EQ(lib::accumulator_type(ScalarType::U8), ScalarType::U32);
  EXPECT_EQ(lib::accumulator_type(ScalarType::I16), ScalarType::I32);
  EXPECT_EQ(lib::accumulator_type(ScalarType::Bool), ScalarType::U32);
  EXPECT_EQ(lib::accumulator_type(ScalarType::F16), ScalarType::F32);
  EXPECT_EQ(lib::accumulator_type(ScalarType::F64), ScalarType::F64);
  check_widened<uint8_t>(61);
  check_widened<int8_t>(62);
  check_widened<uint16_t>(63);
  check_widened<int16_t>(64);
  check_widened<bool>(65);
  check_widened<half>(66);
  // 300 bytes of 255 sum past a byte's range, as NumPy's uint8 sum does.
  EXPECT_EQ(lib::reduce(backend(), std::vector<uint8_t>(300, 255), ReduceOp::Sum), 300u * 255u);
  const bool flags[] = {true, false, true, true};
  EXPECT_EQ(lib::reduce(backend(), std::span<const bool>(flags), ReduceOp::Sum), 3u);
  EXPECT_EQ(lib::reduce(backend(), std::vector<int8_t>{-128, -128, 127}, ReduceOp::Sum), -129);
  // An f16 NaN propagates through min as an f32 NaN.
  EXPECT_TRUE(std::isnan(lib::reduce(backend(), std::vector<half>{to_half(1), to_half(NAN)}, ReduceOp::Min)));
  EXPECT_EQ(lib::reduce(backend(), std::vector<uint16_t>{}, ReduceOp::Sum), 0u);
}

}  // namespace
