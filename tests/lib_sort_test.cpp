// vyre::lib::sort on lavapipe: u32, i32 and f32 keys, alone and with values,
// ascending and descending, at the lengths where workgroups and scan levels
// change, against std::stable_sort in the documented order; edge values
// (NaN of either sign, ±0, ±inf, integer extremes); narrow and f16
// keys with values of other types; stability; a grid
// beyond one axis; one pass against the reference interpreter; refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

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

// The scatter pass writes keys straight to their places, or orders its span
// in workgroup memory first where the span fits there beside the digit
// table (32-bit keys and values): {128, 16} is the former for keys alone
// and with values, {64, 8} the latter for both.
const std::vector<lib::SortShape> kBothScatters = {{128, 16}, {64, 8}};

// argsort moves u32 values with the keys: false for 8-bit shapes whose span
// fits workgroup memory only without them. `longest`: the lengths past it are
// left out, for shapes whose tiles are so small that a million keys make a
// counts table of millions of entries (minutes on a CPU Vulkan device), where
// shorter inputs already make thousands of tiles.
template <class T>
void check_every_length(uint32_t seed, const std::vector<lib::SortShape>& shapes = kBothScatters, bool with_argsort = true,
                        uint32_t longest = std::numeric_limits<uint32_t>::max()) {
  std::vector<uint32_t> lengths = test::kLibSweepLengths;
  lengths.insert(lengths.begin(), 0);
  for (uint32_t n : lengths) {
    if (n > longest) continue;
    std::vector<T> keys = random_values<T>(n, seed + n);
    // Many equal keys too, so that stability is seen.
    for (size_t i = 0; i < keys.size(); i += 3) keys[i] = keys[i / 7];
    for (SortOrder order : {SortOrder::Ascending, SortOrder::Descending}) {
      const std::vector<uint32_t> want = host_argsort(keys, order);
      std::vector<T> sorted_want(n);
      for (size_t i = 0; i < n; ++i) sorted_want[i] = keys[want[i]];
      for (const lib::SortShape& shape : shapes) {
        const std::string at = std::to_string(n) + " keys, " + std::to_string(shape.workgroup) + " x " +
                               std::to_string(shape.items) + ", " + std::to_string(shape.radix_bits) + "-bit digits";
        EXPECT_EQ(bits_of(lib::sort(backend(), keys, order, shape)), bits_of(sorted_want)) << at;
        if (with_argsort) {
          EXPECT_EQ(lib::argsort(backend(), keys, order, shape), want) << at;
        }
      }
    }
  }
}

TEST(LibSort, U32AtEveryLengthBothOrders) { check_every_length<uint32_t>(31); }
TEST(LibSort, I32AtEveryLengthBothOrders) { check_every_length<int32_t>(32); }
TEST(LibSort, F32AtEveryLengthBothOrders) { check_every_length<float>(33); }
// Wider digits, fewer passes: 6 of 6 bits (the table ordered in workgroup
// memory), 7 of 5 bits (keys straight to their places: 64 x 32 does not fit).
TEST(LibSort, WiderDigitsAtEveryLengthBothOrders) {
  check_every_length<uint32_t>(38, {lib::SortShape{32, 16, 6}, lib::SortShape{64, 32, 5}});
  check_every_length<float>(39, {lib::SortShape{32, 16, 6}});
}
// 8-bit digits, four passes of two 4-bit rankings in workgroup memory each:
// with values where the span fits beside them, keys alone at the largest
// spans (2,048 keys).
TEST(LibSort, EightBitDigitsAtEveryLengthBothOrders) {
  check_every_length<uint32_t>(42, {lib::SortShape{128, 8, 8}});
  // 16 keys a tile: 65537 keys are already 4,097 tiles.
  check_every_length<uint32_t>(42, {lib::SortShape{16, 1, 8}}, true, 65537);
  check_every_length<float>(43, {lib::SortShape{64, 16, 8}});
  check_every_length<int32_t>(44, {lib::SortShape{64, 8, 8}});
  check_every_length<uint32_t>(45, {lib::SortShape{128, 16, 8}, lib::SortShape{64, 32, 8}}, false);
  check_every_length<float>(46, {lib::SortShape{128, 16, 8}}, false);
}

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
  // {16, 1, 6}: 64 digits over 16 invocations, each taking four.
  // {16, 1, 8}: 256 digits' counts over 16 invocations, each taking 16.
  for (const lib::SortShape shape : {lib::SortShape{16, 1}, lib::SortShape{64, 3}, lib::SortShape{128, 64},
                                     lib::SortShape{16, 1, 6}, lib::SortShape{64, 5, 5}, lib::SortShape{32, 64, 6},
                                     lib::SortShape{16, 1, 8}, lib::SortShape{128, 3, 8}})
    EXPECT_EQ(lib::sort(backend(), keys, SortOrder::Ascending, shape), want)
        << shape.workgroup << "x" << shape.items << ", " << shape.radix_bits << " bits";
  const std::vector<uint32_t> many = random_values<uint32_t>((1u << 20) + 3, 35);
  std::vector<uint32_t> many_want = many;
  std::sort(many_want.begin(), many_want.end());
  EXPECT_EQ(lib::sort(backend(), many, SortOrder::Ascending, lib::SortShape{16, 1}), many_want);
}

