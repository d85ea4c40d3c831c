#include "vyre/lib/scan.hpp"

#include <atomic>
#include <deque>
#include <functional>
#include <string>

#include "gpu/kept_pipeline.hpp"
#include "gpu/unfilled_buffer.hpp"
#include "kernels/combine.hpp"
#include "kernels/passes.hpp"
#include "kernels/program_memo.hpp"
#include "kernels/scan_plan.hpp"
#include "kernels/workgroup_scan.hpp"
#include "util/concat.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"

namespace vyre::lib {
namespace {

using namespace vyre::build;
using detail::combine;
using detail::identity;

// The span in workgroup memory, one word of padding after every 32, so that
// invocation l's run of `items` elements (l*I + k) falls in different banks
// across l (32 banks of 4 bytes): a stride of I words alone would put
// I invocations on one bank.
uint64_t tile_size(const ReduceShape& shape) {
  const uint64_t span = uint64_t{shape.workgroup} * shape.items;
  return span + span / 32;
}

Expr at(const Expr& t) { return add(t, shr(t, u32(5))); }

void check(ScalarType type, ReduceOp op, const ReduceShape& shape) {
  detail::check_type_and_op("scan", type, op);
  detail::check_shape("scan", accumulator_type(type), shape, tile_size(shape));
}

std::vector<uint8_t> bytes_of(uint64_t bits, ScalarType type) {
  std::vector<uint8_t> out(element_bytes(type));
  for (size_t k = 0; k < out.size(); ++k) out[k] = static_cast<uint8_t>(bits >> (8 * k));
  return out;
}

// `start` (tile number `tile`'s first element plus `within`), "last" where
// `declare_last`, and x0 .. x(I-1): the elements start + k*step, widened,
// loaded unrolled at indices clamped into "in" at "last" (those past its
// end are loaded as its last element).
std::vector<Stmt> load_elements(ScalarType type, const ReduceShape& shape, const std::string& start, const Expr& tile,
                                const Expr& within, uint32_t step, bool declare_last) {
  std::vector<Stmt> out = {let(start, add(mul(tile, u32(shape.workgroup * shape.items)), within))};
  if (declare_last) out.push_back(let("last", sub(len("in"), u32(1))));
  for (uint32_t k = 0; k < shape.items; ++k)
    out.push_back(let(numbered("x", k), detail::widened(type, load("in", min(add(var(start), u32(k * step)), var("last"))))));
  return out;
}

// "acc" and y0 .. y(I-1): the running combination of element(0..I-1), up to
// and with element k (inclusive) or before it (exclusive); "acc" ends as
// the invocation's total.
std::vector<Stmt> scan_in_registers(ScalarType acc, ReduceOp op, ScanKind kind, uint32_t items,
                                    const std::function<Expr(uint32_t)>& element) {
  std::vector<Stmt> out = {let("acc", identity(acc, op))};
  for (uint32_t k = 0; k < items; ++k) {
    const std::string y = numbered("y", k);
    if (kind == ScanKind::Inclusive) {
      out.push_back(assign("acc", combine(acc, op, var("acc"), element(k))));
      out.push_back(let(y, var("acc")));
    } else {
      out.push_back(let(y, var("acc")));
      out.push_back(assign("acc", combine(acc, op, var("acc"), element(k))));
    }
  }
  return out;
}

// "prefix": the tile's offset (the variable `offset`), then the totals of
// the invocations before l.
std::vector<Stmt> add_prefix(ScalarType acc, ReduceOp op, const detail::TotalsArray& totals, const std::string& offset) {
  return {let("prefix", var(offset)),
          if_(gt(var("l"), u32(0)),
              {assign("prefix", combine(acc, op, var("prefix"), detail::load_total(totals, sub(var("l"), u32(1)))))})};
}

// Every loop over an invocation's items is unrolled (I is the shape's), its
// global loads first and at indices clamped into the input, with no branch
// between them: so all I loads of an invocation are in flight at once. In a
// loop, each waited for the one before it, and a pass of 64 x 8 reached half
// of the copy's bandwidth (docs/benchmarks.md, "Standard kernels").
// One tile's scan, its elements x0 .. x(I-1) loaded from "base" on: stored
// to the tile, scanned, offset by the variable `offset`, stored to "out".
std::vector<Stmt> scan_tile(ScalarType acc, ReduceOp op, ScanKind kind, const ReduceShape& shape,
                            const std::string& offset, detail::TotalsArray& result) {
  const uint32_t w = shape.workgroup;
  const uint32_t items = shape.items;
  std::vector<Stmt> body;
  for (uint32_t k = 0; k < items; ++k)
    body.push_back(store("tile", at(add(u32(k * w), var("l"))),
                         select(lt(add(var("base"), u32(k * w)), len("in")), var(numbered("x", k)), identity(acc, op))));
  body.push_back(barrier());
  // The invocation's own run, scanned in registers: y_k is the scan up to
  // element k (inclusive) or before it (exclusive).
  body.push_back(let("run", mul(var("l"), u32(items))));
  for (Stmt& s : scan_in_registers(acc, op, kind, items, [](uint32_t k) { return load("tile", at(add(var("run"), u32(k)))); }))
    body.push_back(std::move(s));
  // The invocations' totals scanned, the tile's first W words the spare
  // array (every invocation has read its run from the tile by the barrier).
  body.push_back(store("sums", var("l"), var("acc")));
  body.push_back(barrier());
  const detail::ScannedTotals totals = detail::scan_totals(acc, op, w, {"sums", 0}, {"tile", 0});
  for (const Stmt& s : totals.steps) body.push_back(s);
  for (Stmt& s : add_prefix(acc, op, totals.result, offset)) body.push_back(std::move(s));
  result = totals.result;
  return body;
}

// The tile's scanned elements, through the tile in workgroup memory, to "out".
std::vector<Stmt> store_tile(ScalarType acc, ReduceOp op, const ReduceShape& shape) {
  const uint32_t w = shape.workgroup;
  std::vector<Stmt> body;
  for (uint32_t k = 0; k < shape.items; ++k)
    body.push_back(store("tile", at(add(var("run"), u32(k))), combine(acc, op, var("prefix"), var(numbered("y", k)))));
  body.push_back(barrier());
  for (uint32_t k = 0; k < shape.items; ++k)
    body.push_back(if_(lt(add(var("base"), u32(k * w)), len("out")),
                       {store("out", add(var("base"), u32(k * w)), load("tile", at(add(u32(k * w), var("l")))))}));
  return body;
}

// Every loop over an invocation's items is unrolled (I is the shape's), its
// global loads first and at indices clamped into the input, with no branch
// between them: so all I loads of an invocation are in flight at once. In a
// loop, each waited for the one before it, and a pass of 64 x 8 reached half
// of the copy's bandwidth (docs/benchmarks.md, "Standard kernels").
//
// A workgroup scans `tiles` consecutive tiles of W*I, one after another, the
// running total carried from each to the next: its span, whose offset
// "offsets" holds, is tiles*W*I elements.
CheckedProgram build_scan_pass(const std::string& name, ScalarType type, ReduceOp op, ScanKind kind,
                               const ReduceShape& shape, uint32_t tiles, bool prefetch) {
  const uint32_t w = shape.workgroup;
  const ScalarType acc = accumulator_type(type);
  const auto append = [](std::vector<Stmt>& to, std::vector<Stmt> from) {
    for (Stmt& s : from) to.push_back(std::move(s));
  };
  // The span is loaded and stored with neighbouring invocations at
  // neighbouring elements (k*W + l); each invocation scans its own I
  // consecutive elements (l*I + k) in workgroup memory in between.
  std::vector<Stmt> body = {let("l", lid()), let("g", add(wid(), mul(wid(Axis::Y), nwg())))};
  detail::TotalsArray totals{"sums", 0};
  if (tiles == 1) {
    append(body, load_elements(type, shape, "base", var("g"), var("l"), w, true));
    // The span's offset loaded with the elements, its wait behind theirs (on
    // the H100, 2.1 % off a scan of 2^28 u32, where it was loaded after the
    // totals' scan).
    body.push_back(let("span_offset", load("offsets", var("g"))));
    append(body, scan_tile(acc, op, kind, shape, "span_offset", totals));
    // Totals read from the tile are read by all before the tile is written.
    if (totals.buffer == "tile") body.push_back(barrier());
    append(body, store_tile(acc, op, shape));
  } else {
    // Prefetched: the next tile's elements are loaded as soon as this
    // tile's are in workgroup memory, so that their wait overlaps this
    // tile's scan; else each tile loads its own at its turn.
    const uint32_t tile_elements = shape.workgroup * shape.items;
    body.push_back(let("last", sub(len("in"), u32(1))));
    if (prefetch) append(body, load_elements(type, shape, "base", mul(var("g"), u32(tiles)), var("l"), w, false));
    body.push_back(let("carry", load("offsets", var("g"))));
    std::vector<Stmt> step;
    if (!prefetch) step = load_elements(type, shape, "base", add(mul(var("g"), u32(tiles)), var("t")), var("l"), w, false);
    const size_t stored = step.size() + shape.items + 1;  // after the stores of x to the tile and their barrier
    append(step, scan_tile(acc, op, kind, shape, "carry", totals));
    if (prefetch) {
      std::vector<Stmt> next;
      for (uint32_t k = 0; k < shape.items; ++k)
        next.push_back(assign(numbered("x", k),
                              detail::widened(type, load("in", min(add(var("base"), u32(tile_elements + k * w)), var("last"))))));
      step.insert(step.begin() + static_cast<std::ptrdiff_t>(stored), if_(lt(var("t"), u32(tiles - 1)), std::move(next)));
    }
    // The tile's total, read with the prefix (before the tile or the totals
    // are written again), carried to the next tile.
    step.push_back(assign("carry", combine(acc, op, var("carry"), detail::load_total(totals, u32(w - 1)))));
    if (totals.buffer == "tile") step.push_back(barrier());
    append(step, store_tile(acc, op, shape));
    if (prefetch) step.push_back(assign("base", add(var("base"), u32(tile_elements))));
    body.push_back(loop("t", u32(0), u32(tiles), std::move(step)));
  }
  return ProgramBuilder(name)
      .workgroup_size(w)
      .input("in", 0, type)
      .input("offsets", 1, acc)
      .output("out", 2, acc)
      .workgroup_buffer("tile", acc, static_cast<uint32_t>(tile_size(shape)))
      .workgroup_buffer("sums", acc, w)
      .body(std::move(body))
      .build();
}

const CheckedProgram& checked_scan_pass(ScalarType type, ReduceOp op, ScanKind kind, const ReduceShape& shape,
                                        uint32_t tiles = 1, bool prefetch = false) {
  check(type, op, shape);
  std::string name = "scan_" + std::string(kind == ScanKind::Inclusive ? "inclusive" : "exclusive") + "_" +
                     std::string(to_string(op)) + "_" + std::string(vyre::to_string(type)) + "_w" +
                     std::to_string(shape.workgroup) + "_i" + std::to_string(shape.items);
  if (tiles > 1) name += "_t" + std::to_string(tiles) + (prefetch ? "p" : "");
  return detail::memo_program(name, [&] { return build_scan_pass(name, type, op, kind, shape, tiles, prefetch && tiles > 1); });
}

}  // namespace

namespace detail {

namespace {
// The first pass's workgroup (its span kept: W*I*T / w items each), 0 for
// the scan's own, which is also kept where w does not divide the span or the
// items would pass reduce's 64; a benchmark switch.
std::atomic<uint32_t> g_first_pass_workgroup{0};
// The tiles each workgroup of the last pass scans (T; 0: the device's
// default), and whether it loads each tile's elements during the scan of the
// tile before; benchmark switches.
std::atomic<uint32_t> g_tiles_per_workgroup{0};
std::atomic<bool> g_tiles_prefetched{false};

// The span of the first pass at shape `shape` of the last pass's tiles:
// tiles*W*I elements, taken by a workgroup of the switch's, or of the
// scan's own W, doubled while that leaves more than 16 items each (reduce's
// fastest, 512 x 16, takes 16).
ReduceShape first_pass_shape(const ReduceShape& shape, uint32_t tiles) {
  const uint32_t span = shape.workgroup * shape.items * tiles;
  const uint32_t w = g_first_pass_workgroup.load();
  if (w != 0 && span % w == 0 && span / w <= 64) return {w, span / w};
  ReduceShape first{shape.workgroup, span / shape.workgroup};
  while (tiles > 1 && first.items > 16 && first.items % 2 == 0 && first.workgroup < 1024) {
    first.workgroup *= 2;
    first.items /= 2;
  }
  return first;
}
}  // namespace

void set_scan_first_pass_workgroup(uint32_t w) { g_first_pass_workgroup = w; }
void set_scan_tiles_per_workgroup(uint32_t tiles, bool prefetched) {
  g_tiles_per_workgroup = tiles;
  g_tiles_prefetched = prefetched;
}

ScanTiles default_scan_tiles(const gpu::Backend& backend, uint64_t elements, const ReduceShape& shape) {
  if (const uint32_t tiles = g_tiles_per_workgroup.load(); tiles != 0) return {tiles, g_tiles_prefetched.load()};
  // Measured on the H100 (docs/lib.md, "scan"): 16 tiles, prefetched, took
  // 7 % off a scan of 2^28 u32 at 64 x 8 (its first pass then reduces spans
  // of 8,192 at 512 x 16, reduce's fastest shape, and the levels below
  // shrink); 2, 4 and 8 tiles were slower than 1. Only where the workgroups
  // left are still many: kTiledScanGroups.
  if (device_class(backend) == "nvidia" &&
      elements / (uint64_t{shape.workgroup} * shape.items * kNvidiaScanTiles) >= kTiledScanGroups)
    return {kNvidiaScanTiles, true};
  return {};
}

ScanPlan::ScanPlan(gpu::Backend& backend, gpu::Batch& batch, std::deque<Pass>& passes, ScalarType type, ReduceOp op,
                   ScanKind kind, const ReduceShape& shape, const ScanTiles& tiles)
    : backend_(backend),
      type_(accumulator_type(type)),
      op_(op),
      kind_(kind),
      shape_(shape),
      tiles_(tiles.count),
      batch_(batch),
      passes_(passes),
      reduce_top_(gpu::detail::kept_pipeline(backend, checked_reduce_pass(type, op, first_pass_shape(shape, tiles_)))),
      reduce_(gpu::detail::kept_pipeline(backend, checked_reduce_pass(type_, op, first_pass_shape(shape, tiles_)))),
      last_(gpu::detail::kept_pipeline(backend, checked_scan_pass(type, op, kind, shape, tiles_, tiles.prefetched))),
      inner_(gpu::detail::kept_pipeline(
          backend, checked_scan_pass(type_, op, ScanKind::Exclusive, shape, tiles_, tiles.prefetched))) {}

std::shared_ptr<gpu::DeviceBuffer> ScanPlan::record(const std::shared_ptr<gpu::DeviceBuffer>& values) {
  // A user's exclusive float sum starts from +0 (the sum of nothing, as
  // NumPy's); the spans' offsets start from the identity, so negative zeros
  // stay negative.
  const uint64_t first = kind_ == ScanKind::Exclusive && op_ == ReduceOp::Sum ? 0 : identity_bits(type_, op_);
  return level(values, true, first);
}

// Scans `values` (the caller's at the top level, the spans' sums below it),
// the first span starting from `first`.
std::shared_ptr<gpu::DeviceBuffer> ScanPlan::level(const std::shared_ptr<gpu::DeviceBuffer>& values, bool top,
                                                   uint64_t first) {
  const uint32_t n = values->elements();
  const uint32_t groups = groups_for(n, {shape_.workgroup, shape_.items * tiles_});
  Pass& pass = passes_.emplace_back();
  if (groups == 1) {
    pass.inputs.bytes("offsets", bytes_of(first, type_));
  } else {
    Pass& sums = passes_.emplace_back();
    sums.inputs.device("in", values).size("out", groups);
    sums.outputs = batch_.dispatch_resident(top ? reduce_top_ : reduce_, sums.inputs, grid_for(groups));
    pass.inputs.device("offsets", level(sums.outputs.get("out"), false, first));
  }
  // Every element of "out" is written: a buffer of the pool's, not cleared.
  pass.inputs.device("in", values).device("out", gpu::detail::unfilled_buffer(backend_, n, type_, "scan's result"));
  pass.outputs = batch_.dispatch_resident(top ? last_ : inner_, pass.inputs, grid_for(groups));
  return pass.outputs.get("out");
}

}  // namespace detail

Program scan_pass(ScalarType type, ReduceOp op, ScanKind kind, const ReduceShape& shape) {
  return checked_scan_pass(type, op, kind, shape).program();
}

namespace detail {
Program scan_tiles_pass(ScalarType type, ReduceOp op, ScanKind kind, const ReduceShape& shape, uint32_t tiles,
                        bool prefetched) {
  return checked_scan_pass(type, op, kind, shape, tiles, prefetched).program();
}

ReduceShape scan_first_pass_shape(const ReduceShape& shape, uint32_t tiles) { return first_pass_shape(shape, tiles); }
}  // namespace detail

ReduceShape default_scan_shape(const gpu::Backend& backend, ScalarType type) {
  // Measured: tuning's choice for an inclusive sum of 2^28 u32 on the H200
  // (64 x 8 and 64 x 4, 1.46x the former default 128 x 16 in both runs) and
  // the fastest for 2^22 on lavapipe (docs/benchmarks.md, "Standard
  // kernels"); a shape whose tile would not fit this type's workgroup memory
  // (f64) gives way to 256 x 4.
  const std::string device = detail::device_class(backend);
  const ReduceShape shape = device == "cpu" ? ReduceShape{64, 32} : device == "nvidia" ? ReduceShape{64, 8} : ReduceShape{256, 8};
  try {
    check(type, ReduceOp::Sum, shape);
    return shape;
  } catch (const Error&) {
    return {256, 4};
  }
}

namespace {

std::shared_ptr<gpu::DeviceBuffer> scan_with(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& values,
                                             ReduceOp op, ScanKind kind, const ReduceShape& shape) {
  gpu::Batch batch(backend);
  std::deque<detail::Pass> passes;
  detail::ScanPlan plan(backend, batch, passes, values->type(), op, kind, shape,
                        detail::default_scan_tiles(backend, values->elements(), shape));
  std::shared_ptr<gpu::DeviceBuffer> out = plan.record(values);
  batch.run();
  return out;
}

detail::TunableFamily family_of(const gpu::Backend& backend, ScalarType type, ReduceOp op, ScanKind kind,
                                uint64_t elements) {
  return {"scan " + std::string(vyre::to_string(type)) + " " + std::string(to_string(op)) +
              (kind == ScanKind::Inclusive ? " inclusive" : " exclusive"),
          detail::size_class_of(elements),
          detail::span_candidates(
              [&](const ReduceShape& s) { return detail::accepted([&] { check(type, op, s); }); }),
          detail::values_of(default_scan_shape(backend, type))};
}

}  // namespace

std::shared_ptr<gpu::DeviceBuffer> scan(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& values,
                                        ReduceOp op, ScanKind kind, const std::optional<ReduceShape>& shape,
                                        const Options& options) {
  if (!values) throw Error(ErrorKind::invalid_input, "scan: the buffer is null");
  detail::check_type_and_op("scan", values->type(), op);
  if (shape) check(values->type(), op, *shape);
  if (values->elements() == 0) return backend.upload(std::vector<uint8_t>{}, accumulator_type(values->type()));
  const ReduceShape chosen = detail::choose<ReduceShape>(
      backend, shape, family_of(backend, values->type(), op, kind, values->elements()), options, detail::values_of,
      detail::reduce_shape_of, [&](const ReduceShape& s) { (void)scan_with(backend, values, op, kind, s); });
  return scan_with(backend, values, op, kind, chosen);
}

std::vector<uint8_t> scan_bytes(gpu::Backend& backend, std::span<const uint8_t> bytes, ScalarType type, ReduceOp op,
                                ScanKind kind, const std::optional<ReduceShape>& shape, const Options& options) {
  detail::check_type_and_op("scan", type, op);
  if (shape) check(type, op, *shape);
  if (detail::element_count("scan", bytes.size(), type) == 0) return {};
  return scan(backend, backend.upload(bytes, type), op, kind, shape, options)->read();
}

}  // namespace vyre::lib
