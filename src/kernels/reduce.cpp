#include "vyre/lib/reduce.hpp"

#include <array>
#include <bit>
#include <deque>
#include <limits>
#include <string>

#include "vyre/builder.hpp"
#include "vyre/error.hpp"

namespace vyre::lib {
namespace {

using namespace vyre::build;

constexpr std::array kOpNames{"sum", "min", "max", "and", "or", "xor"};

// The most workgroups along x: WebGPU's default maxComputeWorkgroupsPerDimension.
constexpr uint32_t kMaxGroupsX = 65535;

bool is_reducible_type(ScalarType t) {
  return t == ScalarType::U32 || t == ScalarType::I32 || t == ScalarType::F32 || t == ScalarType::F64;
}

bool is_bitwise(ReduceOp op) { return op == ReduceOp::And || op == ReduceOp::Or || op == ReduceOp::Xor; }

void check(ScalarType type, ReduceOp op, const ReduceShape& shape) {
  if (!is_reducible_type(type))
    throw Error(ErrorKind::invalid_input, "reduce takes u32, i32, f32 or f64 elements, not " +
                                              std::string(vyre::to_string(type)));
  if (is_bitwise(op) && is_float(type))
    throw Error(ErrorKind::invalid_input, "reduce " + std::string(to_string(op)) + " takes u32 or i32 elements, not " +
                                              std::string(vyre::to_string(type)));
  if (shape.workgroup == 0 || shape.workgroup > 1024 || !std::has_single_bit(shape.workgroup))
    throw Error(ErrorKind::invalid_input,
                "ReduceShape::workgroup is a power of two from 1 to 1024, not " + std::to_string(shape.workgroup));
  if (shape.items == 0 || shape.items > 64)
    throw Error(ErrorKind::invalid_input, "ReduceShape::items is 1 to 64, not " + std::to_string(shape.items));
  // Each pass must shrink what is left, or the passes never end.
  if (shape.workgroup * shape.items < 2)
    throw Error(ErrorKind::invalid_input, "ReduceShape: a workgroup of 1 invocation needs 2 or more items");
}

// The value that leaves every element as it is under `op`, as a literal.
Expr identity(ScalarType type, ReduceOp op) {
  const bool f64_type = type == ScalarType::F64;
  switch (op) {
    case ReduceOp::Min:
      if (type == ScalarType::U32) return u32(UINT32_MAX);
      if (type == ScalarType::I32) return i32(INT32_MAX);
      return f64_type ? f64(std::numeric_limits<double>::infinity()) : f32(std::numeric_limits<float>::infinity());
    case ReduceOp::Max:
      if (type == ScalarType::U32) return u32(0);
      if (type == ScalarType::I32) return i32(INT32_MIN);
      return f64_type ? f64(-std::numeric_limits<double>::infinity()) : f32(-std::numeric_limits<float>::infinity());
    case ReduceOp::And: return type == ScalarType::U32 ? u32(UINT32_MAX) : i32(-1);
    default:  // sum, or, xor
      if (type == ScalarType::U32) return u32(0);
      if (type == ScalarType::I32) return i32(0);
      return f64_type ? f64(0.0) : f32(0.0f);
  }
}

// Whether a float is NaN, decided on the bits of its f32 (an f64 NaN converts
// to an f32 NaN): WGSL lets a compiler assume no NaN in float comparisons.
Expr is_nan(ScalarType type, Expr x) {
  Expr as_f32 = type == ScalarType::F64 ? cast(ScalarType::F32, std::move(x)) : std::move(x);
  return gt(bit_and(bitcast(ScalarType::U32, std::move(as_f32)), u32(0x7fffffffu)), u32(0x7f800000u));
}

// a `op` b. Float min and max give NaN when either is NaN, as NumPy's do.
Expr combine(ScalarType type, ReduceOp op, const Expr& a, const Expr& b) {
  switch (op) {
    case ReduceOp::Sum: return add(a, b);
    case ReduceOp::And: return bit_and(a, b);
    case ReduceOp::Or: return bit_or(a, b);
    case ReduceOp::Xor: return bit_xor(a, b);
    default: break;
  }
  Expr chosen = op == ReduceOp::Min ? min(a, b) : max(a, b);
  if (!is_float(type)) return chosen;
  Expr nan = type == ScalarType::F64 ? f64_bits(0x7ff8000000000000ull) : f32_bits(0x7fc00000u);
  return select(lor(is_nan(type, a), is_nan(type, b)), std::move(nan), std::move(chosen));
}

// One dispatch's inputs and outputs. A type of this file's own, so that the
// container holding them is no template over a public type, which would
// export its members from libvyre.
struct Pass {
  Inputs inputs;
  gpu::DeviceOutputs outputs;
};

uint32_t groups_for(uint64_t elements, const ReduceShape& shape) {
  const uint64_t per_group = uint64_t{shape.workgroup} * shape.items;
  return static_cast<uint32_t>((elements + per_group - 1) / per_group);
}

// Workgroups along x and y covering `groups` (wid.x + wid.y * nwg.x).
Dim3 grid_for(uint32_t groups) {
  if (groups <= kMaxGroupsX) return {groups, 1, 1};
  return {kMaxGroupsX, (groups + kMaxGroupsX - 1) / kMaxGroupsX, 1};
}

}  // namespace

std::string_view to_string(ReduceOp op) { return kOpNames.at(static_cast<size_t>(op)); }

std::optional<ReduceOp> reduce_op_from_string(std::string_view name) {
  for (size_t i = 0; i < kOpNames.size(); ++i)
    if (name == kOpNames[i]) return static_cast<ReduceOp>(i);
  return std::nullopt;
}

Program reduce_pass(ScalarType type, ReduceOp op, const ReduceShape& shape) {
  check(type, op, shape);
  const uint32_t w = shape.workgroup;
  std::vector<Stmt> body = {
      let("l", lid()),
      let("g", add(wid(), mul(wid(Axis::Y), nwg()))),
      let("base", mul(var("g"), u32(w * shape.items))),
      let("acc", identity(type, op)),
      // Element k*W + l of the group's span: neighbouring invocations read
      // neighbouring elements.
      loop("k", u32(0), u32(shape.items),
           {let("i", add(var("base"), add(mul(var("k"), u32(w)), var("l")))),
            if_(lt(var("i"), len("in")), {assign("acc", combine(type, op, var("acc"), load("in", var("i"))))})}),
      store("partial", var("l"), var("acc")),
      barrier(),
  };
  // A tree over the workgroup's partials, unrolled: stride W/2, W/4, ..., 1.
  for (uint32_t stride = w / 2; stride > 0; stride /= 2) {
    body.push_back(if_(lt(var("l"), u32(stride)),
                       {store("partial", var("l"),
                              combine(type, op, load("partial", var("l")), load("partial", add(var("l"), u32(stride)))))}));
    body.push_back(barrier());
  }
  body.push_back(if_(eq(var("l"), u32(0)), {store("out", var("g"), load("partial", u32(0)))}));
  return ProgramBuilder("reduce_" + std::string(to_string(op)) + "_" + std::string(vyre::to_string(type)) + "_w" +
                        std::to_string(w) + "_i" + std::to_string(shape.items))
      .workgroup_size(w)
      .input("in", 0, type)
      .output("out", 1, type)
      .workgroup_buffer("partial", type, w)
      .body(std::move(body))
      .build();
}

std::vector<uint8_t> reduce_bytes(gpu::Backend& backend, std::span<const uint8_t> bytes, ScalarType type,
                                  ReduceOp op, const ReduceShape& shape) {
  check(type, op, shape);
  const uint32_t size = element_bytes(type);
  if (bytes.size() % size != 0)
    throw Error(ErrorKind::invalid_input, "reduce: " + std::to_string(bytes.size()) + " bytes are not whole " +
                                              std::string(vyre::to_string(type)) + " elements");
  const uint64_t n = bytes.size() / size;
  if (n > UINT32_MAX)
    throw Error(ErrorKind::limit_exceeded, "reduce takes at most 4294967295 elements, not " + std::to_string(n));
  if (n == 0) {
    if (op == ReduceOp::Min || op == ReduceOp::Max)
      throw Error(ErrorKind::invalid_input,
                  "reduce " + std::string(to_string(op)) + " of zero elements has no value (NumPy refuses it too)");
    const uint64_t bits = identity(type, op).imm;
    std::vector<uint8_t> out(size);
    for (uint32_t k = 0; k < size; ++k) out[k] = static_cast<uint8_t>(bits >> (8 * k));
    return out;
  }
  gpu::Pipeline pipeline = backend.compile(reduce_pass(type, op, shape));
  gpu::Batch batch(backend);
  // Every pass's inputs and outputs live until the batch has run.
  std::deque<Pass> passes;
  uint32_t groups = groups_for(n, shape);
  Pass& first = passes.emplace_back();
  first.inputs.view("in", bytes).size("out", groups);
  first.outputs = batch.dispatch_resident(pipeline, first.inputs, grid_for(groups));
  while (groups > 1) {
    const std::shared_ptr<gpu::DeviceBuffer> partials = passes.back().outputs.get("out");
    groups = groups_for(groups, shape);
    Pass& next = passes.emplace_back();
    next.inputs.device("in", partials).size("out", groups);
    next.outputs = batch.dispatch_resident(pipeline, next.inputs, grid_for(groups));
  }
  batch.run();
  return passes.back().outputs.get("out")->read();
}

}  // namespace vyre::lib
