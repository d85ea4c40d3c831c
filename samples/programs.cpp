#include "programs.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "vyre/builder.hpp"

namespace vyre::samples {

using namespace vyre::build;

CheckedProgram xor_program(std::string name) {
  return ProgramBuilder(std::move(name))
      .workgroup_size(64)
      .input("a", 0, ScalarType::U32)
      .input("b", 1, ScalarType::U32)
      .output("out", 2, ScalarType::U32)
      .body({let("i", gid()),
             if_(lt(var("i"), len("out")), {store("out", var("i"), bit_xor(load("a", var("i")), load("b", var("i"))))})})
      .build();
}

CheckedProgram saxpy_program() {
  return ProgramBuilder("saxpy")
      .workgroup_size(kSaxpyWorkgroup)
      .uniform("alpha", 0, ScalarType::F32, 1)
      .input("x", 1, ScalarType::F32)
      .output("y", 2, ScalarType::F32)
      .body({let("i", add(gid(Axis::X), mul(gid(Axis::Y), mul(nwg(Axis::X), u32(kSaxpyWorkgroup))))),
             if_(lt(var("i"), len("y")),
                 {store("y", var("i"), add(mul(load("alpha", u32(0)), load("x", var("i"))), load("y", var("i"))))})})
      .build();
}

Dim3 saxpy_grid(uint64_t elements) {
  const uint64_t groups = std::max<uint64_t>(1, (elements + kSaxpyWorkgroup - 1) / kSaxpyWorkgroup);
  const uint64_t x = std::min<uint64_t>(groups, 32768);
  return {static_cast<uint32_t>(x), static_cast<uint32_t>((groups + x - 1) / x), 1};
}

CheckedProgram copy_program() {
  return ProgramBuilder("copy")
      .workgroup_size(kSaxpyWorkgroup)
      .input("x", 0, ScalarType::F32)
      .output("y", 1, ScalarType::F32)
      .body({let("i", add(gid(Axis::X), mul(gid(Axis::Y), mul(nwg(Axis::X), u32(kSaxpyWorkgroup))))),
             if_(lt(var("i"), len("y")), {store("y", var("i"), load("x", var("i")))})})
      .build();
}

CheckedProgram chain_program(int statements) {
  std::vector<Stmt> body;
  body.push_back(let("i", gid()));
  body.push_back(let("v0", load("a", var("i"))));
  for (int k = 1; k < statements; ++k) {
    const std::string prev = "v" + std::to_string(k - 1);
    const auto kk = static_cast<uint32_t>(k);
    Expr step = k % 3 == 0   ? bit_xor(mul(var(prev), u32(2654435761u)), u32(kk))
                : k % 3 == 1 ? add(var(prev), shr(var(prev), u32(kk % 31 + 1)))
                             : select(lt(var(prev), u32(kk)), sub(var(prev), u32(1)), var(prev));
    body.push_back(let("v" + std::to_string(k), step));
  }
  body.push_back(if_(lt(var("i"), len("out")), {store("out", var("i"), var("v" + std::to_string(statements - 1)))}));
  return ProgramBuilder("chain" + std::to_string(statements))
      .workgroup_size(64)
      .input("a", 0, ScalarType::U32)
      .output("out", 1, ScalarType::U32)
      .body(body)
      .build();
}

CheckedProgram stencil_program(int taps) {
  std::vector<Stmt> body = {let("acc", f32(0.0f))};
  for (int t = 0; t < taps; ++t) {
    const auto tt = static_cast<uint32_t>(t);
    Expr at = add(var("i"), mul(u32(tt), u32(kStencilStride)));
    Expr weight = mul(f32(static_cast<float>(t + 1)), f32(0.125f));
    body.push_back(if_(lt(at, len("x")), {assign("acc", add(var("acc"), mul(load("x", at), weight)))}));
  }
  body.push_back(store("out", var("i"), var("acc")));
  return ProgramBuilder("stencil" + std::to_string(taps))
      .workgroup_size(256)
      .input("x", 0, ScalarType::F32)
      .output("out", 1, ScalarType::F32)
      .body({let("i", gid()), if_(lt(var("i"), len("out")), body)})
      .build();
}

CheckedProgram partial_sum_program() {
  return ProgramBuilder("partial_sum")
      .workgroup_size(64)
      .input("x", 0, ScalarType::F32)
      .output("partial", 1, ScalarType::F32)
      .body({let("i", gid()),
             if_(lt(var("i"), len("partial")),
                 {let("s", f32(0.0f)),
                  loop("k", u32(0), u32(kPartialSumTerms),
                       {assign("s", add(var("s"), load("x", add(mul(var("k"), len("partial")), var("i")))))}),
                  store("partial", var("i"), var("s"))})})
      .build();
}

CheckedProgram matmul_program() {
  auto dim = [](uint32_t i) { return load("dims", u32(i)); };
  return ProgramBuilder("matmul")
      .workgroup_size(8, 8)
      .uniform("dims", 0, ScalarType::U32, 3)
      .input("a", 1, ScalarType::F32)
      .input("b", 2, ScalarType::F32)
      .output("c", 3, ScalarType::F32)
      .body({let("col", gid(Axis::X)), let("row", gid(Axis::Y)),
             if_(land(lt(var("row"), dim(0)), lt(var("col"), dim(1))),
                 {let("s", f32(0.0f)),
                  loop("k", u32(0), dim(2),
                       {assign("s", fma(load("a", add(mul(var("row"), dim(2)), var("k"))),
                                        load("b", add(mul(var("k"), dim(1)), var("col"))), var("s")))}),
                  store("c", add(mul(var("row"), dim(1)), var("col")), var("s"))})})
      .build();
}

CheckedProgram softmax_rows_program() {
  auto at = [] { return add(mul(var("row"), load("dims", u32(0))), var("k")); };
  auto each = [](std::vector<Stmt> body) { return loop("k", u32(0), load("dims", u32(0)), std::move(body)); };
  return ProgramBuilder("softmax_rows")
      .workgroup_size(64)
      .uniform("dims", 0, ScalarType::U32, 1)
      .input("x", 1, ScalarType::F32)
      .output("y", 2, ScalarType::F32)
      .body({let("row", gid()),
             if_(lt(mul(var("row"), load("dims", u32(0))), len("y")),
                 {let("m", f32(-3.0e38f)), each({assign("m", max(var("m"), load("x", at())))}),
                  let("s", f32(0.0f)), each({assign("s", add(var("s"), unary(Op::Exp, sub(load("x", at()), var("m")))))}),
                  each({store("y", at(), div(unary(Op::Exp, sub(load("x", at()), var("m"))), var("s")))})})})
      .build();
}

}  // namespace vyre::samples
