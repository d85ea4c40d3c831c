#include "ir/checked_facts.hpp"
#include "vyre/checked.hpp"
#include "vyre/error.hpp"

namespace vyre {

struct CheckedProgram::State {
  Program program;
  ir::CheckedFacts facts;
  std::vector<const Buffer*> canonical;
  std::vector<const Buffer*> bound;
  std::vector<const Buffer*> lengths;
};

namespace {

void collect_len(const Expr& e, const ir::CheckedFacts& facts, std::vector<bool>& read) {
  if (e.op == Op::Len) read[facts.buffers.at(&e)] = true;
  for (const auto& a : e.args) collect_len(a, facts, read);
}

void collect_len(const std::vector<Stmt>& body, const ir::CheckedFacts& facts, std::vector<bool>& read) {
  for (const auto& s : body) {
    for (const auto& e : s.exprs) collect_len(e, facts, read);
    collect_len(s.body, facts, read);
    collect_len(s.else_body, facts, read);
  }
}

template <class Map, class Key>
uint32_t fact(const Map& map, const Key* node, const char* what) {
  auto it = map.find(node);
  if (it == map.end())
    throw Error(ErrorKind::invalid_input, std::string("internal: no ") + what +
                                              " for a node outside this checked program");
  return it->second;
}

}  // namespace

CheckedProgram::CheckedProgram(Program program) {
  auto state = std::make_shared<State>();
  state->program = std::move(program);
  auto diagnostics = ir::check(state->program, &state->facts);
  if (!diagnostics.empty()) throw ProgramError(std::move(diagnostics));
  const Program& p = state->program;
  state->canonical = canonical_buffer_order(p);
  for (const Buffer* b : state->canonical)
    if (b->access != Access::Workgroup) state->bound.push_back(b);
  std::vector<bool> read(p.buffers.size(), false);
  collect_len(p.body, state->facts, read);
  for (const Buffer* b : state->bound)
    if (b->runtime_sized() && read[static_cast<size_t>(b - p.buffers.data())]) state->lengths.push_back(b);
  impl_ = std::move(state);
}

const Program& CheckedProgram::program() const { return impl_->program; }

ScalarType CheckedProgram::type(const Expr& e) const {
  auto it = impl_->facts.types.find(&e);
  if (it == impl_->facts.types.end())
    throw Error(ErrorKind::invalid_input, "internal: no type for an expression outside this checked program");
  return it->second;
}

uint32_t CheckedProgram::slot(const Expr& var) const { return fact(impl_->facts.slots, &var, "local slot"); }
uint32_t CheckedProgram::slot(const Stmt& s) const { return fact(impl_->facts.slots, &s, "local slot"); }
bool CheckedProgram::reassigned(const Stmt& declaration) const {
  const uint32_t local = slot(declaration);
  const auto& written = impl_->facts.reassigned;
  return local < written.size() && written[local];
}
uint32_t CheckedProgram::local_count() const { return impl_->facts.local_count; }
uint32_t CheckedProgram::buffer_index(const Expr& e) const { return fact(impl_->facts.buffers, &e, "buffer"); }
uint32_t CheckedProgram::buffer_index(const Stmt& s) const { return fact(impl_->facts.buffers, &s, "buffer"); }
namespace {
std::optional<uint32_t> array_of(const std::unordered_map<const void*, uint32_t>& arrays, const void* node) {
  const auto it = arrays.find(node);
  return it == arrays.end() ? std::nullopt : std::optional<uint32_t>(it->second);
}
}  // namespace
std::optional<uint32_t> CheckedProgram::array_slot(const Expr& e) const { return array_of(impl_->facts.arrays, &e); }
std::optional<uint32_t> CheckedProgram::array_slot(const Stmt& s) const { return array_of(impl_->facts.arrays, &s); }
const Stmt& CheckedProgram::array_declaration(uint32_t slot) const {
  return *impl_->facts.array_declarations.at(slot);
}

const std::vector<const Buffer*>& CheckedProgram::canonical_buffers() const { return impl_->canonical; }
const std::vector<const Buffer*>& CheckedProgram::bound_buffers() const { return impl_->bound; }
bool CheckedProgram::atomic(uint32_t buffer_index) const { return impl_->facts.atomic.at(buffer_index); }
bool CheckedProgram::atomic(const Buffer& buffer) const {
  return atomic(static_cast<uint32_t>(&buffer - impl_->program.buffers.data()));
}
const std::vector<const Buffer*>& CheckedProgram::length_buffers() const { return impl_->lengths; }
bool CheckedProgram::has_barrier() const { return impl_->facts.has_barrier; }
bool CheckedProgram::has_loop() const { return impl_->facts.has_loop; }
bool CheckedProgram::uses(Op op) const { return impl_->facts.ops.test(static_cast<size_t>(op)); }

}  // namespace vyre
