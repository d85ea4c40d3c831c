// vyre::lib::transpose on lavapipe: bit-exact against the host at shapes
// of one row or column, partial tiles and whole ones, with NaN payloads;
// every candidate shape; every element type; a grid beyond one axis; a
// buffer left on the GPU; the pass against the reference interpreter;
// refusals.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <cmath>
#include <random>
#include <string>

#include "support/lib_inputs.hpp"
#include "support/lowering_backend.hpp"
#include "vyre/error.hpp"
#include "vyre/lib/transpose.hpp"
#include "vyre/reference.hpp"

using namespace vyre;

namespace {

gpu::Backend& backend() { return vyre::test::lowering_backend(); }

template <class T>
std::vector<T> host_transpose(const std::vector<T>& x, uint32_t rows, uint32_t cols) {
  std::vector<T> out(x.size());
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t c = 0; c < cols; ++c) out[size_t{c} * rows + r] = x[size_t{r} * cols + c];
  return out;
}

// Floats of every kind as bits: NaNs of both signs and several payloads,
// infinities, zeros of both signs, subnormals, ordinary values.
std::vector<uint32_t> random_bits(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  const uint32_t specials[] = {0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x7fbfffffu, 0x7f800000u,
                               0xff800000u, 0x80000000u, 0x00000000u, 0x00000001u, 0x807fffffu};
  std::vector<uint32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = rng() % 4 == 0 ? specials[rng() % std::size(specials)] : rng();
  return v;
}

std::vector<float> floats_of(const std::vector<uint32_t>& bits) {
  std::vector<float> out(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) out[i] = std::bit_cast<float>(bits[i]);
  return out;
}

std::vector<uint32_t> bits_of(const std::vector<float>& v) {
  std::vector<uint32_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = std::bit_cast<uint32_t>(v[i]);
  return out;
}

void check_f32(uint32_t rows, uint32_t cols, const std::optional<lib::TransposeShape>& shape = std::nullopt) {
  const std::vector<uint32_t> bits = random_bits(size_t{rows} * cols, rows * 31 + cols);
  const std::vector<float> got = lib::transpose(backend(), floats_of(bits), rows, cols, shape);
  EXPECT_EQ(bits_of(got), host_transpose(bits, rows, cols))
      << rows << "x" << cols
      << (shape ? " tile " + std::to_string(shape->tile) + " per " + std::to_string(shape->rows_per_invocation) : "");
}

TEST(LibTranspose, BitExactAtEveryShape) {
  for (const auto& [rows, cols] : std::vector<std::pair<uint32_t, uint32_t>>{
           {1, 1}, {1, 1000}, {1000, 1}, {31, 33}, {1000, 3}, {32, 32}, {1024, 1024}, {4097, 5}})
    check_f32(rows, cols);
}

TEST(LibTranspose, EveryCandidateShape) {
  for (const lib::TransposeShape& s : lib::transpose_candidates()) {
    check_f32(67, 45, s);
    check_f32(64, 128, s);
  }
}

TEST(LibTranspose, EveryElementType) {
  const std::vector<uint32_t> u = test::random_values<uint32_t>(70 * 9, 1);
  EXPECT_EQ(lib::transpose(backend(), u, 70, 9), host_transpose(u, 70, 9));
  const std::vector<int32_t> i = test::random_values<int32_t>(9 * 70, 2);
  EXPECT_EQ(lib::transpose(backend(), i, 9, 70), host_transpose(i, 9, 70));
  // Narrow elements share words on the GPU: odd extents end rows inside one.
  const std::vector<uint8_t> b = test::random_values<uint8_t>(37 * 41, 3);
  EXPECT_EQ(lib::transpose(backend(), b, 37, 41), host_transpose(b, 37, 41));
  const std::vector<int8_t> sb = test::random_values<int8_t>(3 * 1001, 4);
  EXPECT_EQ(lib::transpose(backend(), sb, 3, 1001), host_transpose(sb, 3, 1001));
  const std::vector<uint16_t> h = test::random_values<uint16_t>(33 * 65, 5);
  EXPECT_EQ(lib::transpose(backend(), h, 33, 65), host_transpose(h, 33, 65));
  const std::vector<int16_t> sh = test::random_values<int16_t>(65 * 33, 6);
  EXPECT_EQ(lib::transpose(backend(), sh, 65, 33), host_transpose(sh, 65, 33));
  std::vector<uint8_t> flags(45 * 19);
  for (size_t k = 0; k < flags.size(); ++k) flags[k] = (k * 7 % 3) == 0;
  const std::vector<uint8_t> moved =
      lib::transpose_bytes(backend(), flags, ScalarType::Bool, 45, 19);
  EXPECT_EQ(moved, host_transpose(flags, 45, 19));
  // f16 and f64 where the device has them: bits, NaN payloads included.
  std::vector<uint16_t> halves = test::random_values<uint16_t>(31 * 17, 7);
  halves[3] = 0x7e01;  // a NaN with a payload
  const auto half_bytes = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(halves.data()), halves.size() * 2);
  std::vector<uint64_t> doubles(17 * 31);
  const std::vector<uint32_t> high = test::random_values<uint32_t>(doubles.size(), 8);
  for (size_t k = 0; k < doubles.size(); ++k) doubles[k] = uint64_t{high[k]} << 32 | high[(k * 5 + 1) % high.size()];
  doubles[5] = 0x7ff0000000000123ull;
  const auto double_bytes =
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(doubles.data()), doubles.size() * 8);
  const auto as = [](const std::vector<uint8_t>& bytes, auto like) {
    std::vector<decltype(like)> out(bytes.size() / sizeof(like));
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  };
  for (const auto& [type, bytes] : {std::pair{ScalarType::F16, half_bytes}, std::pair{ScalarType::F64, double_bytes}}) {
    try {
      const std::vector<uint8_t> t = lib::transpose_bytes(backend(), bytes, type, type == ScalarType::F16 ? 31 : 17,
                                                          type == ScalarType::F16 ? 17 : 31);
      if (type == ScalarType::F16)
        EXPECT_EQ(as(t, uint16_t{}), host_transpose(halves, 31, 17));
      else
        EXPECT_EQ(as(t, uint64_t{}), host_transpose(doubles, 17, 31));
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::limit_exceeded) << e.what();  // the device lacks the feature
    }
  }
}

