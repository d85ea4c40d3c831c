// f64 (format version 4): the format's forms (JSON, wire, validation with
// the operators Vulkan lacks for 64-bit floats), the reference's binary64
// arithmetic, and the GPU: every operator on edge values where the device
// has shader-f64, a refusal with the reason where it does not
// (VYRE_MASK_FEATURES makes that path run on any device).
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "ir/scalar_ops.hpp"
#include "support/lowering_backend.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"
#include "vyre/json.hpp"
#include "vyre/lower.hpp"
#include "vyre/reference.hpp"
#include "vyre/validate.hpp"
#include "vyre/wire.hpp"

using namespace vyre;
using namespace vyre::build;

namespace {

uint64_t bits(double v) { return std::bit_cast<uint64_t>(v); }
double value(uint64_t b) { return std::bit_cast<double>(b); }

// out[i] = a[i] * 0.1 + b[i]; c[i] = i32(a[i]).
Program axpy_program() {
  return ProgramBuilder("f64_axpy")
      .workgroup_size(64)
      .input("a", 0, ScalarType::F64)
      .input("b", 1, ScalarType::F64)
      .output("out", 2, ScalarType::F64)
      .output("c", 3, ScalarType::I32)
      .body({let("i", gid()), if_(ge(var("i"), len("out")), {return_()}),
             store("out", var("i"), add(mul(load("a", var("i")), f64(0.1)), load("b", var("i")))),
             store("c", var("i"), cast(ScalarType::I32, load("a", var("i"))))})
      .build();
}

std::string store_doc(int version, const std::string& literal) {
  return R"({"vyre": )" + std::to_string(version) + R"(, "workgroup_size": [1, 1, 1], "buffers": [
    {"name": "out", "binding": 0, "access": "read_write", "type": "f64", "output": true}],
    "body": [{"store": "out", "index": {"u32": 0}, "value": )" + literal + "}]}";
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(F64Format, JsonHoldsAllSixtyFourBitsOfALiteral) {
  const CheckedProgram p = program_from_json(store_doc(4, R"({"f64": 0.1})"));
  EXPECT_EQ(p.program().buffers[0].type, ScalarType::F64);
  EXPECT_EQ(p.program().body[0].exprs[1].op, Op::LitF64);
  EXPECT_EQ(p.program().body[0].exprs[1].imm, bits(0.1));  // the double nearest 0.1, not the float
  EXPECT_EQ(format_version(p.program()), 4u);
  EXPECT_TRUE(uses_f64(p.program()));
  EXPECT_FALSE(uses_f16(p.program()));
  const std::string text = program_to_json(p.program());
  EXPECT_NE(text.find(R"({"f64": 0.1})"), std::string::npos) << text;
  EXPECT_EQ(program_from_json(text).program(), p.program());
  const auto literal = [](const std::string& l) { return program_from_json(store_doc(4, l)).program().body[0].exprs[1].imm; };
  EXPECT_EQ(literal(R"({"f64": "-inf"})"), bits(-INFINITY));
  EXPECT_EQ(literal(R"({"f64": 5e-324})"), 1u);               // the smallest subnormal
  EXPECT_EQ(literal(R"({"f64": 1e-400})"), 0u);               // below it: zero
  EXPECT_EQ(literal(R"({"f64": 16777217.5})"), bits(16777217.5));
  EXPECT_NE(error_of([] { program_from_json(store_doc(3, R"({"f64": 1})")); }).find("format version 4"), std::string::npos);
  // Beyond binary64: JSON's number reader refuses it, naming the number.
  EXPECT_NE(error_of([] { program_from_json(store_doc(4, R"({"f64": 1e400})")); }).find("1e400"), std::string::npos);
  // Every finite value's JSON text reads back to its bits.
  for (double v : {0.1, -0.0, 5e-324, DBL_MAX, -DBL_MIN, 1.0 / 3.0, 123456789.123456789}) {
    const Program q = ProgramBuilder("q").output("out", 0, ScalarType::F64, 1).body({store("out", u32(0), f64(v))}).build();
    EXPECT_EQ(program_from_json(program_to_json(q)).program(), q) << v;
  }
}

