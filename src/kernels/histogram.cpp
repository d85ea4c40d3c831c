#include "vyre/lib/histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

#include "gpu/kept_pipeline.hpp"
#include "kernels/bin_counts.hpp"
#include "kernels/combine.hpp"
#include "kernels/passes.hpp"
#include "kernels/program_memo.hpp"
#include "kernels/shape_tuning.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"

namespace vyre::lib {
namespace {

using namespace vyre::build;

constexpr uint32_t kSignBit = 0x80000000u;
constexpr uint32_t kAbsMask = 0x7fffffffu;
constexpr uint32_t kInfinityBits = 0x7f800000u;

std::string type_name(ScalarType type) { return std::string(vyre::to_string(type)); }

bool is_histogram_type(ScalarType type) {
  switch (type) {
    case ScalarType::U32: case ScalarType::I32: case ScalarType::F32:
    case ScalarType::U8: case ScalarType::U16: case ScalarType::I8: case ScalarType::I16:
      return true;
    default:
      return false;
  }
}

// The type of the thresholds and of the keys compared with them.
ScalarType key_type(ScalarType type) { return value_type(type) == ScalarType::I32 ? ScalarType::I32 : ScalarType::U32; }

void check(ScalarType type, uint32_t bins, const ReduceShape& shape) {
  if (!is_histogram_type(type))
    throw Error(ErrorKind::invalid_input,
                "histogram takes u32, i32, f32, u8, u16, i8 or i16 values, not " + type_name(type));
  if (bins == 0) throw Error(ErrorKind::invalid_input, "histogram needs at least one bin");
  detail::check_shape("histogram", ScalarType::U32, shape, 0);
}

// An f32 as a u32 of the same order (as sort orders its keys), -0.0
// taken as +0.0, as IEEE comparisons take it. NaN has no key.
uint32_t f32_key(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if (bits == kSignBit) bits = 0;
  return (bits & kSignBit) != 0 ? ~bits : bits | kSignBit;
}

Expr f32_key(const Expr& bits) {
  const Expr unsigned_zero = select(eq(bits, u32(kSignBit)), u32(0), bits);
  return select(ne(bit_and(unsigned_zero, u32(kSignBit)), u32(0)), bit_not(unsigned_zero),
                bit_or(unsigned_zero, u32(kSignBit)));
}

// The bin of element i: a binary search for the last of the m thresholds
// edges[0..m) at most the value's key, whose bin that is; `bins` for a value
// below edges[0], above edges[m] (the largest kept) or NaN. The m <= bins
// thresholds need at most ceil(log2(bins)) halvings.
std::vector<Stmt> bin_of(ScalarType type, uint32_t bins) {
  std::vector<Stmt> out;
  Expr keep = boolean(true);
  if (type == ScalarType::F32) {
    out.push_back(let("x", bitcast(ScalarType::U32, load("values", var("i")))));
    out.push_back(let("v", f32_key(var("x"))));
    keep = le(bit_and(var("x"), u32(kAbsMask)), u32(kInfinityBits));
  } else {
    out.push_back(let("v", load("values", var("i"))));
  }
  out.push_back(let("top", sub(len("edges"), u32(1))));
  out.push_back(let("b", u32(bins)));
  std::vector<Stmt> search = {let("lo", u32(0)), let("hi", var("top"))};
  search.push_back(loop("step", u32(0), u32(detail::log2_ceil(bins)),
                        {if_(gt(sub(var("hi"), var("lo")), u32(1)),
                             {let("mid", shr(add(var("lo"), var("hi")), u32(1))),
                              if_(le(load("edges", var("mid")), var("v")), {assign("lo", var("mid"))},
                                  {assign("hi", var("mid"))})})}));
  search.push_back(assign("b", var("lo")));
  keep = land(std::move(keep), land(ge(var("v"), load("edges", u32(0))), le(var("v"), load("edges", var("top")))));
  out.push_back(if_(std::move(keep), std::move(search)));
  return out;
}

CheckedProgram build_pass(const std::string& name, ScalarType type, uint32_t bins, const ReduceShape& shape) {
  ProgramBuilder builder(name);
  builder.workgroup_size(shape.workgroup)
      .input("values", 0, type)
      .input("edges", 1, key_type(type))
      .output("counts", 2, ScalarType::U32)
      .output("outside", 3, ScalarType::U32);
  detail::declare_bin_memory(builder, bins);
  return builder.body(detail::count_into_bins(bins, shape, [&] { return bin_of(type, bins); })).build();
}

const CheckedProgram& checked_pass(ScalarType type, uint32_t bins, const ReduceShape& shape) {
  check(type, bins, shape);
  const std::string name = "histogram_" + type_name(type) + "_b" + std::to_string(bins) + "_w" +
                           std::to_string(shape.workgroup) + "_i" + std::to_string(shape.items);
  return detail::memo_program(name, [&] { return build_pass(name, type, bins, shape); });
}

std::string number(double v) {
  std::ostringstream out;
  out.precision(17);
  out << v;
  return out.str();
}

// The edges as NumPy compares them with values of `type`: for f32, the f64
// edges rounded to f32, which must still increase (NumPy 2 refuses them
// otherwise too); for integers the f64 edges themselves.
std::vector<double> compared_edges(ScalarType type, uint32_t bins, double lo, double hi) {
  std::vector<double> edges = histogram_edges(bins, lo, hi);
  if (type == ScalarType::F32) {
    for (double& e : edges) {
      if (std::fabs(e) > std::numeric_limits<float>::max())
        throw Error(ErrorKind::invalid_input, "histogram: the range [" + number(lo) + ", " + number(hi) +
                                                  "] is beyond f32's, the values' type");
      e = static_cast<float>(e);
    }
  }
  for (size_t i = 1; i < edges.size(); ++i)
    if (!(edges[i - 1] < edges[i]))
      throw Error(ErrorKind::invalid_input,
                  "histogram: " + std::to_string(bins) + " bins over [" + number(lo) + ", " + number(hi) +
                      "] are not all of a nonzero width in " + (type == ScalarType::F32 ? "f32" : "f64") +
                      " (NumPy: too many bins for data range): give fewer bins or a wider range");
  return edges;
}

// The thresholds of the pass (histogram_pass): the key of the least value of
// `type` at or above each edge but the last (one no value reaches ends the
// list, and those after it), then the key of the greatest value at or below
// the last edge. Empty when no value of the type lies within the edges.
template <class Key>
std::vector<Key> thresholds_from(const std::vector<double>& edges, const std::function<std::optional<Key>(double)>& at_or_above,
                                 const std::function<std::optional<Key>(double)>& at_or_below) {
  const std::optional<Key> first = at_or_above(edges.front());
  const std::optional<Key> last = at_or_below(edges.back());
  if (!first || !last || *first > *last) return {};
  std::vector<Key> out = {*first};
  for (size_t i = 1; i + 1 < edges.size(); ++i) {
    const std::optional<Key> t = at_or_above(edges[i]);
    if (!t || *t > *last) break;
    out.push_back(std::max(*t, *first));
  }
  out.push_back(*last);
  return out;
}

std::pair<int64_t, int64_t> integer_range(ScalarType type) {
  switch (type) {
    case ScalarType::U8: return {0, UINT8_MAX};
    case ScalarType::U16: return {0, UINT16_MAX};
    case ScalarType::U32: return {0, UINT32_MAX};
    case ScalarType::I8: return {INT8_MIN, INT8_MAX};
    case ScalarType::I16: return {INT16_MIN, INT16_MAX};
    default: return {INT32_MIN, INT32_MAX};
  }
}

// The least f32 at or above `e` (not NaN).
float f32_at_or_above(double e) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr double kLargest = std::numeric_limits<float>::max();
  if (e > kLargest) return kInf;
  if (e < -kLargest) return e == -std::numeric_limits<double>::infinity() ? -kInf : -std::numeric_limits<float>::max();
  float f = static_cast<float>(e);
  if (static_cast<double>(f) < e) f = std::nextafter(f, kInf);
  return f;
}

// The thresholds' bytes for `edges` compared exactly with values of `type`.
std::vector<uint8_t> thresholds(ScalarType type, const std::vector<double>& edges) {
  std::vector<uint32_t> words;
  if (type == ScalarType::F32) {
    const auto at_or_above = [](double e) -> std::optional<uint32_t> { return f32_key(f32_at_or_above(e)); };
    const auto at_or_below = [](double e) -> std::optional<uint32_t> { return f32_key(-f32_at_or_above(-e)); };
    words = thresholds_from<uint32_t>(edges, at_or_above, at_or_below);
  } else {
    const auto [low, high] = integer_range(type);
    const auto at_or_above = [&, low = low, high = high](double e) -> std::optional<int64_t> {
      const double c = std::ceil(e);
      if (c > static_cast<double>(high)) return std::nullopt;
      return c < static_cast<double>(low) ? low : static_cast<int64_t>(c);
    };
    const auto at_or_below = [&, low = low, high = high](double e) -> std::optional<int64_t> {
      const double f = std::floor(e);
      if (f < static_cast<double>(low)) return std::nullopt;
      return f > static_cast<double>(high) ? high : static_cast<int64_t>(f);
    };
    for (int64_t t : thresholds_from<int64_t>(edges, at_or_above, at_or_below))
      words.push_back(static_cast<uint32_t>(t));  // an i32's bits for signed types
  }
  std::vector<uint8_t> bytes(words.size() * sizeof(uint32_t));
  if (!words.empty()) std::memcpy(bytes.data(), words.data(), bytes.size());
  return bytes;
}

// One call with one shape: one dispatch, run and waited for.
DeviceHistogram count_with(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& values, uint32_t bins,
                           const std::vector<uint8_t>& edges, const ReduceShape& shape) {
  gpu::Pipeline pipeline = gpu::detail::kept_pipeline(backend, checked_pass(values->type(), bins, shape));
  const uint32_t groups = detail::groups_for(values->elements(), shape);
  Inputs in;
  in.device("values", values).bytes("edges", edges).size("counts", bins).size("outside", 1);
  gpu::Batch batch(backend);
  const gpu::DeviceOutputs out = batch.dispatch_resident(pipeline, in, detail::grid_for(groups));
  batch.run();
  return {out.get("counts"), out.get("outside")};
}

detail::TunableFamily family_of(const gpu::Backend& backend, ScalarType type, uint32_t bins, uint64_t elements) {
  return {"histogram " + type_name(type) + " 2^" + std::to_string(detail::log2_ceil(bins)) + " bins",
          detail::size_class_of(elements),
          detail::span_candidates(
              [&](const ReduceShape& s) { return detail::accepted([&] { check(type, bins, s); }); }),
          // The H200's choice for 256 bins of 2^28 f32 (twice: 256 x 32, 512
          // x 16 within 2 %); elsewhere bincount's, not measured.
          detail::values_of(detail::device_class(backend) == "nvidia" ? ReduceShape{256, 32} : ReduceShape{256, 4})};
}

DeviceHistogram count(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& values,
                      const std::vector<double>& edges, const std::optional<ReduceShape>& shape,
                      const Options& options) {
  const ScalarType type = values->type();
  const auto bins = static_cast<uint32_t>(edges.size() - 1);
  const uint32_t n = values->elements();
  const std::vector<uint8_t> keys = thresholds(type, edges);
  // Nothing to count, or no value of the type within the edges.
  if (n == 0 || keys.empty())
    return {backend.upload(std::vector<uint32_t>(bins, 0)), backend.upload(std::vector<uint32_t>{n})};
  const ReduceShape chosen = detail::choose<ReduceShape>(
      backend, shape, family_of(backend, type, bins, n), options, detail::values_of, detail::reduce_shape_of,
      [&](const ReduceShape& s) { (void)count_with(backend, values, bins, keys, s); });
  return count_with(backend, values, bins, keys, chosen);
}

void check_values(const std::shared_ptr<gpu::DeviceBuffer>& values) {
  if (!values) throw Error(ErrorKind::invalid_input, "histogram: the buffer is null");
}

std::vector<double> checked_edges(std::span<const double> edges) {
  if (edges.size() < 2)
    throw Error(ErrorKind::invalid_input,
                "histogram needs at least two edges (one bin), not " + std::to_string(edges.size()));
  if (edges.size() - 1 > UINT32_MAX) throw Error(ErrorKind::limit_exceeded, "histogram: more than 2^32 - 1 bins");
  for (size_t i = 0; i < edges.size(); ++i) {
    if (std::isnan(edges[i]))
      throw Error(ErrorKind::invalid_input, "histogram: edge " + std::to_string(i) + " is NaN");
    if (i > 0 && edges[i] < edges[i - 1])
      throw Error(ErrorKind::invalid_input, "histogram: the edges must not decrease, but edge " + std::to_string(i) +
                                                " (" + number(edges[i]) + ") is below edge " + std::to_string(i - 1) +
                                                " (" + number(edges[i - 1]) + ")");
  }
  return {edges.begin(), edges.end()};
}

Histogram read(const DeviceHistogram& h) {
  return {h.counts->read_as<uint32_t>(), h.outside->read_as<uint32_t>().at(0)};
}

}  // namespace

