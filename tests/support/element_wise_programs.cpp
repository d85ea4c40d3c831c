#include "support/element_wise_programs.hpp"

#include "vyre/builder.hpp"

namespace vyre::test {

using namespace vyre::build;

CheckedProgram ElementWise::program(bool guarded) {
  std::vector<Stmt> inner;
  const int lets = pick(0, 3);
  for (int k = 0; k < lets; ++k) {
    inner.push_back(let("t" + std::to_string(k), value(3)));
    locals_.push_back("t" + std::to_string(k));
  }
  switch (pick(0, 3)) {
    case 0: inner.push_back(store("out", var("i"), value(3))); break;
    case 1: inner.push_back(if_(lt(value(2), value(2)), {store("out", var("i"), value(3))})); break;
    case 2:  // in place: read what this lane stored
      inner.push_back(store("out", var("i"), value(2)));
      inner.push_back(store("out", var("i"), add(load("out", var("i")), value(2))));
      break;
    default:
      inner.push_back(let("s", u32(0)));
      inner.push_back(loop("k", u32(0), rem(load("a", var("i")), u32(5)), {assign("s", add(var("s"), var("k")))}));
      inner.push_back(store("out", var("i"), add(var("s"), value(2))));
      break;
  }
  if (pick(0, 1)) inner.push_back(if_(lt(load("b", var("i")), u32(1u << 31)), {store("c", var("i"), value(2))}));
  std::vector<Stmt> body{let("i", gid(Axis::X))};
  if (guarded) {
    body.push_back(if_(lt(var("i"), len("out")), std::move(inner)));
  } else {
    for (Stmt& s : inner) body.push_back(std::move(s));
  }
  return ProgramBuilder(guarded ? "elementwise" : "unguarded")
      .workgroup_size(64)
      .input("a", 0, ScalarType::U32)
      .input("b", 1, ScalarType::U32)
      .input("g", 2, ScalarType::U32)
      .output("out", 3, ScalarType::U32)
      .output("c", 4, ScalarType::U32)
      .body(std::move(body))
      .build();
}

Expr ElementWise::leaf() {
  switch (pick(0, 5)) {
    case 0: return load("a", var("i"));
    case 1: return load("b", var("i"));
    case 2: return var("i");
    case 3: return load("g", rem(load("a", var("i")), len("g")));  // a gather
    case 4:
      if (!locals_.empty()) return var(locals_[static_cast<size_t>(pick(0, static_cast<int>(locals_.size()) - 1))]);
      [[fallthrough]];
    default: return u32(static_cast<uint32_t>(rng_()));
  }
}

Expr ElementWise::value(int depth) {
  if (depth == 0 || pick(0, 3) == 0) return leaf();
  switch (pick(0, 5)) {
    case 0: return add(value(depth - 1), value(depth - 1));
    case 1: return mul(value(depth - 1), value(depth - 1));
    case 2: return bit_xor(value(depth - 1), value(depth - 1));
    case 3: return shr(value(depth - 1), value(depth - 1));
    case 4: return min(value(depth - 1), value(depth - 1));
    default: return select(lt(value(depth - 1), value(depth - 1)), value(depth - 1), value(depth - 1));
  }
}

std::vector<uint32_t> words(uint32_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> v(n);
  for (auto& x : v) x = static_cast<uint32_t>(rng());
  return v;
}

}  // namespace vyre::test