TEST(F64Format, WireKeepsSixtyFourBitsWithOneNaNAndTruncationsAreRefused) {
  const Program p = axpy_program();
  const auto bytes = to_wire(p);
  EXPECT_EQ(bytes[4], 4);
  EXPECT_EQ(to_wire(from_wire(bytes)), bytes);
  EXPECT_EQ(digest(from_wire(bytes)), digest(p));
  auto literal_program = [](uint64_t b) {
    return ProgramBuilder("lit").output("out", 0, ScalarType::F64, 1).body({store("out", u32(0), f64_bits(b))}).build();
  };
  EXPECT_EQ(digest(literal_program(0x7ff8000000000001ull)), digest(literal_program(0xfff0000000000001ull)));
  EXPECT_NE(digest(literal_program(0x7ff8000000000000ull)), digest(literal_program(0x7ff0000000000000ull)));
  // The high word is part of the identity: 1.0 and 1.0 + 2^-52 differ only there... and in the low one.
  EXPECT_NE(digest(literal_program(bits(1.0))), digest(literal_program(bits(1.0) + 1)));
  EXPECT_NE(digest(literal_program(bits(1.0))), digest(literal_program(bits(1.0) ^ (uint64_t{1} << 40))));
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_THROW(from_wire(std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n))), Error);
}

// Vulkan's GLSL.std.450 defines exp, exp2, log, log2, sin, cos, tan, tanh,
// pow and atan2 for 16- and 32-bit floats only: refused for f64 at the
// operator's path. Everything else a float has is there.
TEST(F64Format, ValidationRefusesWhatVulkanLacksForF64) {
  const auto problems = [](Expr value, Access access = Access::ReadWrite) {
    ProgramBuilder b("t");
    b.workgroup_size(1).output("out", 0, ScalarType::F64, 1).body({store("out", u32(0), std::move(value))});
    Program p = b.unchecked();
    p.buffers[0].access = access;
    p.buffers[0].output = access == Access::ReadWrite;
    return validate(p);
  };
  for (Op op : {Op::Sqrt, Op::InverseSqrt, Op::Floor, Op::Ceil, Op::Round, Op::Trunc, Op::Fract, Op::Abs, Op::Neg})
    EXPECT_TRUE(problems(unary(op, f64(2))).empty()) << op_info(op).json;
  EXPECT_TRUE(problems(fma(f64(2), f64(3), f64(-1))).empty());
  EXPECT_TRUE(problems(clamp(rem(f64(7), f64(2)), min(f64(0), f64(1)), max(f64(3), f64(4)))).empty());
  EXPECT_TRUE(problems(cast(ScalarType::F64, cast(ScalarType::F16, cast(ScalarType::F32, f64(1))))).empty());
  for (Op op : {Op::Exp, Op::Exp2, Op::Log, Op::Log2, Op::Sin, Op::Cos, Op::Tan, Op::Tanh}) {
    const auto ds = problems(unary(op, f64(2)));
    ASSERT_EQ(ds.size(), 1u) << op_info(op).json;
    EXPECT_NE(ds[0].message.find("is not defined for f64"), std::string::npos) << ds[0].message;
    EXPECT_NE(ds[0].path.find(std::string(op_info(op).json)), std::string::npos) << ds[0].path;
  }
  for (Expr e : {build::pow(f64(2), f64(3)), binary(Op::Atan2, f64(2), f64(3))}) {
    const auto ds = problems(std::move(e));
    ASSERT_EQ(ds.size(), 1u);
    EXPECT_NE(ds[0].message.find("is not defined for f64"), std::string::npos) << ds[0].message;
  }
  auto ds = problems(add(f64(1), f32(1)));
  ASSERT_FALSE(ds.empty());
  EXPECT_NE(ds[0].message.find("one type, got f64 and f32"), std::string::npos) << ds[0].message;
  ds = problems(bitcast(ScalarType::F64, u32(1)));
  ASSERT_FALSE(ds.empty());
  EXPECT_NE(ds[0].message.find("an f64 has 64 bits"), std::string::npos) << ds[0].message;
  ds = problems(f64(1), Access::Uniform);
  bool uniform_refused = false;
  for (const auto& d : ds) uniform_refused |= d.message.find("not uniform ones") != std::string::npos;
  EXPECT_TRUE(uniform_refused);
  // A 32-bit literal holds 32 bits, though Expr::imm is 64 wide for f64's sake.
  Expr wide = u32(1);
  wide.imm = uint64_t{1} << 32;
  ProgramBuilder b("wide");
  b.output("out", 0, ScalarType::U32, 1).body({store("out", u32(0), wide)});
  ds = validate(b.unchecked());
  ASSERT_FALSE(ds.empty());
  EXPECT_NE(ds[0].message.find("holds 32 bits"), std::string::npos) << ds[0].message;
}

