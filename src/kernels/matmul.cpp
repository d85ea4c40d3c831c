#include "vyre/lib/matmul.hpp"

#include <bit>
#include <functional>
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

// What WebGPU promises every device: invocations per workgroup
// (maxComputeInvocationsPerWorkgroup) and bytes of workgroup memory
// (maxComputeWorkgroupStorageSize).
constexpr uint32_t kMaxInvocations = 256;
constexpr uint64_t kWorkgroupStorageBytes = 16384;
// Register tiles beyond 8 x 8 spill on every device and cost llvmpipe long compiles.
constexpr uint32_t kMaxThreadTile = 8;
constexpr uint32_t kFloatBytes = 4;

// A's tile is staged transposed, tile_k rows of tile_m + 1 floats: invocations
// store it with neighbouring k at a stride of tile_m + 1 words, which the
// extra word spreads over the memory banks. B's tile is stored as it is read,
// neighbouring invocations at neighbouring words, and needs no padding.
uint32_t a_stride(const MatmulShape& s) { return s.tile_m + 1; }
uint64_t staged_floats(const MatmulShape& s) {
  return uint64_t{a_stride(s)} * s.tile_k + uint64_t{s.tile_k} * s.tile_n;
}

std::string text_of(const MatmulShape& s) {
  return std::to_string(s.tile_m) + "x" + std::to_string(s.tile_n) + "x" + std::to_string(s.tile_k) + " with " +
         std::to_string(s.thread_m) + "x" + std::to_string(s.thread_n) + " per invocation";
}

void check(const MatmulShape& s) {
  const auto refuse = [&](const std::string& why) {
    throw Error(ErrorKind::invalid_input, "matmul: shape " + text_of(s) + ": " + why);
  };
  for (const uint32_t tile : {s.tile_m, s.tile_n, s.tile_k})
    if (tile == 0 || tile > 1024 || !std::has_single_bit(tile)) refuse("tiles are powers of two from 1 to 1024");
  for (const uint32_t t : {s.thread_m, s.thread_n})
    if (t == 0 || t > kMaxThreadTile || !std::has_single_bit(t)) refuse("thread_m and thread_n are 1, 2, 4 or 8");
  if (s.thread_m > s.tile_m || s.thread_n > s.tile_n) refuse("an invocation's tile must fit in the workgroup's");
  const uint64_t invocations = uint64_t{s.tile_m / s.thread_m} * (s.tile_n / s.thread_n);
  if (invocations > kMaxInvocations)
    refuse("(tile_m / thread_m) x (tile_n / thread_n) is " + std::to_string(invocations) +
           " invocations; WebGPU promises 256: take larger thread tiles or smaller tiles");
  const uint64_t bytes = staged_floats(s) * kFloatBytes;
  if (bytes > kWorkgroupStorageBytes)
    refuse("the staged tiles need " + std::to_string(bytes) +
           " bytes of workgroup memory; WebGPU promises 16384: take a smaller tile_k");
}

std::string name_of(const MatmulShape& s) {
  return "matmul_f32_m" + std::to_string(s.tile_m) + "_n" + std::to_string(s.tile_n) + "_k" + std::to_string(s.tile_k) +
         "_t" + std::to_string(s.thread_m) + "x" + std::to_string(s.thread_n);
}

// One tile of a matrix to stage in workgroup memory: `rows` x `cols` of
// `source` from element (row0, col0), its rows `stride` apart, element (r, c)
// of the tile going to place(r, c) of workgroup buffer `stage`; elements at
// or past row_end or col_end are outside the matrix.
struct TileLoad {
  std::string source, stage, prefix;
  uint32_t rows = 0, cols = 0, invocations = 0;
  Expr row0, col0, stride, row_end, col_end;
  std::function<Expr(const Expr&, const Expr&)> place;
};

