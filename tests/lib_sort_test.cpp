// vyre::lib::sort on lavapipe: u32, i32 and f32 keys, alone and with values,
// ascending and descending, at the lengths where workgroups and scan levels
// change, against std::stable_sort in the documented order; edge values
// (NaN of either sign, ±0, ±inf, integer extremes); stability; a grid
// beyond one axis; one pass against the reference interpreter; refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>

#include "support/lib_inputs.hpp"
#include "support/lowering_backend.hpp"
#include "vyre/error.hpp"
#include "vyre/lib/sort.hpp"
#include "vyre/reference.hpp"

using namespace vyre;
using lib::SortOrder;
using test::random_values;

namespace {

gpu::Backend& backend() { return vyre::test::lowering_backend(); }

// The documented order as a total order on bits: NaN last ascending (first
// descending), -0 before +0.
template <class T>
uint32_t rank_of(T key) {
  if constexpr (std::is_same_v<T, uint32_t>) return key;
  if constexpr (std::is_same_v<T, int32_t>) return std::bit_cast<uint32_t>(key) ^ 0x80000000u;
  if constexpr (std::is_same_v<T, float>) {
    if (std::isnan(key)) return 0xffffffffu;
    const uint32_t b = std::bit_cast<uint32_t>(key);
    return b >> 31 ? ~b : b | 0x80000000u;
  }
}

template <class T>
std::vector<uint32_t> host_argsort(const std::vector<T>& keys, SortOrder order) {
  std::vector<uint32_t> index(keys.size());
  std::iota(index.begin(), index.end(), 0u);
  std::stable_sort(index.begin(), index.end(), [&](uint32_t a, uint32_t b) {
    return order == SortOrder::Ascending ? rank_of(keys[a]) < rank_of(keys[b]) : rank_of(keys[a]) > rank_of(keys[b]);
  });
  return index;
}

template <class T>
std::vector<uint32_t> bits_of(const std::vector<T>& v) {
  std::vector<uint32_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = std::bit_cast<uint32_t>(v[i]);
  return out;
}

template <class T>
void check_every_length(uint32_t seed) {
  std::vector<uint32_t> lengths = test::kLibLengths;
  lengths.insert(lengths.begin(), 0);
  for (uint32_t n : lengths) {
    std::vector<T> keys = random_values<T>(n, seed + n);
    // Many equal keys too, so that stability is seen.
    for (size_t i = 0; i < keys.size(); i += 3) keys[i] = keys[i / 7];
    for (SortOrder order : {SortOrder::Ascending, SortOrder::Descending}) {
      const std::vector<uint32_t> want = host_argsort(keys, order);
      std::vector<T> sorted_want(n);
      for (size_t i = 0; i < n; ++i) sorted_want[i] = keys[want[i]];
      EXPECT_EQ(bits_of(lib::sort(backend(), keys, order)), bits_of(sorted_want)) << n;
      EXPECT_EQ(lib::argsort(backend(), keys, order), want) << n;
    }
  }
}

TEST(LibSort, U32AtEveryLengthBothOrders) { check_every_length<uint32_t>(31); }
TEST(LibSort, I32AtEveryLengthBothOrders) { check_every_length<int32_t>(32); }
TEST(LibSort, F32AtEveryLengthBothOrders) { check_every_length<float>(33); }

TEST(LibSort, EdgeValuesInNumpysOrder) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float negative_nan = -nan;
  const std::vector<float> keys = {3.0f, nan, -inf, -0.0f, 0.0f, negative_nan, inf, -1.0f, 0.0f, -0.0f,
                                   std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::max()};
  const std::vector<float> sorted = lib::sort(backend(), keys);
  const std::vector<float> head(sorted.begin(), sorted.end() - 2);
  EXPECT_EQ(bits_of(head), bits_of(std::vector<float>{-inf, -std::numeric_limits<float>::max(), -1.0f, -0.0f, -0.0f,
                                                      0.0f, 0.0f, std::numeric_limits<float>::denorm_min(), 3.0f, inf}));
  // Both NaNs last, in their input order, their bits kept.
  EXPECT_EQ(std::bit_cast<uint32_t>(sorted[10]), std::bit_cast<uint32_t>(nan));
  EXPECT_EQ(std::bit_cast<uint32_t>(sorted[11]), std::bit_cast<uint32_t>(negative_nan));
  const std::vector<float> down = lib::sort(backend(), keys, SortOrder::Descending);
  EXPECT_TRUE(std::isnan(down[0]) && std::isnan(down[1]));
  EXPECT_EQ(down[2], inf);
  EXPECT_EQ(lib::sort(backend(), std::vector<int32_t>{0, INT32_MAX, -1, INT32_MIN, 1}),
            (std::vector<int32_t>{INT32_MIN, -1, 0, 1, INT32_MAX}));
  EXPECT_EQ(lib::sort(backend(), std::vector<uint32_t>{UINT32_MAX, 0, 0x80000000u, 7}),
            (std::vector<uint32_t>{0, 7, 0x80000000u, UINT32_MAX}));
}

