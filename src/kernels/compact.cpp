#include "vyre/lib/compact.hpp"

#include <deque>
#include <string>

#include "gpu/kept_pipeline.hpp"
#include "gpu/unfilled_buffer.hpp"
#include "kernels/combine.hpp"
#include "kernels/passes.hpp"
#include "kernels/program_memo.hpp"
#include "kernels/scan_plan.hpp"
#include "kernels/shape_tuning.hpp"
#include "util/concat.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"

namespace vyre::lib {
namespace {

using namespace vyre::build;
using detail::grid_for;

// An invocation of the scatter pass keeps its elements' flags as the bits of
// one u32.
constexpr uint32_t kMaxItems = 32;

std::string type_name(ScalarType type) { return std::string(vyre::to_string(type)); }

bool is_mask_type(ScalarType type) {
  return type == ScalarType::U32 || type == ScalarType::I32 || type == ScalarType::U8 || type == ScalarType::Bool;
}

void check_shape(const char* primitive, const ReduceShape& shape) {
  detail::check_shape(primitive, ScalarType::U32, shape, 0);
  if (shape.items > kMaxItems)
    throw Error(ErrorKind::invalid_input, std::string(primitive) + ": items is 1 to 32 (an invocation keeps its "
                                                                   "elements' flags in one word), not " +
                                              std::to_string(shape.items));
}

void check_mask(ScalarType mask_type) {
  if (!is_mask_type(mask_type))
    throw Error(ErrorKind::invalid_input, "compact takes a u32, i32, u8 or bool mask, not " + type_name(mask_type) +
                                              ": make one first (x != 0)");
}

// Whether element x (a load of `type`) is nonzero, as NumPy's x != 0: a
// float's bits without the sign, so that -0.0 is zero and NaN is not, even
// where WGSL lets a compiler assume no NaN. f64 has no bitcast: NaN is found
// on its f32 (an f64 NaN converts to one), anything else compared with 0.
Expr is_nonzero(ScalarType type, const Expr& x) {
  const auto f32_nonzero = [](const Expr& f) { return ne(bit_and(bitcast(ScalarType::U32, f), u32(0x7fffffffu)), u32(0)); };
  switch (type) {
    case ScalarType::Bool: return x;
    case ScalarType::I32: case ScalarType::I8: case ScalarType::I16: return ne(x, i32(0));
    case ScalarType::F32: return f32_nonzero(x);
    case ScalarType::F16: return f32_nonzero(cast(ScalarType::F32, x));  // exact
    case ScalarType::F64: {
      const Expr as_f32 = cast(ScalarType::F32, x);
      return lor(gt(bit_and(bitcast(ScalarType::U32, as_f32), u32(0x7fffffffu)), u32(0x7f800000u)),
                 gt(abs(x), f64(0.0)));
    }
    default: return ne(x, u32(0));  // u32, u8, u16
  }
}

Stmt group_index() { return let("g", add(wid(), mul(wid(Axis::Y), nwg()))); }

CheckedProgram build_count(const std::string& name, ScalarType mask_type, const ReduceShape& shape) {
  const uint32_t w = shape.workgroup;
  // Neighbouring invocations read neighbouring elements: the order of
  // counting does not matter. Workgroups of a 2-D grid past the last span
  // (g >= groups) count nothing and store nothing.
  std::vector<Stmt> body = {
      let("l", lid()),
      group_index(),
      let("groups", sub(len("counts"), u32(1))),
      let("base", mul(var("g"), u32(w * shape.items))),
      let("c", u32(0)),
      if_(lt(var("g"), var("groups")),
          {loop("k", u32(0), u32(shape.items),
                {let("i", add(var("base"), add(mul(var("k"), u32(w)), var("l")))),
                 if_(lt(var("i"), len("mask")),
                     {assign("c", add(var("c"), select(is_nonzero(mask_type, load("mask", var("i"))), u32(1), u32(0))))})})}),
      store("partial", var("l"), var("c")),
      barrier(),
  };
  for (uint32_t stride = w / 2; stride > 0; stride /= 2) {
    body.push_back(if_(lt(var("l"), u32(stride)),
                       {store("partial", var("l"),
                              add(load("partial", var("l")), load("partial", add(var("l"), u32(stride)))))}));
    body.push_back(barrier());
  }
  body.push_back(if_(land(eq(var("l"), u32(0)), lt(var("g"), var("groups"))),
                     {store("counts", var("g"), load("partial", u32(0)))}));
  return ProgramBuilder(name)
      .workgroup_size(w)
      .input("mask", 0, mask_type)
      .output("counts", 1, ScalarType::U32)
      .workgroup_buffer("partial", ScalarType::U32, w)
      .body(std::move(body))
      .build();
}

CheckedProgram build_scatter(const std::string& name, std::optional<ScalarType> values_type, ScalarType mask_type,
                             const ReduceShape& shape) {
  const uint32_t w = shape.workgroup;
  const uint32_t items = shape.items;
  // Invocation l takes elements [first, first + items): consecutive ones, so
  // that the kept elements keep their order. Bit k of `bits` says whether
  // element first + k is kept.
  std::vector<Stmt> body = {
      let("l", lid()),
      group_index(),
      let("groups", sub(len("offsets"), u32(1))),
      let("first", add(mul(var("g"), u32(w * items)), mul(var("l"), u32(items)))),
      let("bits", u32(0)),
      let("c", u32(0)),
      if_(lt(var("g"), var("groups")),
          {loop("k", u32(0), u32(items),
                {let("i", add(var("first"), var("k"))),
                 if_(lt(var("i"), len("mask")),
                     {if_(is_nonzero(mask_type, load("mask", var("i"))),
                          {assign("bits", bit_or(var("bits"), shl(u32(1), var("k")))),
                           assign("c", add(var("c"), u32(1)))})})})}),
      store("sums", var("l"), var("c")),
      barrier(),
  };
  // An inclusive scan of the invocations' counts, stride 1, 2, ..., W/2.
  for (uint32_t stride = 1; stride < w; stride *= 2) {
    const std::string t = concat("s", std::to_string(stride));
    body.push_back(let(t, load("sums", var("l"))));
    body.push_back(if_(ge(var("l"), u32(stride)), {assign(t, add(load("sums", sub(var("l"), u32(stride))), var(t)))}));
    body.push_back(barrier());
    body.push_back(store("sums", var("l"), var(t)));
    body.push_back(barrier());
  }
  // Where the invocation's first kept element goes: the span's offset and
  // the counts of the invocations before it.
  body.push_back(let("at", u32(0)));
  body.push_back(if_(lt(var("g"), var("groups")), {assign("at", load("offsets", var("g")))}));
  body.push_back(if_(gt(var("l"), u32(0)), {assign("at", add(var("at"), load("sums", sub(var("l"), u32(1)))))}));
  Expr kept_value = values_type ? load("values", add(var("first"), var("k"))) : add(var("first"), var("k"));
  body.push_back(loop("k", u32(0), u32(items),
                      {if_(ne(bit_and(shr(var("bits"), var("k")), u32(1)), u32(0)),
                           {store("out", var("at"), std::move(kept_value)), assign("at", add(var("at"), u32(1)))})}));
  ProgramBuilder builder(name);
  builder.workgroup_size(w)
      .input("mask", 0, mask_type)
      .input("offsets", 1, ScalarType::U32)
      .output("out", 2, values_type.value_or(ScalarType::U32))
      .workgroup_buffer("sums", ScalarType::U32, w);
  if (values_type) builder.input("values", 3, *values_type);
  return builder.body(std::move(body)).build();
}

// The last offset, the total kept: one element, read back to size the output.
const CheckedProgram& checked_total() {
  return detail::memo_program("compact_total", [] {
    return ProgramBuilder("compact_total")
        .workgroup_size(1)
        .input("offsets", 0, ScalarType::U32)
        .output("total", 1, ScalarType::U32)
        .body({store("total", u32(0), load("offsets", sub(len("offsets"), u32(1))))})
        .build();
  });
}

std::string shape_suffix(const ReduceShape& shape) {
  return "_w" + std::to_string(shape.workgroup) + "_i" + std::to_string(shape.items);
}

const CheckedProgram& checked_count(ScalarType mask_type, const ReduceShape& shape) {
  check_shape("compact", shape);
  const std::string name = "compact_count_" + type_name(mask_type) + shape_suffix(shape);
  return detail::memo_program(name, [&] { return build_count(name, mask_type, shape); });
}

const CheckedProgram& checked_scatter(std::optional<ScalarType> values_type, ScalarType mask_type,
                                      const ReduceShape& shape) {
  check_shape(values_type ? "compact" : "nonzero", shape);
  if (values_type) check_mask(mask_type);
  const std::string name = (values_type ? "compact_scatter_" + type_name(*values_type) + "_by_" : "nonzero_scatter_") +
                           type_name(mask_type) + shape_suffix(shape);
  return detail::memo_program(name, [&] { return build_scatter(name, values_type, mask_type, shape); });
}

}  // namespace

Program compact_count_pass(ScalarType mask_type, const ReduceShape& shape) {
  return checked_count(mask_type, shape).program();
}

Program compact_scatter_pass(std::optional<ScalarType> values_type, ScalarType mask_type, const ReduceShape& shape) {
  return checked_scatter(values_type, mask_type, shape).program();
}

ReduceShape default_compact_shape(const gpu::Backend& backend) {
  // Measured on lavapipe: the fastest of span_candidates for 2^22 u32 values
  // by a u8 mask of density 1/2 (docs/lib.md); not yet on a GPU.
  return detail::device_class(backend) == "cpu" ? ReduceShape{128, 32} : ReduceShape{256, 8};
}

namespace {

std::shared_ptr<gpu::DeviceBuffer> empty_buffer(gpu::Backend& backend, ScalarType type) {
  return backend.upload(std::span<const uint8_t>(), type);
}

// One call with one shape: the counts, their scan and the total in one
// Batch, run and read back; then the scatter into a buffer of that size.
// `values` is null for nonzero.
Compacted compact_with(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& values,
                       const std::shared_ptr<gpu::DeviceBuffer>& mask, const ReduceShape& shape) {
  const std::optional<ScalarType> values_type =
      values ? std::optional<ScalarType>(values->type()) : std::nullopt;
  gpu::Pipeline count = gpu::detail::kept_pipeline(backend, checked_count(mask->type(), shape));
  gpu::Pipeline scatter = gpu::detail::kept_pipeline(backend, checked_scatter(values_type, mask->type(), shape));
  gpu::Pipeline total = gpu::detail::kept_pipeline(backend, checked_total());
  const uint32_t groups = detail::groups_for(mask->elements(), shape);
  const Dim3 grid = grid_for(groups);
  gpu::Batch batch(backend);
  std::deque<detail::Pass> passes;
  detail::ScanPlan plan(backend, batch, passes, ScalarType::U32, ReduceOp::Sum, ScanKind::Exclusive,
                        default_scan_shape(backend, ScalarType::U32));
  detail::Pass& counted = passes.emplace_back();
  counted.inputs.device("mask", mask).size("counts", groups + 1);
  counted.outputs = batch.dispatch_resident(count, counted.inputs, grid);
  const std::shared_ptr<gpu::DeviceBuffer> offsets = plan.record(counted.outputs.get("counts"));
  detail::Pass& summed = passes.emplace_back();
  summed.inputs.device("offsets", offsets).size("total", 1);
  summed.outputs = batch.dispatch_resident(total, summed.inputs, Dim3{1, 1, 1});
  batch.run();
  const uint32_t kept = summed.outputs.get("total")->read_as<uint32_t>().at(0);
  if (kept == 0) return {empty_buffer(backend, values_type.value_or(ScalarType::U32)), 0};
  detail::Pass& placed = passes.emplace_back();
  // Each kept element is written to its own place of "out", every place
  // once: a buffer of the pool's, not cleared first.
  const std::shared_ptr<gpu::DeviceBuffer> out = gpu::detail::unfilled_buffer(
      backend, kept, values_type.value_or(ScalarType::U32), values ? "compact's result" : "nonzero's result");
  placed.inputs.device("mask", mask).device("offsets", offsets).device("out", out);
  if (values) placed.inputs.device("values", values);
  placed.outputs = batch.dispatch_resident(scatter, placed.inputs, grid);
  batch.run();
  return {out, kept};
}

detail::TunableFamily family_of(const gpu::Backend& backend, const std::string& name, uint64_t elements) {
  return {name, detail::size_class_of(elements),
          detail::span_candidates([](const ReduceShape& s) { return s.items <= kMaxItems; }),
          detail::values_of(default_compact_shape(backend))};
}

Compacted run_chosen(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& values,
                     const std::shared_ptr<gpu::DeviceBuffer>& mask, const std::string& family,
                     const std::optional<ReduceShape>& shape, const Options& options) {
  if (mask->elements() == 0) return {empty_buffer(backend, values ? values->type() : ScalarType::U32), 0};
  const ReduceShape chosen = detail::choose<ReduceShape>(
      backend, shape, family_of(backend, family, mask->elements()), options, detail::values_of,
      detail::reduce_shape_of, [&](const ReduceShape& s) { (void)compact_with(backend, values, mask, s); });
  return compact_with(backend, values, mask, chosen);
}

void check_lengths(uint64_t values, uint64_t mask) {
  if (values != mask)
    throw Error(ErrorKind::invalid_input, "compact: " + std::to_string(values) + " values but a mask of " +
                                              std::to_string(mask) + ": give one mask element per value");
}

}  // namespace

Compacted compact(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& values,
                  const std::shared_ptr<gpu::DeviceBuffer>& mask, const std::optional<ReduceShape>& shape,
                  const Options& options) {
  if (!values) throw Error(ErrorKind::invalid_input, "compact: the values buffer is null");
  if (!mask) throw Error(ErrorKind::invalid_input, "compact: the mask buffer is null");
  check_mask(mask->type());
  check_lengths(values->elements(), mask->elements());
  if (shape) check_shape("compact", *shape);
  return run_chosen(backend, values, mask,
                    "compact " + type_name(values->type()) + " by " + type_name(mask->type()), shape, options);
}

Compacted nonzero(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& x,
                  const std::optional<ReduceShape>& shape, const Options& options) {
  if (!x) throw Error(ErrorKind::invalid_input, "nonzero: the buffer is null");
  if (shape) check_shape("nonzero", *shape);
  return run_chosen(backend, nullptr, x, "nonzero " + type_name(x->type()), shape, options);
}

std::vector<uint8_t> compact_bytes(gpu::Backend& backend, std::span<const uint8_t> values, ScalarType values_type,
                                   std::span<const uint8_t> mask, ScalarType mask_type,
                                   const std::optional<ReduceShape>& shape, const Options& options) {
  check_mask(mask_type);
  const uint32_t n = detail::element_count("compact", values.size(), values_type);
  check_lengths(n, detail::element_count("compact", mask.size(), mask_type));
  if (shape) check_shape("compact", *shape);
  if (n == 0) return {};
  const Compacted kept =
      compact(backend, backend.upload(values, values_type), backend.upload(mask, mask_type), shape, options);
  return kept.count == 0 ? std::vector<uint8_t>{} : kept.buffer->read();
}

std::vector<uint32_t> nonzero_bytes(gpu::Backend& backend, std::span<const uint8_t> x, ScalarType type,
                                    const std::optional<ReduceShape>& shape, const Options& options) {
  if (shape) check_shape("nonzero", *shape);
  if (detail::element_count("nonzero", x.size(), type) == 0) return {};
  const Compacted where = nonzero(backend, backend.upload(x, type), shape, options);
  return where.count == 0 ? std::vector<uint32_t>{} : where.buffer->read_as<uint32_t>();
}

}  // namespace vyre::lib