TEST(F64Reference, ArithmeticIsBinary64AndConversionsSaturate) {
  const auto op = [](Op o, double a, double b) { return value(scalar::apply_binary(o, ScalarType::F64, bits(a), bits(b))); };
  EXPECT_EQ(op(Op::Add, 0.1, 0.2), 0.30000000000000004);  // binary64's own rounding
  EXPECT_EQ(op(Op::Mul, 1e300, 1e10), INFINITY);
  EXPECT_EQ(op(Op::Mul, 1e-300, 1e-10), 1e-310);          // a subnormal, kept
  EXPECT_EQ(op(Op::Div, 1.0, 3.0), 1.0 / 3.0);
  EXPECT_EQ(op(Op::Rem, -7.5, 2.0), -1.5);                // the dividend's sign
  EXPECT_EQ(scalar::apply_binary(Op::Lt, ScalarType::F64, bits(1.0), bits(1.0 + DBL_EPSILON)), 1u);
  EXPECT_EQ(value(scalar::apply_unary(Op::Sqrt, ScalarType::F64, bits(2.0))), std::sqrt(2.0));
  EXPECT_EQ(value(scalar::apply_unary(Op::Round, ScalarType::F64, bits(2.5))), 2.0);  // ties to even
  EXPECT_EQ(value(scalar::apply_unary(Op::Fract, ScalarType::F64, bits(-1.25))), 0.75);
  EXPECT_EQ(value(scalar::apply_ternary(Op::Fma, ScalarType::F64, bits(0.1), bits(10.0), bits(-1.0))),
            std::fma(0.1, 10.0, -1.0));
  const auto cast_to = [](ScalarType t, double v) { return scalar::apply_cast(ScalarType::F64, t, bits(v)); };
  EXPECT_EQ(cast_to(ScalarType::U32, 4294967295.9), 4294967295u);
  EXPECT_EQ(cast_to(ScalarType::U32, 1e300), 4294967295u);
  EXPECT_EQ(cast_to(ScalarType::U32, -1.0), 0u);
  EXPECT_EQ(cast_to(ScalarType::U32, NAN), 0u);
  EXPECT_EQ(cast_to(ScalarType::I32, -2147483648.9), static_cast<uint32_t>(INT32_MIN));
  EXPECT_EQ(cast_to(ScalarType::I32, -INFINITY), static_cast<uint32_t>(INT32_MIN));
  EXPECT_EQ(cast_to(ScalarType::I32, 2147483647.5), static_cast<uint32_t>(INT32_MAX));
  EXPECT_EQ(cast_to(ScalarType::I32, -3.99), static_cast<uint32_t>(-3));
  EXPECT_EQ(cast_to(ScalarType::F32, 16777217.0), std::bit_cast<uint32_t>(16777216.0f));  // to nearest even
  EXPECT_EQ(cast_to(ScalarType::F16, 65520.0), 0x7c00u);                                 // rounded once, to infinity
  EXPECT_EQ(cast_to(ScalarType::Bool, -0.0), 0u);
  EXPECT_EQ(scalar::apply_cast(ScalarType::U32, ScalarType::F64, 4294967295u), bits(4294967295.0));
  EXPECT_EQ(scalar::apply_cast(ScalarType::I32, ScalarType::F64, static_cast<uint32_t>(-5)), bits(-5.0));
  EXPECT_EQ(scalar::apply_cast(ScalarType::F16, ScalarType::F64, 0x0001u), bits(0x1p-24));
}

gpu::Backend& backend() { return vyre::test::lowering_backend(); }

bool device_has_f64() {
  try {
    backend().compile(axpy_program());
    return true;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::limit_exceeded) throw;
    return false;
  }
}

bool is_subnormal(double v) { return v != 0.0 && std::fabs(v) < DBL_MIN; }
// Distance in units in the last place, for finite values of one sign.
int64_t ordered(double v) {
  const auto b = static_cast<int64_t>(bits(v) & 0x7fffffffffffffffull);
  return std::signbit(v) ? -b : b;
}

