// f16 (format version 4): binary16 conversions, the format's forms (JSON,
// wire, validation), the reference's arithmetic, and the GPU: programs run
// where the device has shader-f16 and are refused, with the reason, where it
// does not (VYRE_MASK_FEATURES makes that path run on any device).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "ir/scalar_ops.hpp"
#include "support/lowering_backend.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"
#include "vyre/half.hpp"
#include "vyre/json.hpp"
#include "vyre/lower.hpp"
#include "vyre/reference.hpp"
#include "vyre/validate.hpp"
#include "vyre/wire.hpp"

using namespace vyre;
using namespace vyre::build;

namespace {

uint16_t bits(double v) { return to_half(v).bits; }

TEST(Half, RoundsToNearestEvenWithSubnormalsAndOverflow) {
  EXPECT_EQ(bits(1.0), 0x3c00);
  EXPECT_EQ(bits(-2.0), 0xc000);
  EXPECT_EQ(bits(65504.0), 0x7bff);           // the largest half
  EXPECT_EQ(bits(65519.99), 0x7bff);          // below halfway to 2^16: down
  EXPECT_EQ(bits(65520.0), 0x7c00);           // halfway, to even: infinity
  EXPECT_EQ(bits(0x1p-24), 0x0001);           // the smallest subnormal
  EXPECT_EQ(bits(0x1p-25), 0x0000);           // halfway to it: to even, zero
  EXPECT_EQ(bits(0x1.8p-25), 0x0001);         // above halfway: up
  EXPECT_EQ(bits(-0x1p-26), 0x8000);          // a negative zero
  EXPECT_EQ(bits(0x1.ffcp-15), 0x0400);       // 1023.5 units, a tie, rounds up out of the subnormals to the smallest normal
  EXPECT_EQ(bits(1.0 + 0x1p-11), 0x3c00);     // a tie between 1 and its successor: to even
  EXPECT_EQ(bits(1.0 + 0x3p-11), 0x3c02);     // a tie between odd and even: to even
  EXPECT_EQ(bits(2047.5), 0x6800);            // between 2047 (odd) and 2048 (even): 2048
  EXPECT_EQ(bits(std::numeric_limits<double>::infinity()), 0x7c00);
  EXPECT_EQ(bits(std::nan("")) & 0x7e00, 0x7e00);
  // Every half reads back to itself.
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const half h{static_cast<uint16_t>(b)};
    const double v = to_double(h);
    if (std::isnan(v)) continue;
    ASSERT_EQ(to_half(v).bits, b) << std::hex << b;
  }
}

}  // namespace

namespace {

// out[i] = a[i] * b[i] + 0.5 in f16, and c[i] = u32(a[i]) (through f32).
Program scale_program() {
  return ProgramBuilder("f16_scale")
      .workgroup_size(64)
      .input("a", 0, ScalarType::F16)
      .input("b", 1, ScalarType::F16)
      .output("out", 2, ScalarType::F16)
      .output("c", 3, ScalarType::U32)
      .body({let("i", gid()), if_(ge(var("i"), len("out")), {return_()}),
             store("out", var("i"), add(mul(load("a", var("i")), load("b", var("i"))), f16(0.5))),
             store("c", var("i"), cast(ScalarType::U32, load("a", var("i"))))})
      .build();
}

TEST(F16Format, JsonHoldsF16BuffersLiteralsAndConversionsFromVersion4) {
  const auto doc = [](int version, const std::string& literal) {
    return R"({"vyre": )" + std::to_string(version) + R"(, "workgroup_size": [1, 1, 1], "buffers": [
      {"name": "out", "binding": 0, "access": "read_write", "type": "f16", "output": true}],
      "body": [{"store": "out", "index": {"u32": 0}, "value": )" + literal + "}]}";
  };
  const CheckedProgram p = program_from_json(doc(4, R"({"f16": 0.1})"));
  EXPECT_EQ(p.program().buffers[0].type, ScalarType::F16);
  EXPECT_EQ(p.program().body[0].exprs[1].op, Op::LitF16);
  EXPECT_EQ(p.program().body[0].exprs[1].imm, 0x2e66u);  // the half nearest 0.1
  EXPECT_EQ(format_version(p.program()), 4u);
  EXPECT_TRUE(uses_f16(p.program()));
  const std::string text = program_to_json(p.program());
  EXPECT_NE(text.find(R"({"f16": 0.1})"), std::string::npos) << text;  // the shortest decimal reading back to it
  EXPECT_EQ(program_from_json(text).program(), p.program());
  EXPECT_EQ(program_from_json(doc(4, R"({"f16": "-inf"})")).program().body[0].exprs[1].imm, 0xfc00u);
  EXPECT_THROW(program_from_json(doc(3, R"({"f16": 1})")), Error);
  // A conversion to f16 in an older document is refused too: the program would be version 4.
  const std::string older = R"({"vyre": 1, "workgroup_size": [1, 1, 1], "buffers": [
      {"name": "out", "binding": 0, "access": "read_write", "type": "f32", "output": true}],
      "body": [{"store": "out", "index": {"u32": 0}, "value": {"cast": "f32", "value": {"cast": "f16", "value": {"f32": 1}}}}]})";
  try {
    program_from_json(older);
    ADD_FAILURE() << "a version-1 document converted to f16";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("f16 needs format version 4"), std::string::npos) << e.what();
  }
  try {
    program_from_json(doc(4, R"({"f16": 70000})"));
    ADD_FAILURE() << "an f16 beyond 65504 was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("beyond the f16 range"), std::string::npos) << e.what();
  }
  // An f16 program with no f16 buffer is version 4 too.
  const Program converted = ProgramBuilder("convert")
                                .output("out", 0, ScalarType::F32, 1)
                                .body({store("out", u32(0), cast(ScalarType::F32, cast(ScalarType::F16, f32(0.1f))))})
                                .build();
  EXPECT_EQ(format_version(converted), 4u);
  EXPECT_TRUE(uses_f16(converted));
}

