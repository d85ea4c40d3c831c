#include "vyre/lib/softmax.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <string>

#include "gpu/kept_pipeline.hpp"
#include "kernels/combine.hpp"
#include "kernels/passes.hpp"
#include "kernels/program_memo.hpp"
#include "kernels/shape_tuning.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"

namespace vyre::lib {
namespace {

using namespace vyre::build;

// WebGPU's promise of invocations per workgroup.
constexpr uint32_t kMaxInvocations = 256;
// The lanes a row may take: tuning times these, and the default is one.
constexpr std::array kLaneChoices{1u, 4u, 16u, 64u, 256u};
// The most elements an invocation takes in the default shape: on a GPU few,
// so that a row's lanes share it; on lavapipe, where a workgroup is one
// thread and its barriers and tree cost more than a long loop, many (one
// invocation a row was 1.5 to 3 times the fastest for rows of up to 1,000),
// but few enough that the three loops over them stay far below llvmpipe's
// 65,535 loop iterations an invocation.
constexpr uint32_t kGpuItems = 16;  // the H200: 1,024 columns ran fastest with 64 lanes, 16 elements each
constexpr uint32_t kCpuItems = 2048;

void check(const SoftmaxShape& s) {
  const std::string what =
      "softmax: shape workgroup " + std::to_string(s.workgroup) + " lanes " + std::to_string(s.lanes) + ": ";
  if (s.workgroup == 0 || s.workgroup > kMaxInvocations || !std::has_single_bit(s.workgroup))
    throw Error(ErrorKind::invalid_input, what + "the workgroup is a power of two from 1 to 256 (what WebGPU promises)");
  if (s.lanes == 0 || s.lanes > s.workgroup || !std::has_single_bit(s.lanes))
    throw Error(ErrorKind::invalid_input, what + "lanes is a power of two from 1 to the workgroup");
}

Expr is_nan(const Expr& x) {
  return gt(bit_and(bitcast(ScalarType::U32, x), u32(0x7fffffffu)), u32(0x7f800000u));
}

// exp(d), with NaN and -inf decided on the bits: WGSL lets a device assume
// that no operand is NaN or infinite and give any value then (lavapipe keeps
// IEEE's, exp(NaN) = NaN and exp(-inf) = 0, but a GPU need not). NaN stays
// NaN; d <= -104, -inf included, gives 0, what exp rounds to there
// (exp(-104) < 2^-150). For a negative f32, a larger magnitude is a larger
// u32, so the test is one unsigned comparison of the bits.
Expr exp_of(const Expr& d) {
  constexpr uint32_t kMinus104 = 0xc2d00000u;  // the bits of -104.0f
  const Expr bits = bitcast(ScalarType::U32, d);
  return select(is_nan(d), f32_bits(0x7fc00000u), select(ge(bits, u32(kMinus104)), f32(0.0f), unary(Op::Exp, d)));
}

// The tree over one row's `lanes` partials in workgroup buffer `part`, left
// in the row's first: stride lanes/2, lanes/4, ..., 1.
void reduce_lanes(std::vector<Stmt>& body, uint32_t lanes, ReduceOp op) {
  for (uint32_t stride = lanes / 2; stride > 0; stride /= 2) {
    body.push_back(if_(lt(var("lane"), u32(stride)),
                       {store("part", var("l"),
                              detail::combine(ScalarType::F32, op, load("part", var("l")),
                                              load("part", add(var("l"), u32(stride)))))}));
    body.push_back(barrier());
  }
}

// A loop over the row's elements of this invocation: lane, lane + lanes, ...
Stmt over_row(uint32_t lanes, std::vector<Stmt> body) {
  return if_(var("live"), {loop("c", var("lane"), var("cols"), u32(lanes), std::move(body))});
}

Expr element() { return load("x", add(var("base"), var("c"))); }

CheckedProgram build_pass(const std::string& name, const SoftmaxShape& s) {
  const uint32_t lanes = s.lanes;
  const uint32_t rows_per_group = s.workgroup / lanes;
  std::vector<Stmt> body = {
      let("l", lid()),
      let("lane", bit_and(var("l"), u32(lanes - 1))),
      let("first", sub(var("l"), var("lane"))),  // the row's first invocation
      let("g", add(wid(), mul(wid(Axis::Y), nwg()))),
      let("rows", load("dims", u32(0))),
      let("cols", load("dims", u32(1))),
      let("row", add(mul(var("g"), u32(rows_per_group)), div(var("l"), u32(lanes)))),
      // A workgroup past the last row still reaches every barrier.
      let("live", lt(var("row"), var("rows"))),
      let("base", mul(var("row"), var("cols"))),
      // The maximum, NaN when any element is (decided on the bits).
      let("top", f32(-std::numeric_limits<float>::infinity())),
      over_row(lanes, {assign("top", detail::combine(ScalarType::F32, ReduceOp::Max, var("top"), element()))}),
      store("part", var("l"), var("top")),
      barrier(),
  };
  reduce_lanes(body, lanes, ReduceOp::Max);
  body.push_back(let("m", load("part", var("first"))));
  body.push_back(barrier());  // every invocation has its row's maximum before `part` is reused
  body.push_back(let("total", f32(0.0f)));
  body.push_back(over_row(lanes, {assign("total", add(var("total"), exp_of(sub(element(), var("m")))))}));
  body.push_back(store("part", var("l"), var("total")));
  body.push_back(barrier());
  reduce_lanes(body, lanes, ReduceOp::Sum);
  body.push_back(let("sum", load("part", var("first"))));
  body.push_back(over_row(
      lanes, {store("out", add(var("base"), var("c")), div(exp_of(sub(element(), var("m"))), var("sum")))}));
  return ProgramBuilder(name)
      .workgroup_size(s.workgroup)
      .input("x", 0, ScalarType::F32)
      .input("dims", 1, ScalarType::U32, 2)
      .output("out", 2, ScalarType::F32)
      .workgroup_buffer("part", ScalarType::F32, s.workgroup)
      .body(std::move(body))
      .build();
}

const CheckedProgram& checked_pass(const SoftmaxShape& s) {
  check(s);
  const std::string name = "softmax_f32_w" + std::to_string(s.workgroup) + "_l" + std::to_string(s.lanes);
  return detail::memo_program(name, [&] { return build_pass(name, s); });
}

detail::ShapeValues values_of(const SoftmaxShape& s) { return {{"workgroup", s.workgroup}, {"lanes", s.lanes}}; }
SoftmaxShape shape_of(const detail::ShapeValues& v) { return {v.at(0).second, v.at(1).second}; }

std::shared_ptr<gpu::DeviceBuffer> softmax_with(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& x,
                                                uint32_t rows, uint32_t cols, const SoftmaxShape& s) {
  gpu::Pipeline pipeline = gpu::detail::kept_pipeline(backend, checked_pass(s));
  const uint32_t rows_per_group = s.workgroup / s.lanes;
  const auto groups = static_cast<uint32_t>((uint64_t{rows} + rows_per_group - 1) / rows_per_group);
  gpu::Batch batch(backend);
  detail::Pass pass;
  pass.inputs.device("x", x).set<uint32_t>("dims", {rows, cols}).size("out", rows * cols);
  pass.outputs = batch.dispatch_resident(pipeline, pass.inputs, detail::grid_for(groups));
  batch.run();
  return pass.outputs.get("out");
}

detail::TunableFamily family_of(const gpu::Backend& backend, uint32_t rows, uint32_t cols) {
  using detail::log2_ceil;
  detail::TunableFamily family{"softmax f32",
                               "rows 2^" + std::to_string(log2_ceil(rows)) + " cols 2^" + std::to_string(log2_ceil(cols)),
                               {},
                               values_of(default_softmax_shape(backend, cols))};
  for (const SoftmaxShape& s : softmax_candidates(cols)) family.candidates.push_back(values_of(s));
  return family;
}

void check_length(uint64_t elements, uint32_t rows, uint32_t cols) {
  if (elements != uint64_t{rows} * cols)
    throw Error(ErrorKind::invalid_input, "softmax: " + std::to_string(elements) + " elements, but rows = " +
                                              std::to_string(rows) + " and cols = " + std::to_string(cols) +
                                              " need rows * cols = " + std::to_string(uint64_t{rows} * cols));
}

// The fewest lanes of kLaneChoices that leave each at most `items` elements.
uint32_t lanes_for(uint32_t cols, uint32_t items) {
  for (const uint32_t lanes : kLaneChoices)
    if (uint64_t{lanes} * items >= cols) return lanes;
  return kLaneChoices.back();
}

}  // namespace

std::vector<SoftmaxShape> softmax_candidates(uint32_t cols) {
  std::vector<SoftmaxShape> out;
  const uint64_t useful = std::bit_ceil(uint64_t{std::max(cols, 1u)});  // more lanes than elements idle
  for (const uint32_t workgroup : {64u, 256u})
    for (const uint32_t lanes : kLaneChoices)
      if (lanes <= workgroup && lanes <= useful) out.push_back({workgroup, lanes});
  return out;
}

SoftmaxShape default_softmax_shape(const gpu::Backend& backend, uint32_t cols) {
  // Measured on lavapipe and the H200 (docs/lib.md, "softmax").
  if (detail::device_class(backend) == "cpu") return {64, lanes_for(cols, kCpuItems)};
  return {256, lanes_for(cols, kGpuItems)};
}

Program softmax_pass(const SoftmaxShape& shape) { return checked_pass(shape).program(); }

std::shared_ptr<gpu::DeviceBuffer> softmax(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& x,
                                           uint32_t rows, uint32_t cols, const std::optional<SoftmaxShape>& shape,
                                           const Options& options) {
  if (!x) throw Error(ErrorKind::invalid_input, "softmax: the buffer is null");
  if (x->type() != ScalarType::F32)
    throw Error(ErrorKind::invalid_input, "softmax takes f32 elements, not " + std::string(vyre::to_string(x->type())) +
                                              ": convert to f32 first");
  check_length(x->elements(), rows, cols);
  if (shape) check(*shape);
  if (x->elements() == 0) return backend.upload(std::span<const float>{});
  const SoftmaxShape chosen = detail::choose<SoftmaxShape>(
      backend, shape, family_of(backend, rows, cols), options, values_of, shape_of,
      [&](const SoftmaxShape& s) { (void)softmax_with(backend, x, rows, cols, s); });
  return softmax_with(backend, x, rows, cols, chosen);
}

std::vector<float> softmax(gpu::Backend& backend, std::span<const float> x, uint32_t rows, uint32_t cols,
                           const std::optional<SoftmaxShape>& shape, const Options& options) {
  check_length(x.size(), rows, cols);
  if (shape) check(*shape);
  if (x.empty()) return {};
  return softmax(backend, backend.upload(x), rows, cols, shape, options)->read_as<float>();
}

}  // namespace vyre::lib