// The statements that stage it. Invocation t takes elements t, t + T,
// t + 2T, ... of the tile in row-major order, so that neighbouring
// invocations read neighbouring addresses (runs of `cols` floats). An
// element outside the matrix is staged as 0, which adds nothing to a
// product. (A branch-free path for tiles wholly inside, with no checks, was
// no faster on lavapipe: 0 to 10% slower at 256^3 and 512^3, docs/lib.md.)
std::vector<Stmt> stage_tile(const TileLoad& t) {
  const uint32_t elements = t.rows * t.cols;
  const uint32_t trips = (elements + t.invocations - 1) / t.invocations;
  std::vector<Stmt> out;
  for (uint32_t trip = 0; trip < trips; ++trip) {
    const std::string e = t.prefix + "e" + std::to_string(trip);
    const std::string r = t.prefix + "r" + std::to_string(trip);
    const std::string c = t.prefix + "c" + std::to_string(trip);
    std::vector<Stmt> one = {
        let(r, div(var(e), u32(t.cols))),
        let(c, rem(var(e), u32(t.cols))),
    };
    Expr row = add(t.row0, var(r));
    Expr col = add(t.col0, var(c));
    Expr inside = land(lt(row, t.row_end), lt(col, t.col_end));
    Expr value = select(std::move(inside), load(t.source, add(mul(row, t.stride), col)), f32(0.0f));
    one.push_back(store(t.stage, t.place(var(r), var(c)), std::move(value)));
    out.push_back(let(e, add(var("t"), u32(trip * t.invocations))));
    // Only when the tile has fewer elements than trips * invocations.
    if ((trip + 1) * t.invocations > elements)
      out.push_back(if_(lt(var(e), u32(elements)), std::move(one)));
    else
      for (Stmt& st : one) out.push_back(std::move(st));
  }
  return out;
}

CheckedProgram build_pass(const std::string& name, const MatmulShape& s) {
  const uint32_t nx = s.tile_n / s.thread_n;  // invocations along a row of C's tile
  const uint32_t ny = s.tile_m / s.thread_m;
  const uint32_t invocations = nx * ny;
  const uint32_t stride_a = a_stride(s);
  std::vector<Stmt> body = {
      let("tx", lid()),
      let("ty", lid(Axis::Y)),
      let("t", add(mul(var("ty"), u32(nx)), var("tx"))),
      let("g", add(wid(), mul(wid(Axis::Y), nwg()))),
      let("m", load("dims", u32(0))),
      let("n", load("dims", u32(1))),
      let("kd", load("dims", u32(2))),
      // ceil(n / tile_n), without n + tile_n - 1 wrapping.
      let("tiles_n", add(div(var("n"), u32(s.tile_n)), select(ne(rem(var("n"), u32(s.tile_n)), u32(0)), u32(1), u32(0)))),
      let("row0", mul(div(var("g"), var("tiles_n")), u32(s.tile_m))),
      let("col0", mul(rem(var("g"), var("tiles_n")), u32(s.tile_n))),
      array("acc", ScalarType::F32, s.thread_m * s.thread_n),
  };
  // Invocation (tx, ty) holds C's elements (row0 + ty + i*ny, col0 + tx + j*nx):
  // neighbouring invocations at neighbouring columns, so that their reads of
  // B's staged tile and their stores to C are at neighbouring words.
  const TileLoad a_tile{.source = "a",
                        .stage = "as",
                        .prefix = "a_",
                        .rows = s.tile_m,
                        .cols = s.tile_k,
                        .invocations = invocations,
                        .row0 = var("row0"),
                        .col0 = var("k0"),
                        .stride = var("kd"),
                        .row_end = var("m"),
                        .col_end = var("kd"),
                        .place = [stride_a](const Expr& r, const Expr& c) { return add(mul(c, u32(stride_a)), r); }};
  const TileLoad b_tile{.source = "b",
                        .stage = "bs",
                        .prefix = "b_",
                        .rows = s.tile_k,
                        .cols = s.tile_n,
                        .invocations = invocations,
                        .row0 = var("k0"),
                        .col0 = var("col0"),
                        .stride = var("n"),
                        .row_end = var("kd"),
                        .col_end = var("n"),
                        .place = [tile_n = s.tile_n](const Expr& r, const Expr& c) { return add(mul(r, u32(tile_n)), c); }};
  std::vector<Stmt> step = stage_tile(a_tile);
  for (Stmt& st : stage_tile(b_tile)) step.push_back(std::move(st));
  step.push_back(barrier());
  // The products of one staged step, unrolled: a loop over kk would count
  // against lavapipe's 65,535 loop iterations an invocation (K / tile_k
  // trips are left), and the register tile's indices are literals either way.
  for (uint32_t kk = 0; kk < s.tile_k; ++kk) {
    const std::string at_k = concat("_", std::to_string(kk));
    for (uint32_t i = 0; i < s.thread_m; ++i)
      step.push_back(let(concat("a", std::to_string(i), at_k), load("as", add(var("ty"), u32(kk * stride_a + i * ny)))));
    for (uint32_t j = 0; j < s.thread_n; ++j)
      step.push_back(let(concat("b", std::to_string(j), at_k), load("bs", add(var("tx"), u32(kk * s.tile_n + j * nx)))));
    for (uint32_t i = 0; i < s.thread_m; ++i)
      for (uint32_t j = 0; j < s.thread_n; ++j) {
        const uint32_t at = i * s.thread_n + j;
        step.push_back(store("acc", u32(at),
                             add(load("acc", u32(at)),
                                 mul(var(concat("a", std::to_string(i), at_k)), var(concat("b", std::to_string(j), at_k))))));
      }
  }
  step.push_back(barrier());
  body.push_back(loop("k0", u32(0), var("kd"), u32(s.tile_k), std::move(step)));

  for (uint32_t i = 0; i < s.thread_m; ++i)
    body.push_back(let(concat("r", std::to_string(i)), add(var("row0"), add(var("ty"), u32(i * ny)))));
  for (uint32_t j = 0; j < s.thread_n; ++j)
    body.push_back(let(concat("c", std::to_string(j)), add(var("col0"), add(var("tx"), u32(j * nx)))));
  const auto store_c = [&](uint32_t i, uint32_t j) {
    return store("c", add(mul(var(concat("r", std::to_string(i))), var("n")), var(concat("c", std::to_string(j)))),
                 load("acc", u32(i * s.thread_n + j)));
  };
  // Neighbouring invocations store neighbouring columns of C; only elements
  // inside it are stored.
  for (uint32_t i = 0; i < s.thread_m; ++i) {
    std::vector<Stmt> row;
    for (uint32_t j = 0; j < s.thread_n; ++j)
      row.push_back(if_(lt(var(concat("c", std::to_string(j))), var("n")), {store_c(i, j)}));
    body.push_back(if_(lt(var(concat("r", std::to_string(i))), var("m")), std::move(row)));
  }

  return ProgramBuilder(name)
      .workgroup_size(nx, ny)
      .input("a", 0, ScalarType::F32)
      .input("b", 1, ScalarType::F32)
      .input("dims", 2, ScalarType::U32, 3)
      .output("c", 3, ScalarType::F32)
      .workgroup_buffer("as", ScalarType::F32, stride_a * s.tile_k)
      .workgroup_buffer("bs", ScalarType::F32, s.tile_k * s.tile_n)
      .body(std::move(body))
      .build();
}