TEST(F16Format, WireKeepsSixteenBitsWithOneNaNAndEveryVersionOneProgramItsBytes) {
  const Program p = scale_program();
  const auto bytes = to_wire(p);
  EXPECT_EQ(bytes[4], 4);
  EXPECT_EQ(digest(from_wire(bytes)), digest(p));
  // Two NaN payloads are one literal.
  auto nan_program = [](uint16_t nan_bits) {
    return ProgramBuilder("nan").output("out", 0, ScalarType::F16, 1).body({store("out", u32(0), f16_bits(nan_bits))}).build();
  };
  EXPECT_EQ(digest(nan_program(0x7e01)), digest(nan_program(0x7c01)));
  EXPECT_NE(digest(nan_program(0x7e00)), digest(nan_program(0x7c00)));  // NaN is not infinity
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_THROW(from_wire(std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n))), Error);
}

TEST(F16Format, ValidationTypesF16AsAFloatOfItsOwn) {
  const auto problems = [](std::vector<Stmt> body, ScalarType out = ScalarType::F16, Access access = Access::ReadWrite) {
    ProgramBuilder b("t");
    b.workgroup_size(1).output("out", 0, out, 1).body(std::move(body));
    Program p = b.unchecked();
    p.buffers[0].access = access;
    p.buffers[0].output = access == Access::ReadWrite;
    return validate(p);
  };
  EXPECT_TRUE(problems({store("out", u32(0), unary(Op::Sqrt, fma(f16(2), f16(3), f16(-1))))}).empty());
  EXPECT_TRUE(problems({store("out", u32(0), build::pow(f16(2), f16(3)))}).empty());
  auto ds = problems({store("out", u32(0), add(f16(1), cast(ScalarType::F16, f32(1))))});
  EXPECT_TRUE(ds.empty());
  ds = problems({store("out", u32(0), add(f16(1), f32(1)))});
  ASSERT_FALSE(ds.empty());
  EXPECT_NE(ds[0].message.find("one type, got f16 and f32"), std::string::npos) << ds[0].message;
  ds = problems({store("out", u32(0), bitcast(ScalarType::F16, u32(1)))});
  ASSERT_FALSE(ds.empty());
  EXPECT_NE(ds[0].message.find("an f16 has 16 bits"), std::string::npos) << ds[0].message;
  ds = problems({store("out", u32(0), f16(1))}, ScalarType::F16, Access::Uniform);
  bool uniform_refused = false;
  for (const auto& d : ds) uniform_refused |= d.message.find("not uniform ones") != std::string::npos;
  EXPECT_TRUE(uniform_refused);
}

