#include "support/lib_pass_cases.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <random>

#include "kernels/aho_corasick.hpp"
#include "vyre/lib/bincount.hpp"
#include "vyre/lib/compact.hpp"
#include "vyre/lib/find.hpp"
#include "vyre/lib/histogram.hpp"
#include "vyre/lib/matmul.hpp"
#include "vyre/lib/softmax.hpp"
#include "vyre/lib/transpose.hpp"
#include "vyre/lib/reduce.hpp"
#include "vyre/lib/scan.hpp"
#include "vyre/lib/sort.hpp"
#include "vyre/reference.hpp"

namespace vyre::test {
namespace {

constexpr uint32_t kElements = 5003;  // several workgroups, the last one partial

std::vector<uint32_t> random_words(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> out(n);
  for (auto& w : out) w = rng();
  return out;
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-100.0f, 100.0f);
  std::vector<float> out(n);
  for (auto& x : out) x = d(rng);
  return out;
}

uint32_t groups(uint32_t n, uint32_t per_group) { return (n + per_group - 1) / per_group; }

void reduce_and_scan_cases(std::vector<LibPassCase>& out) {
  const lib::ReduceShape shape{64, 4};
  const uint32_t g = groups(kElements, shape.workgroup * shape.items);
  const std::vector<uint32_t> words = random_words(kElements, 1);
  const std::vector<float> floats = random_floats(kElements, 2);
  for (ScalarType type : {ScalarType::U32, ScalarType::I32, ScalarType::F32, ScalarType::U8, ScalarType::I16}) {
    for (lib::ReduceOp op : {lib::ReduceOp::Sum, lib::ReduceOp::Min, lib::ReduceOp::Xor}) {
      if (is_float(type) && op == lib::ReduceOp::Xor) continue;
      const std::string suffix = std::string(to_string(type)) + "/" + std::string(lib::to_string(op));
      Inputs in;
      if (type == ScalarType::F32)
        in.set<float>("in", floats);
      else
        in.bytes("in", std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(words.data()),
                                            reinterpret_cast<const uint8_t*>(words.data()) + kElements * element_bytes(type)));
      Inputs reduce_in = in;
      reduce_in.size("out", g);
      out.push_back({"reduce/" + suffix, lib::reduce_pass(type, op, shape), reduce_in, {g, 1, 1}, {}});
      // The last pass of a scan: offsets as the spans' exclusive scan would
      // give them (any values of the accumulator type serve the comparison).
      const ScalarType acc = lib::accumulator_type(type);
      Inputs scan_in = in;
      const std::vector<uint32_t> offsets = random_words(g, 3);
      if (acc == ScalarType::F32)
        scan_in.set<float>("offsets", random_floats(g, 4));
      else
        scan_in.bytes("offsets", std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(offsets.data()),
                                                      reinterpret_cast<const uint8_t*>(offsets.data()) + g * 4));
      scan_in.size("out", kElements);
      for (lib::ScanKind kind : {lib::ScanKind::Inclusive, lib::ScanKind::Exclusive})
        out.push_back({"scan/" + suffix + (kind == lib::ScanKind::Inclusive ? "/inclusive" : "/exclusive"),
                       lib::scan_pass(type, op, kind, shape), scan_in, {g, 1, 1}, {}});
    }
  }
}