// The scatter's digit table keeps two digits' counters in one word, 16 bits
// each. The largest spans (128 x 64 at 4 bits, 32 x 64 at 6: 8,192 and
// 2,048 keys), whose keys all fall in one half or the other, count a whole
// span in one half: nothing may carry into the other. argsort checks the
// order of equal keys too. 8-bit digits rank by two 4-bit halves of each,
// with the same table.
TEST(LibSort, SpansOfOneDigitHalfAtTheLargestShapes) {
  std::vector<uint32_t> keys = random_values<uint32_t>(3 * 8192 + 5, 41);
  for (size_t i = 0; i < keys.size(); ++i) {
    // Each digit of the first 16,384 keys in the lower half, of the rest in
    // the upper half (bit 3 of each 4-bit digit, bit 5 of each 6-bit one).
    keys[i] = i < 16384 ? keys[i] & 0x55555555u : keys[i] | 0xaaaaaaaau;
    if (i % 5 == 0 && i >= 5) keys[i] = keys[i - 5];  // equal keys, for stability
  }
  for (const lib::SortShape shape : {lib::SortShape{128, 64}, lib::SortShape{32, 64, 6}, lib::SortShape{64, 16, 8}})
    EXPECT_EQ(lib::argsort(backend(), keys, SortOrder::Ascending, shape), host_argsort(keys, SortOrder::Ascending))
        << shape.workgroup << "x" << shape.items << ", " << shape.radix_bits << " bits";
}

TEST(LibSort, OnePassIsTheReferenceInterpretersResult) {
  const std::vector<float> keys = random_values<float>(3000, 36);
  // Each shape with the form of its scatter pass: both 4-bit forms
  // (kBothScatters); 6-bit digits, 64 of them, over 16 invocations (four
  // each) ordered in workgroup memory, and over 32 straight to their places;
  // 8-bit digits, always ordered there.
  const std::vector<std::pair<lib::SortShape, bool>> shapes = {{kBothScatters[0], false}, {kBothScatters[1], true},
                                                               {{16, 2, 6}, true},        {{32, 64, 6}, false},
                                                               {{128, 16, 8}, true},      {{16, 4, 8}, true}};
  for (const auto& [shape, local] : shapes) {
    const uint32_t span = shape.workgroup * shape.items;
    const uint32_t groups = (3000 + span - 1) / span;
    const Program count = lib::sort_count_pass(ScalarType::F32, SortOrder::Ascending, shape);
    const Program scatter = lib::sort_scatter_pass(ScalarType::F32, false, SortOrder::Ascending, shape);
    const bool orders_locally = std::any_of(scatter.buffers.begin(), scatter.buffers.end(),
                                            [](const Buffer& b) { return b.name == "ordered_keys"; });
    EXPECT_EQ(orders_locally, local) << shape.workgroup << "x" << shape.items;
    for (uint32_t shift : {0u, 12u, 28u}) {
      Inputs count_in;
      count_in.set<float>("keys", keys).set<uint32_t>("shift", {shift}).size("counts", (1u << shape.radix_bits) * groups);
      const Dim3 grid{groups, 1, 1};
      const std::vector<uint32_t> counts = backend().compile(count).dispatch(count_in, grid).get<uint32_t>("counts");
      EXPECT_EQ(counts, reference::run(count, count_in, {}, grid).get<uint32_t>("counts"));
      std::vector<uint32_t> offsets(counts.size());
      std::exclusive_scan(counts.begin(), counts.end(), offsets.begin(), 0u);
      Inputs scatter_in;
      scatter_in.set<float>("keys", keys).set<uint32_t>("shift", {shift}).set<uint32_t>("offsets", offsets).size("keys_out", 3000);
      EXPECT_EQ(bits_of(backend().compile(scatter).dispatch(scatter_in, grid).get<float>("keys_out")),
                bits_of(reference::run(scatter, scatter_in, {}, grid).get<float>("keys_out")))
          << shape.workgroup << "x" << shape.items << ", " << shape.radix_bits << " bits, shift " << shift;
    }
  }
}