// The reference's f16 arithmetic is the correctly rounded binary16 result.
TEST(F16Reference, ArithmeticRoundsOnceToBinary16) {
  const auto op = [](Op o, double a, double b) {
    return scalar::apply_binary(o, ScalarType::F16, bits(a), bits(b));
  };
  EXPECT_EQ(op(Op::Add, 1.0, 0x1p-11), bits(1.0));          // a tie: to even
  EXPECT_EQ(op(Op::Add, 1.0, 0x1.8p-11), bits(1.0 + 0x1p-10));
  EXPECT_EQ(op(Op::Mul, 300.0, 300.0), 0x7c00u);            // 90000 overflows to infinity
  EXPECT_EQ(op(Op::Div, 1.0, 3.0), bits(1.0 / 3.0));
  EXPECT_EQ(op(Op::Mul, 0x1p-14, 0x1p-5), bits(0x1p-19));  // a subnormal result, kept
  EXPECT_EQ(op(Op::Lt, 1.0, 2.0), 1u);
  EXPECT_EQ(scalar::apply_unary(Op::Neg, ScalarType::F16, bits(2.0)), bits(-2.0));
  EXPECT_EQ(scalar::apply_unary(Op::Sqrt, ScalarType::F16, bits(2.0)), bits(std::sqrt(2.0)));
  EXPECT_EQ(scalar::apply_ternary(Op::Fma, ScalarType::F16, bits(0.1), bits(10.0), bits(-1.0)),
            bits(std::fma(to_double(half{bits(0.1)}), 10.0, -1.0)));
  // Conversions: f16 -> u32 saturates like f32's; i32 -> f16 rounds once.
  EXPECT_EQ(scalar::apply_cast(ScalarType::F16, ScalarType::U32, bits(-3.5)), 0u);
  EXPECT_EQ(scalar::apply_cast(ScalarType::F16, ScalarType::I32, bits(-3.5)), static_cast<uint32_t>(-3));
  EXPECT_EQ(scalar::apply_cast(ScalarType::F16, ScalarType::U32, 0x7c00u), 4294967295u);
  EXPECT_EQ(scalar::apply_cast(ScalarType::I32, ScalarType::F16, static_cast<uint32_t>(-2049)), bits(-2048.0));
  EXPECT_EQ(scalar::apply_cast(ScalarType::F32, ScalarType::F16, std::bit_cast<uint32_t>(1e6f)), 0x7c00u);
}

}  // namespace

namespace {

gpu::Backend& backend() { return vyre::test::lowering_backend(); }

bool device_has_f16() {
  try {
    backend().compile(scale_program());
    return true;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::limit_exceeded) throw;
    return false;
  }
}

bool is_nan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; }
bool is_subnormal(uint16_t h) { return (h & 0x7c00) == 0 && (h & 0x3ff) != 0; }
int64_t ordered(uint16_t h) { return (h & 0x8000) ? -int64_t{h & 0x7fff} : int64_t{h}; }

// Edge values: zeros, the smallest subnormal and normal, one, a value with
// no exact f16 neighbour sum, the largest finite, infinities, NaN.
const std::vector<double> kEdges = {0.0, -0.0, 0x1p-24, 0x1p-14, 1.0, -2.5, 0.1, 1000.0, 65504.0, -65504.0,
                                    INFINITY, -INFINITY, NAN};