// A radix pass of each key type: the count pass, then the scatter pass with
// the exclusive scan of those counts (from the reference), so that every key
// lands in place. At 4-bit digits every key type; at 6 bits (64 digits over
// 16 invocations, four each) u32 and f32 keys; at 8 bits (two 4-bit
// rankings in workgroup memory) the 32-bit key types.
void sort_cases(std::vector<LibPassCase>& out) {
  const std::vector<uint32_t> words = random_words(kElements, 5);
  std::vector<float> floats = random_floats(kElements, 6);
  floats[7] = NAN, floats[8] = -0.0f, floats[9] = INFINITY;
  const std::vector<std::pair<lib::SortShape, std::vector<ScalarType>>> shapes = {
      {{32, 4}, {ScalarType::U32, ScalarType::I32, ScalarType::F32, ScalarType::U8, ScalarType::I16}},
      {{16, 4, 6}, {ScalarType::U32, ScalarType::F32}},
      {{32, 4, 8}, {ScalarType::U32, ScalarType::I32, ScalarType::F32}}};
  for (const auto& [shape, types] : shapes) {
    const uint32_t g = groups(kElements, shape.workgroup * shape.items);
    const Dim3 grid{g, 1, 1};
    const std::string radix = shape.radix_bits == 4 ? "" : "r" + std::to_string(shape.radix_bits) + "/";
    for (ScalarType type : types) {
      for (lib::SortOrder order : {lib::SortOrder::Ascending, lib::SortOrder::Descending}) {
        const std::string suffix =
            radix + std::string(to_string(type)) + (order == lib::SortOrder::Ascending ? "/asc" : "/desc");
        Inputs in;
        if (type == ScalarType::F32)
          in.set<float>("keys", floats);
        else
          in.bytes("keys", std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(words.data()),
                                                reinterpret_cast<const uint8_t*>(words.data()) + kElements * element_bytes(type)));
        in.set<uint32_t>("shift", {shape.radix_bits});
        Inputs count_in = in;
        count_in.size("counts", (1u << shape.radix_bits) * g);
        const CheckedProgram count = lib::sort_count_pass(type, order, shape);
        const std::vector<uint32_t> counts = reference::run(count, count_in, {}, grid).get<uint32_t>("counts");
        std::vector<uint32_t> offsets(counts.size());
        uint32_t running = 0;
        for (size_t i = 0; i < counts.size(); ++i) offsets[i] = running, running += counts[i];
        out.push_back({"sort_count/" + suffix, count, count_in, grid, {}});
        Inputs scatter_in = in;
        scatter_in.set<uint32_t>("offsets", offsets).size("keys_out", kElements);
        scatter_in.set<uint32_t>("values", random_words(kElements, 7)).size("values_out", kElements);
        out.push_back({"sort_scatter/" + suffix, lib::sort_scatter_pass(type, true, order, shape), scatter_in, grid, {}});
      }
    }
  }
}

void bincount_cases(std::vector<LibPassCase>& out) {
  const lib::ReduceShape shape{64, 4};
  const uint32_t g = groups(kElements, shape.workgroup * shape.items);
  std::vector<uint32_t> values = random_words(kElements, 8);
  for (uint32_t bins : {7u, 300u, lib::kWorkgroupBins + 1}) {
    std::vector<uint32_t> v = values;
    for (uint32_t& x : v) x %= bins + 2;  // some outside
    Inputs in;
    in.set<uint32_t>("values", v).size("counts", bins).size("outside", 1);
    out.push_back({"bincount/" + std::to_string(bins), lib::bincount_pass(ScalarType::U32, bins, shape), in, {g, 1, 1}, {}});
  }
}

std::vector<uint32_t> exclusive_sum(const std::vector<uint32_t>& v) {
  std::vector<uint32_t> out(v.size());
  uint32_t running = 0;
  for (size_t i = 0; i < v.size(); ++i) out[i] = running, running += v[i];
  return out;
}

// compact's count pass, then its scatter with the scan of those counts.
void compact_cases(std::vector<LibPassCase>& out) {
  const lib::ReduceShape shape{64, 4};
  const uint32_t g = groups(kElements, shape.workgroup * shape.items);
  const Dim3 grid{g, 1, 1};
  std::vector<uint32_t> mask = random_words(kElements, 9);
  for (uint32_t& m : mask) m = m % 3 == 0 ? 0 : m;
  const std::vector<uint32_t> values = random_words(kElements, 10);
  Inputs count_in;
  count_in.set<uint32_t>("mask", mask).size("counts", g + 1);
  const CheckedProgram count = lib::compact_count_pass(ScalarType::U32, shape);
  const std::vector<uint32_t> offsets =
      exclusive_sum(reference::run(count, count_in, {}, grid).get<uint32_t>("counts"));
  out.push_back({"compact_count/u32", count, count_in, grid, {}});
  for (ScalarType type : {ScalarType::U32, ScalarType::U8, ScalarType::I16}) {
    Inputs in;
    in.set<uint32_t>("mask", mask).set<uint32_t>("offsets", offsets).size("out", offsets.back());
    in.bytes("values", std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(values.data()),
                                            reinterpret_cast<const uint8_t*>(values.data()) + kElements * element_bytes(type)));
    out.push_back({"compact_scatter/" + std::string(to_string(type)), lib::compact_scatter_pass(type, ScalarType::U32, shape),
                   in, grid, {}});
  }
}