const std::vector<double> kEdges = {0.0,  -0.0, 5e-324, DBL_MIN, 1.0,      -2.5,     0.1,       16777217.5,
                                    3e9,  -3e9, 1e300,  -1e300, DBL_MAX, INFINITY, -INFINITY, NAN};

// Every operator on every pair of edge values, on the GPU and in the
// reference. Exact: + - * min max abs neg floor ceil round trunc fract, the
// comparisons and every conversion (a subnormal may be flushed to zero).
// Within 4 ULPs where the reference is finite and normal: / sqrt
// inverse_sqrt. fma within the rounding of an unfused a*b+c, and rem, whose
// quotient's truncation turns on the division's last bit, where both sides
// truncated it to the same integer.
TEST(F64Gpu, EveryOperatorOnEdgeValuesAgreesWithTheReference) {
  if (!device_has_f64()) GTEST_SKIP() << "the device has no shader-f64 (the refusal is tested below)";
  const std::vector<Op> exact_binary = {Op::Add, Op::Sub, Op::Mul, Op::Min, Op::Max};
  const std::vector<Op> exact_unary = {Op::Abs, Op::Neg, Op::Floor, Op::Ceil, Op::Round, Op::Trunc, Op::Fract};
  const std::vector<Op> near_unary = {Op::Sqrt, Op::InverseSqrt};
  const uint32_t per_exact = static_cast<uint32_t>(exact_binary.size() + exact_unary.size() + 2);  // + f32, f16 round trips
  const uint32_t per_near = static_cast<uint32_t>(near_unary.size() + 3);                          // + div, fma, rem
  const uint32_t per_int = 4;  // u32, i32, compare, bool
  std::vector<double> a, b;
  for (double x : kEdges)
    for (double y : kEdges) a.push_back(x), b.push_back(y);
  auto at = [](uint32_t k, uint32_t per) { return add(mul(var("i"), u32(per)), u32(k)); };
  std::vector<Stmt> body = {let("i", gid()), if_(ge(var("i"), len("a")), {return_()}), let("x", load("a", var("i"))),
                            let("y", load("b", var("i")))};
  uint32_t k = 0;
  for (Op op : exact_binary) body.push_back(store("exact", at(k++, per_exact), binary(op, var("x"), var("y"))));
  for (Op op : exact_unary) body.push_back(store("exact", at(k++, per_exact), unary(op, var("x"))));
  body.push_back(store("exact", at(k++, per_exact), cast(ScalarType::F64, cast(ScalarType::F32, var("x")))));
  body.push_back(store("exact", at(k++, per_exact), cast(ScalarType::F64, cast(ScalarType::F16, var("x")))));
  k = 0;
  for (Op op : near_unary) body.push_back(store("near", at(k++, per_near), unary(op, var("x"))));
  body.push_back(store("near", at(k++, per_near), div(var("x"), var("y"))));
  body.push_back(store("near", at(k++, per_near), fma(var("x"), var("y"), f64(0.5))));
  body.push_back(store("near", at(k++, per_near), rem(var("x"), var("y"))));
  body.push_back(store("ints", at(0, per_int), cast(ScalarType::U32, var("x"))));
  body.push_back(store("ints", at(1, per_int), bitcast(ScalarType::U32, cast(ScalarType::I32, var("x")))));
  body.push_back(store("ints", at(2, per_int),
                       add(add(mul(select(lt(var("x"), var("y")), u32(1), u32(0)), u32(4)),
                               mul(select(eq(var("x"), var("y")), u32(1), u32(0)), u32(2))),
                           select(ge(var("x"), var("y")), u32(1), u32(0)))));
  body.push_back(store("ints", at(3, per_int), select(cast(ScalarType::Bool, var("x")), u32(1), u32(0))));
  const Program p = ProgramBuilder("f64_edges")
                        .workgroup_size(64)
                        .input("a", 0, ScalarType::F64)
                        .input("b", 1, ScalarType::F64)
                        .output("exact", 2, ScalarType::F64)
                        .output("near", 3, ScalarType::F64)
                        .output("ints", 4, ScalarType::U32)
                        .body(body)
                        .build();
  const auto n = static_cast<uint32_t>(a.size());
  Inputs in;
  in.set<double>("a", a).set<double>("b", b).size("exact", n * per_exact).size("near", n * per_near).size("ints", n * per_int);
  const Dim3 grid{(n + 63) / 64, 1, 1};
  const Outputs got = backend().compile(p).dispatch(in, grid);
  const Outputs ref = reference::run(p, in, {}, grid);
  EXPECT_EQ(got.get<uint32_t>("ints"), ref.get<uint32_t>("ints"));
  const auto ge = got.get<double>("exact"), re = ref.get<double>("exact");
  ASSERT_EQ(ge.size(), re.size());
  for (size_t j = 0; j < ge.size(); ++j) {
    const double x = a[j / per_exact], y = b[j / per_exact], g = ge[j], r = re[j];
    if (bits(g) == bits(r) || (std::isnan(g) && std::isnan(r))) continue;
    const bool flushed = g == 0.0 && (is_subnormal(r) || is_subnormal(x) || is_subnormal(y));
    const bool min_max_of_zeros = (j % per_exact == 3 || j % per_exact == 4) && x == 0.0 && y == 0.0;
    EXPECT_TRUE(flushed || (g == 0.0 && r == 0.0 && min_max_of_zeros))
        << "exact op " << j % per_exact << " on " << x << ", " << y << ": reference " << r << ", GPU " << g;
  }
  const auto gn = got.get<double>("near"), rn = ref.get<double>("near");
  for (size_t j = 0; j < gn.size(); ++j) {
    const uint32_t op = static_cast<uint32_t>(j % per_near);
    const double x = a[j / per_near], y = b[j / per_near], g = gn[j], r = rn[j];
    if (bits(g) == bits(r) || (std::isnan(g) && std::isnan(r))) continue;
    if (is_subnormal(x) || is_subnormal(y)) continue;  // a device may flush the operand
    if (op == per_near - 1) {  // rem: x - y * trunc(x / y), with the device's division
      const double q = std::trunc(x / y);
      EXPECT_TRUE(!std::isfinite(q) || std::fabs(q) > 0x1p52 || std::fabs(g - r) <= std::fabs(y))
          << "rem on " << x << ", " << y << ": reference " << r << ", GPU " << g;
      continue;
    }
    if (op == per_near - 2) {  // fma: fused or a*b rounded first
      const double unfused = x * y + 0.5;
      EXPECT_TRUE(bits(g) == bits(unfused) || (std::isnan(g) && std::isnan(unfused)) ||
                  std::fabs(g - r) <= 0x1p-52 * std::max({std::fabs(x * y), 0.5, std::fabs(r)}))
          << "fma on " << x << ", " << y << ": reference " << r << ", GPU " << g;
      continue;
    }
    if (!std::isfinite(r) || is_subnormal(r) || r == 0.0) {
      ADD_FAILURE() << "op " << op << " on " << x << ", " << y << ": reference " << r << ", GPU " << g;
      continue;
    }
    EXPECT_LE(std::llabs(ordered(g) - ordered(r)), 4)
        << "op " << op << " on " << x << ", " << y << ": reference " << r << ", GPU " << g;
  }
}

