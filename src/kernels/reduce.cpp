#include "vyre/lib/reduce.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <deque>
#include <string>

#include "gpu/kept_pipeline.hpp"
#include "kernels/combine.hpp"
#include "kernels/passes.hpp"
#include "kernels/program_memo.hpp"
#include "util/concat.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"

namespace vyre::lib {
namespace {

using namespace vyre::build;
using detail::combine;
using detail::identity;

constexpr std::array kOpNames{"sum", "min", "max", "and", "or", "xor"};

void check(ScalarType type, ReduceOp op, const ReduceShape& shape) {
  detail::check_type_and_op("reduce", type, op);
  detail::check_shape("reduce", accumulator_type(type), shape, 0);
}

// The reduction of zero elements: the identity, but +0 for a sum (NumPy's,
// not the -0.0 a float pass starts from); min and max have none.
std::vector<uint8_t> empty_reduction(ScalarType type, ReduceOp op) {
  if (op == ReduceOp::Min || op == ReduceOp::Max)
    throw Error(ErrorKind::invalid_input,
                "reduce " + std::string(to_string(op)) + " of zero elements has no value (NumPy refuses it too)");
  const ScalarType acc = accumulator_type(type);
  const uint64_t bits = op == ReduceOp::Sum ? 0 : detail::identity_bits(acc, op);
  std::vector<uint8_t> one(element_bytes(acc));
  for (size_t k = 0; k < one.size(); ++k) one[k] = static_cast<uint8_t>(bits >> (8 * k));
  return one;
}

}  // namespace

std::string_view to_string(ReduceOp op) { return kOpNames.at(static_cast<size_t>(op)); }

ScalarType accumulator_type(ScalarType element) {
  switch (element) {
    case ScalarType::U8:
    case ScalarType::U16:
    case ScalarType::Bool: return ScalarType::U32;
    case ScalarType::I8:
    case ScalarType::I16: return ScalarType::I32;
    case ScalarType::F16: return ScalarType::F32;
    default: return element;
  }
}

std::optional<ReduceOp> reduce_op_from_string(std::string_view name) {
  for (size_t i = 0; i < kOpNames.size(); ++i)
    if (name == kOpNames[i]) return static_cast<ReduceOp>(i);
  return std::nullopt;
}

namespace {

std::atomic<bool> g_unrolled_loads{true};
// Adds the elements `base + k*W + l` of `in`, k = 0 .. I-1, in k's order, to
// "acc", those past the end not at all. Unrolled: the I loads first, each at
// its index clamped into the input (no branch between them, so all can be in
// flight at once), then the additions, an element past the end adding the
// identity, which leaves the sum's bits as they were. Looped: one checked
// load and addition at a time (2026-12-04's form). The same result.
std::vector<Stmt> add_span(ScalarType type, ReduceOp op, const ReduceShape& shape) {
  const uint32_t w = shape.workgroup;
  const ScalarType acc = accumulator_type(type);
  if (!g_unrolled_loads.load()) {
    return {loop("k", u32(0), u32(shape.items),
                 {let("i", add(var("base"), add(mul(var("k"), u32(w)), var("l")))),
                  if_(lt(var("i"), len("in")),
                      {assign("acc", combine(acc, op, var("acc"), detail::widened(type, load("in", var("i")))))})})};
  }
  std::vector<Stmt> out = {let("last", sub(len("in"), u32(1)))};
  for (uint32_t k = 0; k < shape.items; ++k) {
    const std::string i = numbered("i", k), x = numbered("x", k);
    out.push_back(let(i, add(var("base"), u32(k * w))));
    out.push_back(let(x, detail::widened(type, load("in", min(add(var(i), var("l")), var("last"))))));
  }
  for (uint32_t k = 0; k < shape.items; ++k) {
    const std::string i = numbered("i", k), x = numbered("x", k);
    out.push_back(assign("acc", combine(acc, op, var("acc"),
                                        select(lt(add(var(i), var("l")), len("in")), var(x), identity(acc, op)))));
  }
  return out;
}

CheckedProgram build_pass(const std::string& name, ScalarType type, ReduceOp op, const ReduceShape& shape) {
  const uint32_t w = shape.workgroup;
  const ScalarType acc = accumulator_type(type);
  std::vector<Stmt> body = {
      let("l", lid()),
      let("g", add(wid(), mul(wid(Axis::Y), nwg()))),
      let("base", mul(var("g"), u32(w * shape.items))),
      let("acc", identity(acc, op)),
  };
  // Element k*W + l of the group's span: neighbouring invocations read
  // neighbouring elements.
  for (Stmt& stmt : add_span(type, op, shape)) body.push_back(std::move(stmt));
  body.push_back(store("partial", var("l"), var("acc")));
  body.push_back(barrier());
  // A tree over the workgroup's partials, unrolled: stride W/2, W/4, ..., 1.
  for (uint32_t stride = w / 2; stride > 0; stride /= 2) {
    body.push_back(if_(lt(var("l"), u32(stride)),
                       {store("partial", var("l"),
                              combine(acc, op, load("partial", var("l")), load("partial", add(var("l"), u32(stride)))))}));
    body.push_back(barrier());
  }
  // A two-axis grid has workgroups past the last span: they must not store,
  // since an index out of range is clamped to the last element on the GPU.
  body.push_back(if_(land(eq(var("l"), u32(0)), lt(var("g"), len("out"))), {store("out", var("g"), load("partial", u32(0)))}));
  return ProgramBuilder(name)
      .workgroup_size(w)
      .input("in", 0, type)
      .output("out", 1, acc)
      .workgroup_buffer("partial", acc, w)
      .body(std::move(body))
      .build();
}

// A call's first pass: reduce_pass's order over as many spans as there
// are workgroups, and then round after round, each workgroup taking the span
// as many spans further on as there are workgroups (its grid is one row).
// With as many workgroups as spans it runs one round: reduce_pass's result.
CheckedProgram build_strided_pass(const std::string& name, ScalarType type, ReduceOp op, const ReduceShape& shape) {
  const uint32_t w = shape.workgroup, span = shape.workgroup * shape.items;
  const ScalarType acc = accumulator_type(type);
  std::vector<Stmt> body = {
      let("l", lid()),
      let("g", wid()),
      let("first", mul(var("g"), u32(span))),
      let("stride", mul(nwg(), u32(span))),
      let("acc", identity(acc, op)),
      // Rounds that start inside the input: (n - first - 1) / stride + 1,
      // which cannot overflow as first + rounds * stride could.
      let("rounds", select(lt(var("first"), len("in")),
                           add(div(sub(sub(len("in"), var("first")), u32(1)), var("stride")), u32(1)), u32(0))),
  };
  std::vector<Stmt> round = {let("base", add(var("first"), mul(var("r"), var("stride"))))};
  for (Stmt& stmt : add_span(type, op, shape)) round.push_back(std::move(stmt));
  body.push_back(loop("r", u32(0), var("rounds"), std::move(round)));
  body.push_back(store("partial", var("l"), var("acc")));
  body.push_back(barrier());
  for (uint32_t stride = w / 2; stride > 0; stride /= 2) {
    body.push_back(if_(lt(var("l"), u32(stride)),
                       {store("partial", var("l"),
                              combine(acc, op, load("partial", var("l")), load("partial", add(var("l"), u32(stride)))))}));
    body.push_back(barrier());
  }
  body.push_back(if_(land(eq(var("l"), u32(0)), lt(var("g"), len("out"))), {store("out", var("g"), load("partial", u32(0)))}));
  return ProgramBuilder(name)
      .workgroup_size(w)
      .input("in", 0, type)
      .output("out", 1, acc)
      .workgroup_buffer("partial", acc, w)
      .body(std::move(body))
      .build();
}

}  // namespace

namespace detail {

const CheckedProgram& checked_reduce_strided_pass(ScalarType type, ReduceOp op, const ReduceShape& shape) {
  check(type, op, shape);
  const std::string name = "reduce_strided_" + std::string(to_string(op)) + "_" + std::string(vyre::to_string(type)) +
                           "_w" + std::to_string(shape.workgroup) + "_i" + std::to_string(shape.items) +
                           (g_unrolled_loads.load() ? "" : "_looped");
  return memo_program(name, [&] { return build_strided_pass(name, type, op, shape); });
}

void set_reduce_loads_unrolled(bool on) { g_unrolled_loads = on; }

uint32_t reduce_first_groups(uint64_t elements, const ReduceShape& shape, uint32_t invocations) {
  const uint32_t spans = groups_for(elements, shape);
  const uint32_t cap = std::clamp<uint32_t>(invocations / shape.workgroup, 1, 65535);
  return std::min(spans, cap);
}

ReduceShape reduce_rest_shape(uint32_t partials) {
  uint32_t items = 2;
  while (items < 64 && uint64_t{256} * items < partials) items *= 2;
  return {256, items};
}

const CheckedProgram& checked_reduce_pass(ScalarType type, ReduceOp op, const ReduceShape& shape) {
  check(type, op, shape);
  const std::string name = "reduce_" + std::string(to_string(op)) + "_" + std::string(vyre::to_string(type)) + "_w" +
                           std::to_string(shape.workgroup) + "_i" + std::to_string(shape.items) +
                           (g_unrolled_loads.load() ? "" : "_looped");
  return memo_program(name, [&] { return build_pass(name, type, op, shape); });
}

}  // namespace detail

Program reduce_pass(ScalarType type, ReduceOp op, const ReduceShape& shape) {
  return detail::checked_reduce_pass(type, op, shape).program();
}

ReduceShape default_reduce_shape(const gpu::Backend& backend) {
  // Measured: the fastest of span_candidates for a sum of 2^28 f32 on the
  // H200 and of 2^22 on lavapipe (docs/benchmarks.md, "Standard kernels").
  const std::string device = detail::device_class(backend);
  if (device == "cpu") return {128, 16};
  if (device == "nvidia") return {512, 16};
  return {256, 8};
}

namespace detail {

std::shared_ptr<gpu::DeviceBuffer> reduce_with(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& values,
                                               ReduceOp op, const ReduceShape& shape, uint32_t invocations) {
  const ScalarType type = values->type();
  check(type, op, shape);
  // The first pass widens the elements to their accumulator and leaves one
  // partial per workgroup; the rest reduce those, 256 x I at a time.
  const uint32_t groups = reduce_first_groups(values->elements(), shape, invocations);
  const ReduceShape rest_shape = reduce_rest_shape(groups);
  gpu::Pipeline first = gpu::detail::kept_pipeline(backend, checked_reduce_strided_pass(type, op, shape));
  gpu::Batch batch(backend);
  // Every pass's inputs and outputs live until the batch has run.
  std::deque<Pass> passes;
  Pass& pass = passes.emplace_back();
  pass.inputs.device("in", values).size("out", groups);
  pass.outputs = batch.dispatch_resident(first, pass.inputs, Dim3{groups, 1, 1});
  std::shared_ptr<gpu::DeviceBuffer> left = pass.outputs.get("out");
  if (groups > 1) {
    gpu::Pipeline rest = gpu::detail::kept_pipeline(backend, checked_reduce_pass(accumulator_type(type), op, rest_shape));
    for (uint32_t remaining = groups; remaining > 1;) {
      const uint32_t next = groups_for(remaining, rest_shape);
      Pass& later = passes.emplace_back();
      later.inputs.device("in", left).size("out", next);
      later.outputs = batch.dispatch_resident(rest, later.inputs, grid_for(next));
      left = later.outputs.get("out");
      remaining = next;
    }
  }
  batch.run();
  return left;
}

}  // namespace detail

namespace {

std::shared_ptr<gpu::DeviceBuffer> reduce_with(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& values,
                                               ReduceOp op, const ReduceShape& shape) {
  return detail::reduce_with(backend, values, op, shape, detail::kReduceInvocations);
}

detail::TunableFamily family_of(const gpu::Backend& backend, ScalarType type, ReduceOp op, uint64_t elements) {
  return {"reduce " + std::string(vyre::to_string(type)) + " " + std::string(to_string(op)),
          detail::size_class_of(elements),
          detail::span_candidates(
              [&](const ReduceShape& s) { return detail::accepted([&] { check(type, op, s); }); }),
          detail::values_of(default_reduce_shape(backend))};
}

}  // namespace

std::shared_ptr<gpu::DeviceBuffer> reduce(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& values,
                                          ReduceOp op, const std::optional<ReduceShape>& shape,
                                          const Options& options) {
  if (!values) throw Error(ErrorKind::invalid_input, "reduce: the buffer is null");
  const ScalarType type = values->type();
  detail::check_type_and_op("reduce", type, op);
  if (shape) check(type, op, *shape);
  const uint32_t n = values->elements();
  if (n == 0) return backend.upload(empty_reduction(type, op), accumulator_type(type));
  const ReduceShape chosen = detail::choose<ReduceShape>(
      backend, shape, family_of(backend, type, op, n), options, detail::values_of, detail::reduce_shape_of,
      [&](const ReduceShape& s) { (void)reduce_with(backend, values, op, s); });
  return reduce_with(backend, values, op, chosen);
}

std::vector<uint8_t> reduce_bytes(gpu::Backend& backend, std::span<const uint8_t> bytes, ScalarType type,
                                  ReduceOp op, const std::optional<ReduceShape>& shape, const Options& options) {
  detail::check_type_and_op("reduce", type, op);
  if (shape) check(type, op, *shape);
  if (detail::element_count("reduce", bytes.size(), type) == 0) return empty_reduction(type, op);
  return reduce(backend, backend.upload(bytes, type), op, shape, options)->read();
}

}  // namespace vyre::lib