void histogram_cases(std::vector<LibPassCase>& out) {
  const lib::ReduceShape shape{64, 4};
  const uint32_t g = groups(kElements, shape.workgroup * shape.items);
  for (uint32_t bins : {7u, 300u}) {
    std::vector<uint32_t> edges(bins + 1);
    for (uint32_t i = 0; i <= bins; ++i) edges[i] = 100 * i;
    std::vector<uint32_t> values = random_words(kElements, 11);
    for (uint32_t& v : values) v %= 100 * bins + 50;  // some beyond the last edge
    Inputs in;
    in.set<uint32_t>("values", values).set<uint32_t>("edges", edges).size("counts", bins).size("outside", 1);
    out.push_back({"histogram/u32/" + std::to_string(bins), lib::histogram_pass(ScalarType::U32, bins, shape), in,
                   {g, 1, 1}, {}});
  }
}

// find's three passes on a haystack over a small alphabet, each from the
// reference's outputs of the pass before, with the automaton find builds
// (over the reversed patterns: each chunk is read backwards).
void find_cases(std::vector<LibPassCase>& out) {
  const lib::FindShape shape{32, 64};
  std::vector<uint32_t> raw = random_words(kElements, 12);
  std::vector<uint8_t> haystack(kElements);
  for (size_t i = 0; i < haystack.size(); ++i) haystack[i] = static_cast<uint8_t>('a' + raw[i] % 3);
  const std::vector<std::string> patterns = {"a", "ab", "abc", "ccc", "bab", "ab"};
  std::vector<std::string> reversed;
  for (const std::string& p : patterns) reversed.emplace_back(p.rbegin(), p.rend());
  const lib::detail::ByteAutomaton a = lib::detail::build_byte_automaton(
      std::vector<std::string_view>(reversed.begin(), reversed.end()), {1u << 20, 1u << 20}, "find");
  const uint32_t chunks = (kElements - 1) / shape.chunk + 1;
  const Dim3 grid{groups(chunks, shape.workgroup), 1, 1};
  Inputs automaton;
  automaton.set<uint8_t>("haystack", haystack)
      .set<uint32_t>("byte_class", std::vector<uint32_t>(a.byte_class.begin(), a.byte_class.end()))
      .set<uint32_t>("next", a.next)
      .set<uint32_t>("starts", a.starts)
      .set<uint32_t>("params", {a.longest, a.classes});
  Inputs count_in = automaton;
  count_in.size("counts", 2 * chunks);
  const CheckedProgram count = lib::find_count_pass(shape);
  const std::vector<uint32_t> counts = reference::run(count, count_in, {}, grid).get<uint32_t>("counts");
  out.push_back({"find_count", count, count_in, grid, {}});
  const std::vector<uint32_t> offsets = exclusive_sum(counts);
  const uint32_t positions = offsets[chunks];
  const uint32_t matches = offsets.back() + counts.back() - positions;
  Inputs write_in = automaton;
  write_in.set<uint32_t>("counts", counts).set<uint32_t>("offsets", offsets);
  write_in.size("event_position", positions).size("event_first", positions).size("event_from", positions);
  const CheckedProgram write = lib::find_write_pass(shape);
  const Outputs events = reference::run(write, write_in, {}, grid);
  out.push_back({"find_write", write, write_in, grid, {}});
  Inputs expand_in;
  expand_in.set<uint32_t>("event_position", events.get<uint32_t>("event_position"))
      .set<uint32_t>("event_first", events.get<uint32_t>("event_first"))
      .set<uint32_t>("event_from", events.get<uint32_t>("event_from"))
      .set<uint32_t>("list", a.list)
      .size("pattern", matches)
      .size("position", matches);
  out.push_back({"find_expand", lib::find_expand_pass(shape.workgroup), expand_in,
                 {groups(matches, shape.workgroup), 1, 1}, {}});
}