// Every operator on every pair of edge values, on the GPU and in the
// reference: + - * min and the f32 round trip exactly (a subnormal may be
// flushed to zero, as the format allows for f32); / within WGSL's 2.5 ULP
// where WGSL bounds it; sqrt exp log within 4 ULPs and sin tanh within 2^-7
// (WGSL's f16 bounds are absolute for them; sin's holds on [-pi, pi]), where
// the reference is finite and normal.
TEST(F16Gpu, EveryOperatorOnEdgeValuesAgreesWithTheReference) {
  if (!device_has_f16()) GTEST_SKIP() << "the device has no shader-f16 (the refusal is tested below)";
  constexpr uint32_t kExact = 6, kApprox = 5;
  std::vector<half> a, b;
  for (double x : kEdges)
    for (double y : kEdges) a.push_back(to_half(x)), b.push_back(to_half(y));
  auto at = [](uint32_t k, uint32_t per) { return add(mul(var("i"), u32(per)), u32(k)); };
  const Program p = ProgramBuilder("f16_edges")
                        .workgroup_size(64)
                        .input("a", 0, ScalarType::F16)
                        .input("b", 1, ScalarType::F16)
                        .output("exact", 2, ScalarType::F16)
                        .output("approx", 3, ScalarType::F16)
                        .output("compared", 4, ScalarType::U32)
                        .body({let("i", gid()), if_(ge(var("i"), len("a")), {return_()}),
                               let("x", load("a", var("i"))), let("y", load("b", var("i"))),
                               store("exact", at(0, kExact), add(var("x"), var("y"))),
                               store("exact", at(1, kExact), sub(var("x"), var("y"))),
                               store("exact", at(2, kExact), mul(var("x"), var("y"))),
                               store("exact", at(3, kExact), div(var("x"), var("y"))),
                               store("exact", at(4, kExact), min(var("x"), var("y"))),
                               store("exact", at(5, kExact), cast(ScalarType::F16, cast(ScalarType::F32, var("x")))),
                               store("approx", at(0, kApprox), unary(Op::Sqrt, var("x"))),
                               store("approx", at(1, kApprox), unary(Op::Exp, var("x"))),
                               store("approx", at(2, kApprox), unary(Op::Log, var("x"))),
                               store("approx", at(3, kApprox), unary(Op::Sin, var("x"))),
                               store("approx", at(4, kApprox), unary(Op::Tanh, var("x"))),
                               store("compared", var("i"),
                                     add(mul(select(lt(var("x"), var("y")), u32(1), u32(0)), u32(1000)),
                                         cast(ScalarType::U32, var("x"))))})
                        .build();
  Inputs in;
  in.set<half>("a", a).set<half>("b", b).size("exact", static_cast<uint32_t>(a.size() * kExact))
      .size("approx", static_cast<uint32_t>(a.size() * kApprox)).size("compared", static_cast<uint32_t>(a.size()));
  const Dim3 grid{static_cast<uint32_t>((a.size() + 63) / 64), 1, 1};
  const Outputs got = backend().compile(p).dispatch(in, grid);
  const Outputs ref = reference::run(p, in, {}, grid);
  const auto g = got.get<half>("exact"), r = ref.get<half>("exact");
  ASSERT_EQ(g.size(), r.size());
  for (size_t k = 0; k < g.size(); ++k) {
    const uint16_t x = a[k / kExact].bits, y = b[k / kExact].bits, gg = g[k].bits, rr = r[k].bits;
    if (gg == rr || (is_nan(gg) && is_nan(rr))) continue;
    if (k % kExact == 3) {
      // Division is held to WGSL's f16 bound, 2.5 ULP for |y| in [2^-14, 2^14] and nothing outside
      // (NVIDIA's is not correctly rounded, and takes a subnormal divisor as 0: seen on the H200);
      // the reference's is correctly rounded, so the two are within 3.
      const double yv = std::fabs(to_double(half{y})), rv = to_double(half{rr});
      if (yv < 0x1p-14 || yv > 0x1p14 || !std::isfinite(rv) || is_subnormal(rr) || is_subnormal(x)) continue;
      EXPECT_LE(std::llabs(ordered(gg) - ordered(rr)), 3)
          << "div on 0x" << std::hex << x << ", 0x" << y << ": reference 0x" << rr << ", GPU 0x" << gg;
      continue;
    }
    const bool flushed = (gg & 0x7fff) == 0 && (is_subnormal(rr) || is_subnormal(x) || is_subnormal(y));
    // Zeros of either sign: after a flushed subnormal operand, and for min of +0 and -0 (IEEE leaves it open).
    const bool zeros = (gg & 0x7fff) == 0 && (rr & 0x7fff) == 0;
    const bool min_of_zeros = k % kExact == 4 && (x & 0x7fff) == 0 && (y & 0x7fff) == 0;
    EXPECT_TRUE(flushed || (zeros && (is_subnormal(x) || is_subnormal(y) || min_of_zeros)))
        << "exact op " << k % kExact << " on 0x" << std::hex << x << ", 0x" << y << ": reference 0x" << rr << ", GPU 0x" << gg;
  }
  const auto ga = got.get<half>("approx"), ra = ref.get<half>("approx");
  for (size_t k = 0; k < ga.size(); ++k) {
    const uint16_t x = a[k / kApprox].bits, gg = ga[k].bits, rr = ra[k].bits;
    if (gg == rr || (is_nan(gg) && is_nan(rr))) continue;
    const double rv = to_double(half{rr});
    if (!std::isfinite(rv) || is_subnormal(x) || is_subnormal(rr) || (rr & 0x7fff) == 0) continue;  // bounds end there
    // WGSL's f16 bounds: sin is absolute (2^-7 on [-pi, pi], and unbounded outside: NVIDIA's sin(1000)
    // is off by 0.13, seen on the H200), tanh inherits sinh/cosh's (absolute near 0), the others relative.
    const uint32_t op = k % kApprox;
    if (op == 3 && std::fabs(to_double(half{x})) > 3.14159265358979) continue;
    if ((op == 3 || op == 4) && std::fabs(to_double(half{gg}) - rv) <= 0x1p-7) continue;
    EXPECT_LE(std::llabs(ordered(gg) - ordered(rr)), 4)
        << "op " << k % kApprox << " on 0x" << std::hex << x << ": reference 0x" << rr << ", GPU 0x" << gg;
  }
  EXPECT_EQ(got.get<uint32_t>("compared"), ref.get<uint32_t>("compared"));
}

