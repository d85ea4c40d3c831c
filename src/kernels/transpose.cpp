#include "vyre/lib/transpose.hpp"

#include <bit>
#include <string>

#include "gpu/kept_pipeline.hpp"
#include "kernels/passes.hpp"
#include "kernels/program_memo.hpp"
#include "kernels/shape_tuning.hpp"
#include "util/concat.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"

namespace vyre::lib {
namespace {

using namespace vyre::build;

// WebGPU's promise of invocations per workgroup, and the largest tile whose
// padded copy, tile * (tile + 1) words, fits its 16 KiB of workgroup memory.
constexpr uint32_t kMaxInvocations = 256;
constexpr uint32_t kMaxTile = 32;
constexpr uint32_t kMinTile = 8;

// Every element type moves; narrow ones and bools through a tile of the
// words their loads widen to (workgroup memory keeps whole words).
ScalarType tile_type(ScalarType type) {
  switch (type) {
    case ScalarType::U8:
    case ScalarType::U16:
    case ScalarType::Bool: return ScalarType::U32;
    case ScalarType::I8:
    case ScalarType::I16: return ScalarType::I32;
    default: return type;
  }
}

// A value loaded from x as the tile holds it, and back.
Expr to_tile(ScalarType type, Expr loaded) {
  return type == ScalarType::Bool ? select(std::move(loaded), u32(1), u32(0)) : loaded;
}
Expr from_tile(ScalarType type, Expr held) {
  return type == ScalarType::Bool ? ne(std::move(held), u32(0)) : held;
}

void check(const TransposeShape& s) {
  const std::string what = "transpose: shape tile " + std::to_string(s.tile) + " rows_per_invocation " +
                           std::to_string(s.rows_per_invocation) + ": ";
  if (s.tile < kMinTile || s.tile > kMaxTile || !std::has_single_bit(s.tile))
    throw Error(ErrorKind::invalid_input, what + "tile is 8, 16 or 32 (its padded copy must fit 16 KiB of "
                                                 "workgroup memory)");
  if (s.rows_per_invocation == 0 || s.rows_per_invocation > s.tile || !std::has_single_bit(s.rows_per_invocation))
    throw Error(ErrorKind::invalid_input, what + "rows_per_invocation is a power of two from 1 to the tile");
  const uint32_t invocations = s.tile * s.tile / s.rows_per_invocation;
  if (invocations > kMaxInvocations)
    throw Error(ErrorKind::invalid_input, what + "tile * tile / rows_per_invocation is " + std::to_string(invocations) +
                                              " invocations; WebGPU promises 256: take more rows per invocation");
}

CheckedProgram build_pass(const std::string& name, ScalarType type, const TransposeShape& s) {
  const uint32_t tile = s.tile;
  const uint32_t height = tile / s.rows_per_invocation;  // the workgroup's extent along y
  const uint32_t pitch = tile + 1;        // one word of padding a row: a column's words fall in different banks
  std::vector<Stmt> body = {
      let("lx", lid()),
      let("ly", lid(Axis::Y)),
      let("g", add(wid(), mul(wid(Axis::Y), nwg()))),
      let("rows", load("dims", u32(0))),
      let("cols", load("dims", u32(1))),
      // ceil(cols / tile), without cols + tile - 1 wrapping.
      let("tiles_c", add(div(var("cols"), u32(tile)), select(ne(rem(var("cols"), u32(tile)), u32(0)), u32(1), u32(0)))),
      let("row0", mul(div(var("g"), var("tiles_c")), u32(tile))),
      let("col0", mul(rem(var("g"), var("tiles_c")), u32(tile))),
  };
  // Read: neighbouring invocations (lx) along a row of x.
  for (uint32_t k = 0; k < s.rows_per_invocation; ++k) {
    const std::string r = concat("r", std::to_string(k));
    const Expr local_row = add(var("ly"), u32(k * height));
    body.push_back(let(r, add(var("row0"), local_row)));
    body.push_back(if_(land(lt(var(r), var("rows")), lt(add(var("col0"), var("lx")), var("cols"))),
                       {store("tile", add(mul(local_row, u32(pitch)), var("lx")),
                              to_tile(type, load("x", add(mul(var(r), var("cols")), add(var("col0"), var("lx"))))))}));
  }
  body.push_back(barrier());
  // Write: neighbouring invocations along a row of the result, a column of the tile.
  for (uint32_t k = 0; k < s.rows_per_invocation; ++k) {
    const std::string o = concat("o", std::to_string(k));
    const Expr local_row = add(var("ly"), u32(k * height));
    body.push_back(let(o, add(var("col0"), local_row)));
    body.push_back(if_(land(lt(var(o), var("cols")), lt(add(var("row0"), var("lx")), var("rows"))),
                       {store("out", add(mul(var(o), var("rows")), add(var("row0"), var("lx"))),
                              from_tile(type, load("tile", add(mul(var("lx"), u32(pitch)), local_row))))}));
  }
  return ProgramBuilder(name)
      .workgroup_size(tile, height)
      .input("x", 0, type)
      .input("dims", 1, ScalarType::U32, 2)
      .output("out", 2, type)
      .workgroup_buffer("tile", tile_type(type), tile * pitch)
      .body(std::move(body))
      .build();
}

const CheckedProgram& checked_pass(ScalarType type, const TransposeShape& s) {
  check(s);
  const std::string name = "transpose_" + std::string(vyre::to_string(type)) + "_t" + std::to_string(s.tile) + "_r" +
                           std::to_string(s.rows_per_invocation);
  return detail::memo_program(name, [&] { return build_pass(name, type, s); });
}

detail::ShapeValues values_of(const TransposeShape& s) {
  return {{"tile", s.tile}, {"rows_per_invocation", s.rows_per_invocation}};
}
TransposeShape shape_of(const detail::ShapeValues& v) { return {v.at(0).second, v.at(1).second}; }

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

std::shared_ptr<gpu::DeviceBuffer> transpose_with(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& x,
                                                  uint32_t rows, uint32_t cols, const TransposeShape& s) {
  gpu::Pipeline pipeline = gpu::detail::kept_pipeline(backend, checked_pass(x->type(), s));
  const uint64_t groups = ceil_div(rows, s.tile) * ceil_div(cols, s.tile);
  gpu::Batch batch(backend);
  detail::Pass pass;
  pass.inputs.device("x", x).set<uint32_t>("dims", {rows, cols}).size("out", rows * cols);
  pass.outputs = batch.dispatch_resident(pipeline, pass.inputs, detail::grid_for(static_cast<uint32_t>(groups)));
  batch.run();
  return pass.outputs.get("out");
}

detail::TunableFamily family_of(const gpu::Backend& backend, ScalarType type, uint32_t rows, uint32_t cols) {
  using detail::log2_ceil;
  detail::TunableFamily family{"transpose " + std::string(vyre::to_string(type)),
                               "rows 2^" + std::to_string(log2_ceil(rows)) + " cols 2^" + std::to_string(log2_ceil(cols)),
                               {},
                               values_of(default_transpose_shape(backend))};
  for (const TransposeShape& s : transpose_candidates()) family.candidates.push_back(values_of(s));
  return family;
}

void check_length(uint64_t elements, uint32_t rows, uint32_t cols) {
  if (elements != uint64_t{rows} * cols)
    throw Error(ErrorKind::invalid_input, "transpose: " + std::to_string(elements) + " elements, but rows = " +
                                              std::to_string(rows) + " and cols = " + std::to_string(cols) +
                                              " need rows * cols = " + std::to_string(uint64_t{rows} * cols));
}

}  // namespace

std::vector<TransposeShape> transpose_candidates() {
  return {{8, 1}, {8, 2}, {16, 1}, {16, 2}, {16, 4}, {32, 4}, {32, 8}, {32, 16}};
}

TransposeShape default_transpose_shape(const gpu::Backend& backend) {
  // 32 x 8 invocations, 4 rows each: the fastest on lavapipe at 1024 x 1024
  // (docs/lib.md, "transpose"), and the usual shape on GPUs (not yet measured
  // here), so every device class has it for now.
  (void)backend;
  return {32, 4};
}

Program transpose_pass(ScalarType type, const TransposeShape& shape) { return checked_pass(type, shape).program(); }

std::shared_ptr<gpu::DeviceBuffer> transpose(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& x,
                                             uint32_t rows, uint32_t cols, const std::optional<TransposeShape>& shape,
                                             const Options& options) {
  if (!x) throw Error(ErrorKind::invalid_input, "transpose: the buffer is null");
  check_length(x->elements(), rows, cols);
  if (shape) check(*shape);
  if (x->elements() == 0) return backend.upload(std::span<const uint8_t>{}, x->type());
  const TransposeShape chosen = detail::choose<TransposeShape>(
      backend, shape, family_of(backend, x->type(), rows, cols), options, values_of, shape_of,
      [&](const TransposeShape& s) { (void)transpose_with(backend, x, rows, cols, s); });
  return transpose_with(backend, x, rows, cols, chosen);
}

std::vector<uint8_t> transpose_bytes(gpu::Backend& backend, std::span<const uint8_t> bytes, ScalarType type,
                                     uint32_t rows, uint32_t cols, const std::optional<TransposeShape>& shape,
                                     const Options& options) {
  check_length(detail::element_count("transpose", bytes.size(), type), rows, cols);
  if (shape) check(*shape);
  if (bytes.empty()) return {};
  return transpose(backend, backend.upload(bytes, type), rows, cols, shape, options)->read();
}

}  // namespace vyre::lib