// The matrix primitives: one dispatch each, on shapes with partial tiles.
void matrix_cases(std::vector<LibPassCase>& out) {
  {
    const lib::MatmulShape shape{32, 32, 8, 4, 4};
    const uint32_t m = 45, n = 70, k = 37;
    // Small integers: every product and sum exact, so a fused multiply-add
    // (which WGSL allows) gives the same bits (the bound on rounded sums is
    // lib_matmul_test's).
    const auto small = [](size_t count, uint32_t seed) {
      std::vector<float> v(count);
      const std::vector<uint32_t> w = random_words(count, seed);
      for (size_t i = 0; i < count; ++i) v[i] = static_cast<float>(w[i] % 17) - 8;
      return v;
    };
    Inputs in;
    in.set<float>("a", small(size_t{m} * k, 13)).set<float>("b", small(size_t{k} * n, 14));
    in.set<uint32_t>("dims", {m, n, k}).size("c", m * n);
    const uint32_t g = groups(m, shape.tile_m) * groups(n, shape.tile_n);
    out.push_back({"matmul/32x32x8_4x4", lib::matmul_pass(shape), in, {g, 1, 1}, {}});
  }
  {
    const lib::TransposeShape shape{16, 4};
    const uint32_t rows = 37, cols = 50;
    for (ScalarType type : {ScalarType::F32, ScalarType::U8}) {
      const std::vector<uint32_t> words = random_words(size_t{rows} * cols, 15);
      Inputs in;
      in.bytes("x", std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(words.data()),
                                         reinterpret_cast<const uint8_t*>(words.data()) + rows * cols * element_bytes(type)));
      in.set<uint32_t>("dims", {rows, cols}).size("out", rows * cols);
      out.push_back({"transpose/" + std::string(to_string(type)), lib::transpose_pass(type, shape), in,
                     {groups(rows, shape.tile) * groups(cols, shape.tile), 1, 1}, {}});
    }
  }
  {
    const lib::SoftmaxShape shape{64, 16};
    const uint32_t rows = 21, cols = 300;
    std::vector<float> x = random_floats(size_t{rows} * cols, 16);
    x[5] = -INFINITY, x[cols + 7] = NAN;  // a -inf gives 0; a NaN row is NaN
    Inputs in;
    in.set<float>("x", x).set<uint32_t>("dims", {rows, cols}).size("out", rows * cols);
    // exp is within WGSL's bound, not bit-equal across implementations.
    out.push_back({"softmax/64_16", lib::softmax_pass(shape), in, {groups(rows, shape.workgroup / shape.lanes), 1, 1},
                   {{"out", 64}}});
  }
}

// In units in the last place; a subnormal counts as zero, since WGSL lets an
// implementation flush them.
uint32_t ulp_distance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : UINT32_MAX;
  if (std::fpclassify(a) == FP_SUBNORMAL) a = 0;
  if (std::fpclassify(b) == FP_SUBNORMAL) b = 0;
  const auto ordered = [](float x) {
    const auto bits = std::bit_cast<int32_t>(x);
    return bits < 0 ? int64_t{INT32_MIN} - bits : int64_t{bits};
  };
  const int64_t d = ordered(a) - ordered(b);
  return static_cast<uint32_t>(std::min<int64_t>(d < 0 ? -d : d, UINT32_MAX));
}

}  // namespace

std::vector<LibPassCase> lib_pass_cases() {
  std::vector<LibPassCase> out;
  reduce_and_scan_cases(out);
  sort_cases(out);
  bincount_cases(out);
  compact_cases(out);
  histogram_cases(out);
  find_cases(out);
  matrix_cases(out);
  return out;
}

bool lib_pass_output_agrees(const LibPassCase& c, const std::string& buffer, const std::vector<uint8_t>& got,
                            const std::vector<uint8_t>& want, std::string& why) {
  if (got.size() < want.size()) {
    why = buffer + ": " + std::to_string(got.size()) + " bytes, the reference " + std::to_string(want.size());
    return false;
  }
  const auto tolerance = c.ulps.find(buffer);
  for (size_t i = 0; i < want.size(); i += 4) {
    const size_t n = std::min<size_t>(4, want.size() - i);
    if (std::memcmp(got.data() + i, want.data() + i, n) == 0) continue;
    if (tolerance != c.ulps.end() && n == 4) {
      float a = 0, b = 0;
      std::memcpy(&a, got.data() + i, 4);
      std::memcpy(&b, want.data() + i, 4);
      if (ulp_distance(a, b) <= tolerance->second) continue;
    }
    uint32_t a = 0, b = 0;
    std::memcpy(&a, got.data() + i, n);
    std::memcpy(&b, want.data() + i, n);
    why = buffer + " word " + std::to_string(i / 4) + ": " + std::to_string(a) + ", the reference's " + std::to_string(b);
    return false;
  }
  return true;
}

}  // namespace vyre::test