// f32 -> f16 conversions widened back to f32: each rounds to the nearest f16
// (ties to even, overflow to infinity, subnormals kept). NVIDIA's driver
// dropped such a pair of conversions (seen on the H200: f32(f16(0.1)) was
// 0.1), so the lowering rounds on the bits; this holds every device to it.
TEST(F16Gpu, ConversionsFromF32RoundWhenWidenedBack) {
  const Program p = ProgramBuilder("f16_round_trip")
                        .workgroup_size(64)
                        .input("x", 0, ScalarType::F32)
                        .input("n", 1, ScalarType::I32)
                        .output("out", 2, ScalarType::F32)
                        .output("from_int", 3, ScalarType::F32)
                        .body({let("i", gid()), if_(ge(var("i"), len("out")), {return_()}),
                               store("out", var("i"), cast(ScalarType::F32, cast(ScalarType::F16, load("x", var("i"))))),
                               store("from_int", var("i"), cast(ScalarType::F32, cast(ScalarType::F16, load("n", var("i")))))})
                        .build();
  EXPECT_NE(lower_to_wgsl(p).find("vyre_f16_from_f32("), std::string::npos);
  EXPECT_NE(shaping_signature(p).find("shader-f16=2"), std::string::npos);
  if (!device_has_f16()) GTEST_SKIP() << "the device has no shader-f16";
  const std::vector<float> x = {0.1f, 70000.0f, 65519.0f, 65520.0f, -2.0f, 1.0f + 0x1p-11f, 1.0f + 0x3p-11f,
                                0x1p-25f, 0x1.8p-25f, 0x1p-24f * 3.5f, 0x1.ffcp-15f, -0x1p-26f, 1e-40f,
                                INFINITY, -INFINITY, NAN, 3.14159265f, -1000.06f, 0x1.0p-14f};
  std::vector<int32_t> n(x.size());
  for (size_t i = 0; i < n.size(); ++i) n[i] = static_cast<int32_t>(i * 1001) - 7000;
  Inputs in;
  in.set<float>("x", x).set<int32_t>("n", n).size("out", static_cast<uint32_t>(x.size()))
      .size("from_int", static_cast<uint32_t>(x.size()));
  const Outputs got = backend().compile(p).dispatch(in);
  const Outputs ref = reference::run(p, in);
  const auto g = got.get<float>("out"), r = ref.get<float>("out");
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(r[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << i;
      continue;
    }
    EXPECT_EQ(std::bit_cast<uint32_t>(g[i]), std::bit_cast<uint32_t>(r[i]))
        << "f16(" << x[i] << "): GPU " << g[i] << ", reference " << r[i];
    EXPECT_EQ(r[i], static_cast<float>(to_double(to_half(x[i])))) << i;
  }
  EXPECT_EQ(got.get<float>("from_int"), ref.get<float>("from_int"));
}

