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

}  // namespace vyre::samples