std::vector<double> histogram_edges(uint32_t bins, double lo, double hi) {
  if (bins == 0) throw Error(ErrorKind::invalid_input, "histogram needs at least one bin");
  if (!std::isfinite(lo) || !std::isfinite(hi))
    throw Error(ErrorKind::invalid_input,
                "histogram: the range [" + number(lo) + ", " + number(hi) + "] is not finite (NumPy refuses it too)");
  if (lo > hi)
    throw Error(ErrorKind::invalid_input,
                "histogram: the range's low end " + number(lo) + " is above its high end " + number(hi));
  // NumPy widens an empty range by a half on each side.
  if (lo == hi) {
    lo -= 0.5;
    hi += 0.5;
  }
  const double delta = hi - lo;
  if (!std::isfinite(delta))
    throw Error(ErrorKind::invalid_input, "histogram: the range [" + number(lo) + ", " + number(hi) + "] is wider than f64 holds");
  // numpy.linspace: i * step + lo, each step rounded (no fused multiply-add);
  // a step that underflows to 0 gives (i / bins) * delta instead.
  const double div = bins;
  const double step = delta / div;
  std::vector<double> edges(size_t{bins} + 1);
  for (size_t i = 0; i <= bins; ++i) {
    double y = static_cast<double>(i);
    if (step == 0) {
      y = y / div;
      y = y * delta;
    } else {
      y = y * step;
    }
    edges[i] = y + lo;
  }
  edges.back() = hi;
  return edges;
}