TEST(LibSort, ValuesMoveWithTheirKeysStably) {
  const std::vector<uint32_t> keys = {5, 1, 5, 0, 1, 5};
  const std::vector<uint32_t> values = {10, 11, 12, 13, 14, 15};
  const auto [k, v] = lib::sort_pairs(backend(), std::span<const uint32_t>(keys), std::span<const uint32_t>(values));
  EXPECT_EQ(k, (std::vector<uint32_t>{0, 1, 1, 5, 5, 5}));
  EXPECT_EQ(v, (std::vector<uint32_t>{13, 11, 14, 10, 12, 15}));
  const auto [kd, vd] = lib::sort_pairs(backend(), std::span<const uint32_t>(keys), std::span<const uint32_t>(values),
                                         SortOrder::Descending);
  EXPECT_EQ(vd, (std::vector<uint32_t>{10, 12, 15, 11, 14, 13}));  // equal keys in input order
}

TEST(LibSort, ShapesAndAGridBeyondOneAxis) {
  const std::vector<uint32_t> keys = random_values<uint32_t>(140001, 34);
  std::vector<uint32_t> want = keys;
  std::sort(want.begin(), want.end());
  // {16, 1}: 8,751 workgroups; {16, 1} on 2^20 + 3 keys: 65,537 workgroups on two axes.
  for (const lib::SortShape shape : {lib::SortShape{16, 1}, lib::SortShape{64, 3}, lib::SortShape{128, 64}})
    EXPECT_EQ(lib::sort(backend(), keys, SortOrder::Ascending, shape), want) << shape.workgroup << "x" << shape.items;
  const std::vector<uint32_t> many = random_values<uint32_t>((1u << 20) + 3, 35);
  std::vector<uint32_t> many_want = many;
  std::sort(many_want.begin(), many_want.end());
  EXPECT_EQ(lib::sort(backend(), many, SortOrder::Ascending, lib::SortShape{16, 1}), many_want);
}

TEST(LibSort, OnePassIsTheReferenceInterpretersResult) {
  const std::vector<float> keys = random_values<float>(3000, 36);
  const uint32_t groups = 3;  // 1,024 keys a workgroup
  for (uint32_t shift : {0u, 12u, 28u}) {
    Inputs count_in;
    count_in.set<float>("keys", keys).set<uint32_t>("shift", {shift}).size("counts", 16 * groups);
    const Program count = lib::sort_count_pass(ScalarType::F32, SortOrder::Ascending);
    const Dim3 grid{groups, 1, 1};
    const std::vector<uint32_t> counts = backend().compile(count).dispatch(count_in, grid).get<uint32_t>("counts");
    EXPECT_EQ(counts, reference::run(count, count_in, {}, grid).get<uint32_t>("counts"));
    std::vector<uint32_t> offsets(counts.size());
    std::exclusive_scan(counts.begin(), counts.end(), offsets.begin(), 0u);
    Inputs scatter_in;
    scatter_in.set<float>("keys", keys).set<uint32_t>("shift", {shift}).set<uint32_t>("offsets", offsets).size("keys_out", 3000);
    const Program scatter = lib::sort_scatter_pass(ScalarType::F32, false, SortOrder::Ascending);
    EXPECT_EQ(bits_of(backend().compile(scatter).dispatch(scatter_in, grid).get<float>("keys_out")),
              bits_of(reference::run(scatter, scatter_in, {}, grid).get<float>("keys_out")));
  }
}

TEST(LibSort, ABufferOnTheGpuStaysThere) {
  const std::vector<int32_t> keys = random_values<int32_t>(5000, 37);
  const lib::SortedBuffers out = lib::sort(backend(), backend().upload(keys), nullptr);
  EXPECT_EQ(out.values, nullptr);
  std::vector<int32_t> want = keys;
  std::sort(want.begin(), want.end());
  EXPECT_EQ(out.keys->read_as<int32_t>(), want);
}

TEST(LibSort, RefusalsSayWhy) {
  const auto message = [](auto f) { return test::invalid_input_message(f); };
  const std::vector<uint32_t> keys = {3, 1, 2};
  EXPECT_NE(message([] { lib::sort_count_pass(ScalarType::F64, SortOrder::Ascending); }).find("u32, i32 or f32 keys"),
            std::string::npos);
  EXPECT_NE(message([&] { lib::sort(backend(), keys, SortOrder::Ascending, lib::SortShape{256, 4}); }).find("from 16 to 128"),
            std::string::npos);
  EXPECT_NE(message([&] {
              lib::sort_pairs(backend(), std::span<const uint32_t>(keys), std::span<const uint32_t>(keys).first(2));
            }).find("3 keys but 2 values"),
            std::string::npos);
  EXPECT_NE(message([&] { lib::sort(backend(), backend().upload(keys), backend().upload(std::vector<float>{1, 2, 3})); })
                .find("u32 values, not f32"),
            std::string::npos);
}

}  // namespace
