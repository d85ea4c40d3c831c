#include "support/programs.hpp"

#include <limits>

#include "support/test_support.hpp"
#include "vyre/json.hpp"

namespace vyre::test {

using namespace vyre::build;

Program every_construct_program() {
  std::vector<Stmt> body;
  body.push_back(let("i", gid(Axis::X)));
  body.push_back(let("u", u32(7)));
  body.push_back(let("s", i32(-7)));
  body.push_back(let("f", f32(1.5f)));
  body.push_back(let("b", boolean(true)));
  body.push_back(let("ids", add(add(add(lid(Axis::Y), lid_flat()), add(wid(Axis::Z), nwg(Axis::X))), gid(Axis::Y))));
  // Every binary operator.
  for (Op op : {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Rem, Op::Min, Op::Max, Op::And, Op::Or, Op::Xor})
    body.push_back(assign("u", binary(op, var("u"), u32(3))));
  for (Op op : {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Rem, Op::Min, Op::Max, Op::And, Op::Or, Op::Xor})
    body.push_back(assign("s", binary(op, var("s"), i32(-3))));
  for (Op op : {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Rem, Op::Min, Op::Max, Op::Pow, Op::Atan2})
    body.push_back(assign("f", binary(op, var("f"), f32(0.5f))));
  body.push_back(assign("u", shl(var("u"), u32(33))));
  body.push_back(assign("s", shr(var("s"), u32(2))));
  for (Op op : {Op::Eq, Op::Ne, Op::Lt, Op::Le, Op::Gt, Op::Ge})
    body.push_back(assign("b", land(var("b"), binary(op, var("f"), f32(2.0f)))));
  body.push_back(assign("b", lor(var("b"), logical_not(var("b")))));
  // Every unary operator.
  body.push_back(assign("s", neg(abs(var("s")))));
  body.push_back(assign("u", abs(var("u"))));
  for (Op op : {Op::BitNot, Op::Popcount, Op::Clz, Op::Ctz, Op::ReverseBits}) body.push_back(assign("u", unary(op, var("u"))));
  for (Op op : {Op::Sqrt, Op::InverseSqrt, Op::Exp, Op::Exp2, Op::Log, Op::Log2, Op::Sin, Op::Cos, Op::Tan, Op::Tanh,
                Op::Floor, Op::Ceil, Op::Round, Op::Trunc, Op::Fract, Op::Neg, Op::Abs})
    body.push_back(assign("f", unary(op, var("f"))));
  body.push_back(assign("f", fma(var("f"), f32(2.0f), f32(1.0f))));
  body.push_back(assign("s", clamp(var("s"), i32(-10), i32(10))));
  body.push_back(assign("u", select(var("b"), var("u"), u32(1))));
  // Conversions.
  body.push_back(assign("u", add(cast(ScalarType::U32, var("f")), cast(ScalarType::U32, var("b")))));
  body.push_back(assign("s", cast(ScalarType::I32, var("f"))));
  body.push_back(assign("f", add(cast(ScalarType::F32, var("s")), bitcast(ScalarType::F32, var("u")))));
  body.push_back(assign("b", cast(ScalarType::Bool, var("u"))));
  // Buffers of every kind; atomics of every kind.
  body.push_back(store("tile", lid_flat(), load("params", u32(1))));
  body.push_back(barrier(BarrierKind::Workgroup));
  body.push_back(assign("u", add(var("u"), load("tile", u32(0)))));
  for (auto op : {AtomicOp::Add, AtomicOp::Sub, AtomicOp::Min, AtomicOp::Max, AtomicOp::And, AtomicOp::Or, AtomicOp::Xor,
                  AtomicOp::Exchange})
    body.push_back(eval(atomic(op, "hist", rem(var("u"), u32(4)), u32(1))));
  body.push_back(assign("u", atomic_compare_exchange("hist", u32(0), u32(1), u32(2))));
  body.push_back(assign("u", add(var("u"), atomic_load("hist", u32(1)))));
  body.push_back(eval(atomic(AtomicOp::Add, "local_hist", u32(0), i32(1))));
  body.push_back(barrier(BarrierKind::Storage));
  // Control flow.
  body.push_back(loop("k", u32(0), u32(4), {if_(eq(var("k"), u32(2)), {continue_()}), assign("u", add(var("u"), var("k")))}));
  body.push_back(loop("j", i32(-2), i32(2), {assign("s", add(var("s"), var("j"))), if_(gt(var("j"), i32(0)), {break_()})}));
  // u comes from racing atomics and may be 0 (or wrap to it): the step adds
  // one so the loop ends in at most seven iterations whatever u is.
  body.push_back(while_(lt(var("u"), u32(100)), {assign("u", add(mul(var("u"), u32(2)), u32(1)))}));
  body.push_back(if_(ge(var("i"), len("out")), {return_()}, {store("out", var("i"), add(var("u"), load("in", var("i"))))}));
  body.push_back(store("fout", var("i"), add(var("f"), cast(ScalarType::F32, var("s")))));

  return ProgramBuilder("every_construct")
      .workgroup_size(8, 2, 1)
      .input("in", 0, ScalarType::U32)
      .output("out", 1, ScalarType::U32)
      .output("fout", 2, ScalarType::F32)
      .output("hist", 3, ScalarType::U32, 4)
      .uniform("params", 4, ScalarType::U32, 5)
      .workgroup_buffer("tile", ScalarType::U32, 16)
      .workgroup_buffer("local_hist", ScalarType::I32, 2)
      .body(std::move(body))
      .build();
}

std::vector<Program> constant_hazard_programs() {
  std::vector<Program> out;
  auto one = [&](const std::string& name, ScalarType type, Expr value, uint32_t count = 0) {
    out.push_back(ProgramBuilder(name)
                      .workgroup_size(1)
                      .output("out", 0, type, count)
                      .body({store("out", u32(0), std::move(value))})
                      .build());
  };
  const float inf = std::numeric_limits<float>::infinity();
  one("u32_div_zero", ScalarType::U32, div(u32(7), u32(0)));
  one("u32_rem_zero", ScalarType::U32, rem(u32(7), u32(0)));
  one("i32_div_zero", ScalarType::I32, div(i32(7), i32(0)));
  one("i32_min_div_minus_one", ScalarType::I32, div(i32(INT32_MIN), i32(-1)));
  one("i32_min_rem_minus_one", ScalarType::I32, rem(i32(INT32_MIN), i32(-1)));
  one("u32_add_overflow", ScalarType::U32, add(u32(0xffffffffu), u32(1)));
  one("u32_mul_overflow", ScalarType::U32, mul(u32(0x80000000u), u32(4)));
  one("u32_sub_underflow", ScalarType::U32, sub(u32(0), u32(1)));
  one("i32_add_overflow", ScalarType::I32, add(i32(INT32_MAX), i32(1)));
  one("i32_neg_min", ScalarType::I32, neg(i32(INT32_MIN)));
  one("i32_abs_min", ScalarType::I32, abs(i32(INT32_MIN)));
  one("i32_min_literal", ScalarType::I32, i32(INT32_MIN));
  one("u32_shl_past_width", ScalarType::U32, shl(u32(1), u32(33)));
  one("u32_shl_overflow", ScalarType::U32, shl(u32(0xffffffffu), u32(4)));
  one("i32_shl_overflow", ScalarType::I32, shl(i32(0x40000000), u32(2)));
  one("i32_shr_past_width", ScalarType::I32, shr(i32(-8), u32(40)));
  one("f32_div_zero", ScalarType::F32, div(f32(1.0f), f32(0.0f)));
  one("f32_overflow", ScalarType::F32, mul(f32(3e38f), f32(10.0f)));
  one("f32_sqrt_negative", ScalarType::F32, unary(Op::Sqrt, f32(-1.0f)));
  one("f32_log_zero", ScalarType::F32, unary(Op::Log, f32(0.0f)));
  one("f32_inf_literal", ScalarType::F32, f32(inf));
  one("f32_minus_inf_literal", ScalarType::F32, f32(-inf));
  one("f32_nan_literal", ScalarType::F32, f32(std::numeric_limits<float>::quiet_NaN()));
  one("f32_minus_zero", ScalarType::F32, f32(-0.0f));
  one("f32_subnormal", ScalarType::F32, f32_bits(1));
  // The largest finite f32: its shortest decimal, 3.4028235e+38, lies past it.
  one("f32_max_literal", ScalarType::F32, f32(-std::numeric_limits<float>::max()));
  one("f32_pow_nan", ScalarType::F32, pow(f32(-1.0f), f32(0.5f)));
  one("f32_to_u32_saturate", ScalarType::U32, cast(ScalarType::U32, f32(1e20f)));
  one("f32_to_i32_negative_saturate", ScalarType::I32, cast(ScalarType::I32, f32(-1e20f)));
  one("f32_to_u32_nan", ScalarType::U32, cast(ScalarType::U32, div(f32(0.0f), f32(0.0f))));
  one("bitcast_to_inf", ScalarType::F32, bitcast(ScalarType::F32, u32(0x7f800000u)));
  one("clamp_low_above_high", ScalarType::I32, clamp(i32(5), i32(10), i32(0)));
  one("fixed_len_div_zero", ScalarType::U32, div(len("out"), u32(0)), 4);
  // Constant indices out of range of a fixed-size array, and negative ones.
  out.push_back(ProgramBuilder("const_index_out_of_range")
                    .workgroup_size(1)
                    .output("out", 0, ScalarType::U32, 4)
                    .workgroup_buffer("w", ScalarType::U32, 4)
                    .body({store("w", u32(9), u32(1)), store("out", u32(7), load("w", i32(-1))),
                           store("out", add(u32(3), u32(4)), u32(2))})
                    .build());
  // Constant indices past what any runtime-sized buffer holds (naga refuses
  // a literal index of 4294967295 even into a runtime-sized array).
  out.push_back(ProgramBuilder("const_index_huge_runtime")
                    .workgroup_size(1)
                    .output("out", 0, ScalarType::U32)
                    .body({store("out", u32(0xffffffffu), u32(1)), store("out", u32(0x80000000u), u32(2)),
                           store("out", u32(0), load("out", u32(0xffffffffu))),
                           eval(load("out", i32(INT32_MAX))), store("out", i32(-1), u32(3))})
                    .build());
  return out;
}

CheckedProgram grid_2d_program() {
  using namespace vyre::build;
  return ProgramBuilder("scale_2d")
      .workgroup_size(8, 8)
      .uniform("width", 0, ScalarType::U32, 1)
      .input("a", 1, ScalarType::U32)
      .output("out", 2, ScalarType::U32)
      .body({let("i", add(mul(gid(Axis::Y), load("width", u32(0))), gid(Axis::X))),
             store("out", var("i"), add(mul(load("a", var("i")), u32(3)), var("i")))})
      .build();
}

CheckedProgram doubler_program() {
  using namespace vyre::build;
  return ProgramBuilder("doubler")
      .workgroup_size(64)
      .input("a", 0, ScalarType::U32)
      .output("out", 1, ScalarType::U32)
      .body({let("i", gid()), if_(lt(var("i"), len("out")), {store("out", var("i"), mul(load("a", var("i")), u32(2)))})})
      .build();
}

Program example(const std::string& name) { return program_from_json_file(source_path("examples/" + name + ".json")); }

}  // namespace vyre::test