Program histogram_pass(ScalarType type, uint32_t bins, const ReduceShape& shape) {
  return checked_pass(type, bins, shape).program();
}

DeviceHistogram histogram(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& values, uint32_t bins,
                          double lo, double hi, const std::optional<ReduceShape>& shape, const Options& options) {
  check_values(values);
  check(values->type(), bins, shape.value_or(ReduceShape{}));
  return count(backend, values, compared_edges(values->type(), bins, lo, hi), shape, options);
}

DeviceHistogram histogram(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& values,
                          std::span<const double> edges, const std::optional<ReduceShape>& shape,
                          const Options& options) {
  check_values(values);
  std::vector<double> checked = checked_edges(edges);
  check(values->type(), static_cast<uint32_t>(checked.size() - 1), shape.value_or(ReduceShape{}));
  return count(backend, values, checked, shape, options);
}

Histogram histogram_bytes(gpu::Backend& backend, std::span<const uint8_t> bytes, ScalarType type, uint32_t bins,
                          double lo, double hi, const std::optional<ReduceShape>& shape, const Options& options) {
  check(type, bins, shape.value_or(ReduceShape{}));
  const std::vector<double> edges = compared_edges(type, bins, lo, hi);
  if (detail::element_count("histogram", bytes.size(), type) == 0) return {std::vector<uint32_t>(bins, 0), 0};
  return read(count(backend, backend.upload(bytes, type), edges, shape, options));
}

Histogram histogram_bytes(gpu::Backend& backend, std::span<const uint8_t> bytes, ScalarType type,
                          std::span<const double> edges, const std::optional<ReduceShape>& shape,
                          const Options& options) {
  const std::vector<double> checked = checked_edges(edges);
  const auto bins = static_cast<uint32_t>(checked.size() - 1);
  check(type, bins, shape.value_or(ReduceShape{}));
  if (detail::element_count("histogram", bytes.size(), type) == 0) return {std::vector<uint32_t>(bins, 0), 0};
  return read(count(backend, backend.upload(bytes, type), checked, shape, options));
}

}  // namespace vyre::lib