const CheckedProgram& checked_pass(const MatmulShape& s) {
  check(s);
  const std::string name = name_of(s);
  return detail::memo_program(name, [&] { return build_pass(name, s); });
}

detail::ShapeValues values_of(const MatmulShape& s) {
  return {{"tile_m", s.tile_m},
          {"tile_n", s.tile_n},
          {"tile_k", s.tile_k},
          {"thread_m", s.thread_m},
          {"thread_n", s.thread_n}};
}

MatmulShape shape_of(const detail::ShapeValues& v) {
  return {v.at(0).second, v.at(1).second, v.at(2).second, v.at(3).second, v.at(4).second};
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// The dispatch of one call with one shape, run and waited for.
std::shared_ptr<gpu::DeviceBuffer> matmul_with(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& a,
                                               const std::shared_ptr<gpu::DeviceBuffer>& b, uint32_t m, uint32_t n,
                                               uint32_t k, const MatmulShape& s) {
  gpu::Pipeline pipeline = gpu::detail::kept_pipeline(backend, checked_pass(s));
  const uint64_t groups = ceil_div(m, s.tile_m) * ceil_div(n, s.tile_n);
  if (groups > UINT32_MAX)
    throw Error(ErrorKind::limit_exceeded, "matmul: " + std::to_string(groups) + " workgroups of " + text_of(s) +
                                               "; a dispatch takes at most 4294967295: take larger tiles");
  gpu::Batch batch(backend);
  detail::Pass pass;
  pass.inputs.device("a", a).device("b", b).set<uint32_t>("dims", {m, n, k}).size("c", m * n);
  pass.outputs = batch.dispatch_resident(pipeline, pass.inputs, detail::grid_for(static_cast<uint32_t>(groups)));
  batch.run();
  return pass.outputs.get("c");
}

std::string size_class(uint32_t m, uint32_t n, uint32_t k) {
  using detail::log2_ceil;
  return "m 2^" + std::to_string(log2_ceil(m)) + " n 2^" + std::to_string(log2_ceil(n)) + " k 2^" +
         std::to_string(log2_ceil(k));
}

detail::TunableFamily family_of(const gpu::Backend& backend, uint32_t m, uint32_t n, uint32_t k) {
  detail::TunableFamily family{"matmul f32", size_class(m, n, k), {}, values_of(default_matmul_shape(backend))};
  for (const MatmulShape& s : matmul_candidates()) family.candidates.push_back(values_of(s));
  return family;
}

void check_sizes(uint64_t a, uint64_t b, uint32_t m, uint32_t n, uint32_t k) {
  const auto dims = [&] {
    return "M = " + std::to_string(m) + ", N = " + std::to_string(n) + ", K = " + std::to_string(k);
  };
  if (a != uint64_t{m} * k)
    throw Error(ErrorKind::invalid_input, "matmul: A has " + std::to_string(a) + " elements but " + dims() +
                                              " needs M * K = " + std::to_string(uint64_t{m} * k));
  if (b != uint64_t{k} * n)
    throw Error(ErrorKind::invalid_input, "matmul: B has " + std::to_string(b) + " elements but " + dims() +
                                              " needs K * N = " + std::to_string(uint64_t{k} * n));
  if (uint64_t{m} * n > UINT32_MAX)
    throw Error(ErrorKind::limit_exceeded, "matmul: C would have M * N = " + std::to_string(uint64_t{m} * n) +
                                               " elements; a buffer holds at most 4294967295: split A's rows");
}

}  // namespace