// The device's default shape for each kind of keys and values is one that
// sorts them (8-bit digits, where a device class takes them, only for
// 32-bit keys and values, and only where the span fits beside the values).
TEST(LibSort, TheDefaultShapeSortsEveryKindOfKeysAndValues) {
  const std::vector<uint32_t> raw = random_values<uint32_t>(3001, 47);
  std::vector<uint32_t> want = raw;
  std::sort(want.begin(), want.end());
  std::vector<uint8_t> small(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) small[i] = static_cast<uint8_t>(raw[i]);
  for (const std::optional<ScalarType> values : {std::optional<ScalarType>{}, std::optional(ScalarType::U32),
                                                 std::optional(ScalarType::U8)}) {
    const lib::SortShape shape = lib::default_sort_shape(backend(), ScalarType::U32, values);
    const std::string at = values ? std::string(to_string(*values)) + " values" : "keys alone";
    if (!values) {
      EXPECT_EQ(lib::sort(backend(), raw, SortOrder::Ascending, shape), want) << at;
    } else if (*values == ScalarType::U32) {
      EXPECT_EQ(lib::argsort(backend(), raw, SortOrder::Ascending, shape), host_argsort(raw, SortOrder::Ascending)) << at;
    } else {
      EXPECT_EQ(lib::sort_pairs(backend(), raw, small, SortOrder::Ascending, shape).first, want) << at;
    }
  }
  const lib::SortShape narrow = lib::default_sort_shape(backend(), ScalarType::U8, ScalarType::U32);
  EXPECT_EQ(narrow.radix_bits, 4u);
  EXPECT_EQ(lib::sort(backend(), small, SortOrder::Ascending, narrow).size(), small.size());
  EXPECT_EQ(lib::default_sort_shape(backend()), lib::default_sort_shape(backend(), ScalarType::U32));
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
  EXPECT_NE(message([] { lib::sort_count_pass(ScalarType::F64, SortOrder::Ascending); })
                .find("u32, i32, f32, f16, u8, i8, u16 or i16 keys, not f64"),
            std::string::npos);
  EXPECT_NE(message([] { lib::sort_count_pass(ScalarType::Bool, SortOrder::Ascending); }).find("keys, not bool"),
            std::string::npos);
  EXPECT_NE(message([&] { lib::sort(backend(), keys, SortOrder::Ascending, lib::SortShape{256, 4}); }).find("from 16 to 128"),
            std::string::npos);
  EXPECT_NE(message([&] { lib::sort(backend(), keys, SortOrder::Ascending, lib::SortShape{64, 4, 7}); })
                .find("radix_bits is 4, 5, 6 or 8, not 7"),
            std::string::npos);
  EXPECT_NE(message([&] { lib::sort(backend(), keys, SortOrder::Ascending, lib::SortShape{128, 4, 5}); })
                .find("at 5 bits the workgroup is at most 64"),
            std::string::npos);
  EXPECT_NE(message([&] { lib::argsort(backend(), keys, SortOrder::Ascending, lib::SortShape{128, 16, 8}); })
                .find("span of 128 x 16 keys and values must fit 16 KiB of workgroup memory beside its tables, and "
                      "needs 24064 bytes: at most 1,024 keys a workgroup"),
            std::string::npos);
  EXPECT_NE(message([&] { lib::sort(backend(), keys, SortOrder::Ascending, lib::SortShape{128, 32, 8}); })
                .find("at most 2,048 keys a workgroup"),
            std::string::npos);
  EXPECT_NE(message([&] { lib::sort(backend(), std::vector<uint16_t>{3, 1}, SortOrder::Ascending, lib::SortShape{64, 8, 8}); })
                .find("8-bit digits take 32-bit keys and values (u32, i32, f32), not u16"),
            std::string::npos);
  EXPECT_NE(message([&] {
              lib::sort_pairs(backend(), std::vector<uint32_t>{3, 1}, std::vector<uint8_t>{1, 2}, SortOrder::Ascending,
                              lib::SortShape{64, 8, 8});
            }).find("not u8; narrower ones take 4 to 6"),
            std::string::npos);
  EXPECT_NE(message([&] {
              lib::sort_pairs(backend(), std::span<const uint32_t>(keys), std::span<const uint32_t>(keys).first(2));
            }).find("3 keys but 2 values"),
            std::string::npos);
  EXPECT_NE(message([&] { lib::sort(backend(), backend().upload(keys), backend().upload(std::vector<float>{1, 2})); })
                .find("3 keys but 2 values"),
            std::string::npos);
}

}  // namespace