// Literals no decimal spells (-0, subnormals, infinities, NaN) compile and
// keep their bits.
TEST(F16Gpu, LiteralsOfEveryKindKeepTheirBits) {
  const std::vector<uint16_t> literals = {0x8000, 0x0001, 0x03ff, 0x7c00, 0xfc00, 0x7e00, 0x3c00, 0xc000, 0x7bff};
  std::vector<Stmt> body;
  for (size_t i = 0; i < literals.size(); ++i) body.push_back(store("out", u32(static_cast<uint32_t>(i)), f16_bits(literals[i])));
  const Program p = ProgramBuilder("f16_literals").output("out", 0, ScalarType::F16, static_cast<uint32_t>(literals.size()))
                        .body(body).build();
  if (!device_has_f16()) GTEST_SKIP() << "the device has no shader-f16";
  const auto got = backend().compile(p).dispatch(Inputs{}, Dim3{1, 1, 1}).get<half>("out");
  ASSERT_EQ(got.size(), literals.size());
  for (size_t i = 0; i < literals.size(); ++i) {
    if (is_nan(literals[i])) {
      EXPECT_TRUE(is_nan(got[i].bits)) << i;
      continue;
    }
    // A device may flush a subnormal to a zero of its sign.
    const bool flushed = is_subnormal(literals[i]) && got[i].bits == (literals[i] & 0x8000);
    EXPECT_TRUE(got[i].bits == literals[i] || flushed) << std::hex << literals[i] << " came back as " << got[i].bits;
  }
}

// A private array of f16: zeroed where declared, and the lowering enables f16 for it alone.
TEST(F16Gpu, PrivateArraysHoldF16) {
  const Program p = ProgramBuilder("f16_pair")
                        .workgroup_size(64)
                        .input("x", 0, ScalarType::F32)
                        .output("out", 1, ScalarType::F32)
                        .body({let("i", gid()), if_(ge(var("i"), len("out")), {return_()}), array("w", ScalarType::F16, 2),
                               store("w", u32(1), cast(ScalarType::F16, load("x", var("i")))),
                               store("out", var("i"), cast(ScalarType::F32, add(load("w", u32(0)), load("w", u32(1)))))})
                        .build();
  EXPECT_TRUE(uses_f16(p));
  EXPECT_NE(lower_to_wgsl(p).find("enable f16;"), std::string::npos);
  if (!device_has_f16()) GTEST_SKIP() << "the device has no shader-f16";
  Inputs in;
  in.set<float>("x", {0.1f, 70000.0f, -2.0f}).size("out", 3);
  const auto got = backend().compile(p).dispatch(in).get<float>("out");
  const auto want = reference::run(p, in).get<float>("out");
  EXPECT_EQ(got, want) << got[0] << " " << got[1] << " " << got[2] << " / " << want[0] << " " << want[1] << " " << want[2];
  EXPECT_EQ(got, (std::vector<float>{static_cast<float>(to_double(to_half(0.1))), INFINITY, -2.0f}));
}

TEST(F16Gpu, AProgramRunsWhereTheDeviceHasShaderF16AndIsRefusedWhereItIsMasked) {
  const Program p = scale_program();
  EXPECT_NE(lower_to_wgsl(p).find("enable f16;"), std::string::npos);
  if (device_has_f16()) {
    const std::vector<half> a = {to_half(1.5), to_half(-2.0), to_half(1000.0)};
    const std::vector<half> b = {to_half(2.0), to_half(0.25), to_half(100.0)};
    Inputs in;
    in.set<half>("a", a).set<half>("b", b).size("out", 3).size("c", 3);
    const Outputs got = backend().compile(p).dispatch(in);
    EXPECT_EQ(got.get<half>("out"), (std::vector<half>{to_half(3.5), to_half(0.0), to_half(INFINITY)}));
    EXPECT_EQ(got.get<uint32_t>("c"), (std::vector<uint32_t>{1, 0, 1000}));
  }
  // The same program on a device opened with the feature masked.
  ASSERT_EQ(setenv("VYRE_MASK_FEATURES", "shader-f64, shader-f16", 1), 0);
  gpu::Backend masked;
  unsetenv("VYRE_MASK_FEATURES");
  try {
    masked.compile(p);
    ADD_FAILURE() << "an f16 program compiled on a device without shader-f16";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::limit_exceeded);
    EXPECT_NE(std::string(e.what()).find("shader-f16"), std::string::npos) << e.what();
  }
  // Programs without f16 run there as before.
  const Program plain = ProgramBuilder("plain").output("out", 0, ScalarType::U32, 1).body({store("out", u32(0), u32(7))}).build();
  EXPECT_EQ(masked.compile(plain).dispatch(Inputs{}, Dim3{1, 1, 1}).get<uint32_t>("out"), std::vector<uint32_t>{7});
}

}  // namespace