// A private array of f64 (a register tile in double precision): a 4-term
// moving sum per invocation, on the GPU as in the reference.
TEST(F64Gpu, PrivateArraysHoldF64) {
  if (!device_has_f64()) GTEST_SKIP() << "the device has no shader-f64";
  const Program p =
      ProgramBuilder("f64_window")
          .workgroup_size(64)
          .input("x", 0, ScalarType::F64)
          .output("out", 1, ScalarType::F64)
          .body({let("i", gid()), if_(ge(var("i"), len("out")), {return_()}), array("w", ScalarType::F64, 4),
                 loop("k", u32(0), u32(4), {store("w", var("k"), load("x", add(var("i"), var("k"))))}),
                 let("s", f64(0)),
                 loop("k", u32(0), u32(4), {assign("s", add(var("s"), load("w", var("k"))))}),
                 store("out", var("i"), var("s"))})
          .build();
  std::vector<double> x(67);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 1.0 + static_cast<double>(i) * 0x1p-40;  // below f32's precision
  Inputs in;
  in.set<double>("x", x).size("out", 64);
  const auto got = backend().compile(p).dispatch(in).get<double>("out");
  EXPECT_EQ(got, reference::run(p, in).get<double>("out"));
  EXPECT_EQ(got[5], ((x[5] + x[6]) + x[7]) + x[8]);
}