namespace {

// Narrow and f16 keys: the sort's order on their values (f16 as its exact
// f32), stable, with values of another type moved along; the fewer digit
// passes of 8- and 16-bit keys and f16's skipped low bits change nothing.
template <class K, class V>
void check_narrow(uint32_t seed, const std::optional<lib::SortShape>& shape = std::nullopt) {
  for (uint32_t n : {1u, 33u, 5001u}) {  // within and beyond one workgroup's span
    const std::vector<uint32_t> raw = random_values<uint32_t>(n, seed + n);
    std::vector<K> keys(n);
    std::vector<V> values(n);
    std::vector<double> as_double(n);
    for (uint32_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<K, half>) {
        const std::array<half, 6> edges = {to_half(-0.0), to_half(0.0), to_half(INFINITY), to_half(-INFINITY),
                                           half{0x0001}, half{0x8001}};  // ±0, ±inf, ± the smallest subnormal
        keys[i] = i % 17 < edges.size() ? edges[i % 17] : half{static_cast<uint16_t>((raw[i] & 0x7bffu) | (raw[i] & 0x8000u))};
        as_double[i] = to_double(keys[i]);
      } else {
        keys[i] = static_cast<K>(raw[i] % 37 * 7);  // many equal keys, for stability
        as_double[i] = keys[i];
      }
      values[i] = static_cast<V>(i);
    }
    for (SortOrder order : {SortOrder::Ascending, SortOrder::Descending}) {
      std::vector<uint32_t> index(n);
      std::iota(index.begin(), index.end(), 0u);
      // -0 before +0 ascending (after descending), as for f32 keys.
      const auto rank = [&](uint32_t i) { return std::pair{as_double[i], !std::signbit(as_double[i])}; };
      std::stable_sort(index.begin(), index.end(), [&](uint32_t a, uint32_t b) {
        return order == SortOrder::Ascending ? rank(a) < rank(b) : rank(b) < rank(a);
      });
      const auto [k, v] = lib::sort_pairs(backend(), keys, values, order, shape);
      ASSERT_EQ(k.size(), n);
      for (uint32_t i = 0; i < n; ++i) {
        ASSERT_EQ(std::memcmp(&k[i], &keys[index[i]], sizeof(K)), 0) << i << " of " << n;
        ASSERT_EQ(v[i], values[index[i]]) << i << " of " << n;
      }
    }
  }
}

TEST(LibSort, NarrowAndF16KeysWithValuesOfOtherTypes) {
  check_narrow<uint8_t, uint32_t>(81);
  check_narrow<int8_t, uint8_t>(82);
  check_narrow<uint16_t, float>(83);
  check_narrow<int16_t, int16_t>(84);
  check_narrow<half, uint32_t>(85);
  // 6-bit digits: two passes over 8-bit keys, three over 16, four over f16's 20.
  check_narrow<int8_t, uint32_t>(86, lib::SortShape{32, 8, 6});
  check_narrow<uint16_t, uint16_t>(87, lib::SortShape{32, 8, 6});
  check_narrow<half, float>(88, lib::SortShape{16, 4, 6});
  check_narrow<int16_t, uint32_t>(89, lib::SortShape{64, 4, 5});
  // u32 keys with u8 values: values of any type move with their keys.
  const auto [k, v] = lib::sort_pairs(backend(), std::vector<uint32_t>{3, 1, 2}, std::vector<uint8_t>{30, 10, 20});
  EXPECT_EQ(k, (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(v, (std::vector<uint8_t>{10, 20, 30}));
}

}  // namespace
