#include "differential/generated_case.hpp"

#include "differential/element_values.hpp"

namespace vyre::differential {
namespace {

size_t count_expr(const Expr& e) {
  size_t n = 1;
  for (const auto& a : e.args) n += count_expr(a);
  return n;
}

}  // namespace

Inputs GeneratedCase::inputs() const {
  Inputs in;
  for (const auto& [name, values] : contents) {
    const Buffer* b = program.find_buffer(name);
    if (b && element_bytes(b->type) != 4) in.bytes(name, element_bytes_of(b->type, values));
    else in.set<uint32_t>(name, values);
  }
  for (const auto& [name, n] : sizes) in.size(name, n);
  return in;
}

size_t count_nodes(const std::vector<Stmt>& body) {
  size_t n = 0;
  for (const auto& s : body) {
    n += 1 + count_nodes(s.body) + count_nodes(s.else_body);
    for (const auto& e : s.exprs) n += count_expr(e);
  }
  return n;
}

size_t GeneratedCase::node_count() const { return count_nodes(program.body); }

}  // namespace vyre::differential