// Vector widening applies to f64 buffers as to f32 ones (vec4<f64>).
TEST(F64Gpu, WideningReadsAndWritesVec4OfF64) {
  const Program p = ProgramBuilder("f64_axpy_wide")
                        .workgroup_size(64)
                        .input("a", 0, ScalarType::F64)
                        .input("b", 1, ScalarType::F64)
                        .output("out", 2, ScalarType::F64)
                        .body({let("i", gid()),
                               if_(lt(var("i"), len("out")),
                                   {store("out", var("i"), add(mul(load("a", var("i")), f64(0.1)), load("b", var("i"))))})})
                        .build();
  ShaderOptions wide;
  wide.vector_width = 4;
  EXPECT_NE(lower(p, wide).wgsl.find("array<vec4<f64>>"), std::string::npos);
  if (!device_has_f64()) GTEST_SKIP() << "the device has no shader-f64";
  for (const uint32_t n : {4u, 1001u}) {
    std::vector<double> a(n), b(n);
    for (uint32_t i = 0; i < n; ++i) a[i] = 1.0 / (i + 1), b[i] = static_cast<double>(i) * 0x1p-30;
    Inputs in;
    in.set<double>("a", a).set<double>("b", b).size("out", n);
    const auto got = backend().compile(p, wide).dispatch(in).get<double>("out");
    const auto want = reference::run(p, in).get<double>("out");
    ASSERT_EQ(got.size(), want.size());
    // A driver may contract a * 0.1 + b into one fused multiply-add (NVIDIA's
    // does, seen on the H200): either rounding is the program's result.
    int shown = 0;
    for (uint32_t i = 0; i < n && shown < 8; ++i)
      if (bits(got[i]) != bits(want[i]) && bits(got[i]) != bits(std::fma(a[i], 0.1, b[i]))) {
        ++shown;
        ADD_FAILURE() << "n " << n << ", element " << i << ": GPU " << std::hexfloat << got[i] << ", reference "
                      << want[i] << ", fused " << std::fma(a[i], 0.1, b[i]);
      }
  }
}

TEST(F64Gpu, AProgramRunsWhereTheDeviceHasShaderF64AndIsRefusedWhereItIsMasked) {
  const Program p = axpy_program();
  const std::string wgsl = lower_to_wgsl(p);
  EXPECT_NE(wgsl.find("0.1lf"), std::string::npos) << wgsl;
  EXPECT_EQ(wgsl.find("enable"), std::string::npos) << wgsl;  // naga needs no directive for f64
  EXPECT_NE(shaping_signature(p).find("shader-f64=2"), std::string::npos);
  EXPECT_EQ(shaping_signature(p).find("shader-f16"), std::string::npos);
  if (device_has_f64()) {
    Inputs in;
    in.set<double>("a", {1.5, 16777217.0, -1e300}).set<double>("b", {1.0, 0.0, 0.0}).size("out", 3).size("c", 3);
    const Outputs got = backend().compile(p).dispatch(in);
    const auto out = got.get<double>("out");
    EXPECT_TRUE(out[0] == 1.5 * 0.1 + 1.0 || out[0] == std::fma(1.5, 0.1, 1.0)) << out[0];  // fused or not
    EXPECT_EQ(out[1], 16777217.0 * 0.1);
    EXPECT_EQ(out[2], -1e300 * 0.1);
    EXPECT_EQ(got.get<int32_t>("c"), (std::vector<int32_t>{1, 16777217, INT32_MIN}));
    // Doubles kept on the GPU read back whole.
    const std::vector<double> kept = {0.1, -1e300, 5e-324};
    const auto buffer = backend().upload(kept);
    EXPECT_EQ(buffer->type(), ScalarType::F64);
    EXPECT_EQ(buffer->read_as<double>(), kept);
  }
  ASSERT_EQ(setenv("VYRE_MASK_FEATURES", "shader-f64", 1), 0);
  gpu::Backend masked;
  unsetenv("VYRE_MASK_FEATURES");
  const std::string refusal = error_of([&] { masked.compile(p); });
  EXPECT_NE(refusal.find("computes in f64, which needs the device feature shader-f64"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("VYRE_MASK_FEATURES"), std::string::npos) << refusal;
  const Program plain = ProgramBuilder("plain").output("out", 0, ScalarType::F32, 1).body({store("out", u32(0), f32(7))}).build();
  EXPECT_EQ(masked.compile(plain).dispatch(Inputs{}, Dim3{1, 1, 1}).get<float>("out"), std::vector<float>{7});
}

}  // namespace