std::vector<MatmulShape> matmul_candidates() {
  return {
      {16, 16, 16, 1, 1},  {32, 32, 8, 2, 2},   {32, 32, 8, 4, 4},   {32, 32, 16, 4, 4},  {32, 64, 8, 4, 4},
      {64, 32, 8, 4, 4},   {64, 64, 8, 4, 4},   {64, 64, 16, 4, 4},  {64, 64, 8, 8, 8},   {64, 64, 16, 8, 8},
      {32, 32, 32, 4, 4},  {128, 64, 8, 8, 8},  {64, 128, 8, 8, 8},  {128, 64, 16, 8, 8}, {128, 128, 8, 8, 8},
      {64, 64, 8, 8, 4},
  };
}

MatmulShape default_matmul_shape(const gpu::Backend& backend) {
  // 128 x 128 x 8 with 8 x 8 an invocation: on lavapipe ("cpu") the fastest
  // of the candidates at 256^3 and 512^3 (docs/lib.md, "matmul"); on GPUs
  // the usual large tile, not yet measured here, so every class has it.
  (void)backend;
  return {128, 128, 8, 8, 8};
}

Program matmul_pass(const MatmulShape& shape) { return checked_pass(shape).program(); }

std::shared_ptr<gpu::DeviceBuffer> matmul(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& a,
                                          const std::shared_ptr<gpu::DeviceBuffer>& b, uint32_t m, uint32_t n,
                                          uint32_t k, const std::optional<MatmulShape>& shape,
                                          const Options& options) {
  if (!a || !b) throw Error(ErrorKind::invalid_input, "matmul: a buffer is null");
  for (const auto* buffer : {&a, &b})
    if ((*buffer)->type() != ScalarType::F32)
      throw Error(ErrorKind::invalid_input, std::string("matmul takes f32 matrices; ") + (buffer == &a ? "A" : "B") +
                                                " is " + std::string(vyre::to_string((*buffer)->type())) +
                                                ": convert it to f32 first");
  check_sizes(a->elements(), b->elements(), m, n, k);
  if (shape) check(*shape);
  if (uint64_t{m} * n == 0) return backend.upload(std::span<const float>{});
  if (k == 0) return backend.upload(std::vector<float>(size_t{m} * n, 0.0f));
  const MatmulShape chosen = detail::choose<MatmulShape>(
      backend, shape, family_of(backend, m, n, k), options, values_of, shape_of,
      [&](const MatmulShape& s) { (void)matmul_with(backend, a, b, m, n, k, s); });
  return matmul_with(backend, a, b, m, n, k, chosen);
}

std::vector<float> matmul(gpu::Backend& backend, std::span<const float> a, std::span<const float> b, uint32_t m,
                          uint32_t n, uint32_t k, const std::optional<MatmulShape>& shape, const Options& options) {
  check_sizes(a.size(), b.size(), m, n, k);
  if (shape) check(*shape);
  if (uint64_t{m} * n == 0) return {};
  if (k == 0) return std::vector<float>(size_t{m} * n, 0.0f);
  return matmul(backend, backend.upload(a), backend.upload(b), m, n, k, shape, options)->read_as<float>();
}

}  // namespace vyre::lib