TEST(LibTranspose, AGridBeyondOneAxis) {
  // 1 x 2^21 + 3 at tile 8: 262,145 workgroups, on two axes.
  const uint32_t cols = (1u << 21) + 3;
  const std::vector<uint32_t> x = test::random_values<uint32_t>(cols, 3);
  EXPECT_EQ(lib::transpose(backend(), x, 1, cols, lib::TransposeShape{8, 1}), x);
  EXPECT_EQ(lib::transpose(backend(), x, cols, 1, lib::TransposeShape{8, 2}), x);
}

TEST(LibTranspose, ZeroRowsOrColumnsAndABufferOnTheGpu) {
  const std::vector<float> none;
  EXPECT_TRUE(lib::transpose(backend(), none, 0, 5).empty());
  EXPECT_TRUE(lib::transpose(backend(), none, 5, 0).empty());
  EXPECT_EQ(lib::transpose(backend(), backend().upload(none), 0, 3)->elements(), 0u);
  const std::vector<float> x = test::random_values<float>(50 * 40, 4);
  const std::shared_ptr<gpu::DeviceBuffer> t = lib::transpose(backend(), backend().upload(x), 50, 40);
  EXPECT_EQ(t->type(), ScalarType::F32);
  // Twice is where it started, without leaving the GPU.
  EXPECT_EQ(bits_of(lib::transpose(backend(), t, 40, 50)->read_as<float>()), bits_of(x));
}

TEST(LibTranspose, ThePassIsTheReferenceInterpretersResult) {
  const uint32_t rows = 37, cols = 21;
  const std::vector<uint32_t> bits = random_bits(size_t{rows} * cols, 5);
  const lib::TransposeShape shape{16, 4};
  const Program pass = lib::transpose_pass(ScalarType::F32, shape);
  Inputs in;
  in.set<float>("x", floats_of(bits)).set<uint32_t>("dims", {rows, cols}).size("out", rows * cols);
  const Dim3 grid{3 * 2, 1, 1};  // ceil(37 / 16) x ceil(21 / 16)
  const std::vector<float> gpu = backend().compile(pass).dispatch(in, grid).get<float>("out");
  EXPECT_EQ(bits_of(gpu), bits_of(reference::run(pass, in, {}, grid).get<float>("out")));
  EXPECT_EQ(bits_of(gpu), host_transpose(bits, rows, cols));
}

TEST(LibTranspose, RefusalsSayWhy) {
  const auto message = [](auto f) { return test::invalid_input_message(f); };
  const auto has = [](const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; };
  const std::vector<float> x(6, 1.0f);
  EXPECT_TRUE(has(message([&] { lib::transpose(backend(), x, 4, 2); }),
                  "6 elements, but rows = 4 and cols = 2 need rows * cols = 8"));
  EXPECT_TRUE(has(message([&] { lib::transpose_bytes(backend(), std::vector<uint8_t>(6), ScalarType::U16, 2, 2); }),
                  "3 elements, but rows = 2 and cols = 2 need rows * cols = 4"));
  EXPECT_TRUE(has(message([&] { lib::transpose(backend(), nullptr, 2, 3); }), "null"));
  EXPECT_TRUE(has(message([] { lib::transpose_pass(ScalarType::F32, {64, 8}); }), "tile is 8, 16 or 32"));
  EXPECT_TRUE(has(message([] { lib::transpose_pass(ScalarType::F32, {32, 1}); }), "1024 invocations; WebGPU promises 256"));
  EXPECT_TRUE(has(message([] { lib::transpose_pass(ScalarType::F32, {16, 3}); }),
                  "rows_per_invocation is a power of two from 1 to the tile"));
}

}  // namespace
