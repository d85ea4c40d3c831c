#include "lower/widening.hpp"

#include <algorithm>

namespace vyre {
namespace {

// The widened shader repeats S once per lane: past this many nodes the text
// (and naga's and the driver's work) grows more than wide accesses repay.
constexpr size_t kMaxWidenedNodes = 2000;

bool is_u32(const Expr& e, uint32_t value) { return e.op == Op::LitU32 && e.imm == value; }
bool is_builtin(const Expr& e, Op op, Axis axis) { return e.op == op && static_cast<Axis>(e.imm) == axis; }

// Walks S, collecting the accesses and refusing what would make lanes
// differ from invocations.
class Scan {
 public:
  Scan(const CheckedProgram& c, Widening& w) : checked_(c), program_(c.program()), widening_(w) {}

  void block(const std::vector<Stmt>& stmts, bool every_lane) {
    for (const Stmt& s : stmts) {
      if (!why_.empty()) return;
      stmt(s, every_lane);
    }
  }

  std::string why_;
  size_t nodes_ = 0;

 private:
  void stmt(const Stmt& s, bool every_lane) {
    ++nodes_;
    for (const Expr& e : s.exprs) expr(e);
    switch (s.op) {
      case StmtOp::Store: {
        if (checked_.array_slot(s)) return;  // the program's array statement is refused below
        const uint32_t b = checked_.buffer_index(s);
        if (wide(b, s.exprs[0])) {
          Widening::Access& a = access(b);
          a.stored = true;
          if (every_lane) stored_by_every_lane_.push_back(b);
        } else if (why_.empty()) {
          refuse("a store to '" + program_.buffers[b].name + "', which is not a runtime-sized buffer at index " +
                 widening_.index_local + ": invocations could share its elements");
        }
        return;
      }
      case StmtOp::If:
        block(s.body, false);
        block(s.else_body, false);
        return;
      case StmtOp::Loop:
      case StmtOp::While: block(s.body, false); return;
      case StmtOp::Barrier: refuse("a barrier"); return;
      case StmtOp::Return: refuse("a return inside the bounds check"); return;
      case StmtOp::Array: refuse("a private array"); return;
      default: return;
    }
  }

  void expr(const Expr& e) {
    ++nodes_;
    switch (op_info(e.op).cls) {
      case OpClass::Builtin: refuse("a built-in other than the index (" + std::string(op_info(e.op).json) + ")"); return;
      case OpClass::Atomic: refuse("an atomic"); return;
      case OpClass::Load: {
        if (checked_.array_slot(e)) break;  // a private array's element: its statement is refused
        const uint32_t b = checked_.buffer_index(e);
        const Buffer& buffer = program_.buffers[b];
        if (wide(b, e.args[0]))
          access(b).loaded = true;
        else if (buffer.runtime_sized() && buffer.access != Access::Uniform)
          scalar_loads_.push_back(b);  // a gather: fine unless the buffer is also widened
        break;
      }
      default: break;
    }
    for (const Expr& a : e.args) expr(a);
  }

  // True for an access at index i to a runtime-sized storage buffer.
  bool wide(uint32_t b, const Expr& index) const {
    const Buffer& buffer = program_.buffers[b];
    return buffer.runtime_sized() && buffer.access != Access::Uniform && buffer.access != Access::Workgroup &&
           index.op == Op::Var && index.name == widening_.index_local;
  }

  Widening::Access& access(uint32_t b) {
    for (auto& a : widening_.buffers)
      if (a.buffer == b) return a;
    widening_.buffers.push_back({b});
    return widening_.buffers.back();
  }

  void refuse(std::string why) {
    if (why_.empty()) why_ = std::move(why);
  }

  const CheckedProgram& checked_;
  const Program& program_;
  Widening& widening_;

 public:
  std::vector<uint32_t> stored_by_every_lane_;
  std::vector<uint32_t> scalar_loads_;  // runtime-sized buffers loaded at another index than i
};

}  // namespace

std::optional<FlatIndex> flat_index(const Expr& e, uint32_t workgroup_x) {
  if (is_builtin(e, Op::Gid, Axis::X)) return FlatIndex::GidX;
  // gid.x + gid.y * (nwg.x * W)
  if (e.op != Op::Add || !is_builtin(e.args[0], Op::Gid, Axis::X)) return std::nullopt;
  const Expr& row = e.args[1];
  if (row.op != Op::Mul || !is_builtin(row.args[0], Op::Gid, Axis::Y)) return std::nullopt;
  const Expr& stride = row.args[1];
  if (stride.op != Op::Mul || !is_builtin(stride.args[0], Op::Nwg, Axis::X) || !is_u32(stride.args[1], workgroup_x))
    return std::nullopt;
  return FlatIndex::GidXY;
}

const Widening::Access* Widening::find(uint32_t buffer) const {
  for (const auto& a : buffers)
    if (a.buffer == buffer) return &a;
  return nullptr;
}

std::optional<Widening> find_widening(const CheckedProgram& c, const ShaderOptions& options, std::string* why) {
  auto refuse = [&](const std::string& reason) -> std::optional<Widening> {
    if (why) *why = reason;
    return std::nullopt;
  };
  const Program& p = c.program();
  const Dim3 wg = effective_workgroup_size(p, options);
  if (wg[1] != 1 || wg[2] != 1) return refuse("the workgroup is not one-dimensional");
  if (p.body.size() != 2 || p.body[0].op != StmtOp::Let || p.body[1].op != StmtOp::If || !p.body[1].else_body.empty())
    return refuse("the body is not `let i = <index>; if (i < len(buffer)) { ... }`");
  for (const Buffer& b : p.buffers) {
    if (b.access == Access::Workgroup) return refuse("it has workgroup memory");
    // Packed elements share words: a vec4 of them is not four lanes' elements.
    if (is_narrow(b.type) || b.type == ScalarType::Bool)
      return refuse("buffer '" + b.name + "' holds " + std::string(to_string(b.type)) + " elements, packed in words");
  }
  const Stmt& let = p.body[0];
  const Stmt& check = p.body[1];
  Widening w;
  w.index_local = let.name;
  const auto index = flat_index(let.exprs[0], wg[0]);
  if (!index) return refuse("'" + let.name + "' is not gid.x or gid.x + gid.y * (nwg.x * workgroup_size.x)");
  if (c.reassigned(let)) return refuse("'" + let.name + "' is reassigned");
  w.index = *index;
  const Expr& cond = check.exprs[0];
  if (cond.op != Op::Lt || cond.args[0].op != Op::Var || cond.args[0].name != let.name || cond.args[1].op != Op::Len)
    return refuse("the condition is not `" + let.name + " < len(buffer)`");
  w.guard = c.buffer_index(cond.args[1]);
  const Buffer& guard = p.buffers[w.guard];
  if (!guard.runtime_sized() || guard.access == Access::Uniform)
    return refuse("'" + guard.name + "' in the condition is not a runtime-sized storage buffer");

  Scan scan(c, w);
  scan.block(check.body, true);
  if (!scan.why_.empty()) return refuse(scan.why_);
  if (scan.nodes_ > kMaxWidenedNodes)
    return refuse("the checked body has " + std::to_string(scan.nodes_) + " nodes (at most " +
                  std::to_string(kMaxWidenedNodes) + " are widened)");
  if (w.buffers.empty()) return refuse("no buffer is accessed at '" + let.name + "'");
  bool any_store = false;
  for (auto& a : w.buffers) {
    if (c.atomic(a.buffer)) return refuse("'" + p.buffers[a.buffer].name + "' is atomic");
    const auto& gathers = scan.scalar_loads_;
    if (std::find(gathers.begin(), gathers.end(), a.buffer) != gathers.end())
      return refuse("'" + p.buffers[a.buffer].name + "' is loaded both at '" + let.name + "' and at another index");
    const auto& every = scan.stored_by_every_lane_;
    a.initial_load = a.loaded || std::find(every.begin(), every.end(), a.buffer) == every.end();
    any_store = any_store || a.stored;
  }
  if (!any_store) return refuse("nothing is stored at '" + let.name + "'");
  // Canonical order, so that the text does not depend on the body's order of first use.
  std::sort(w.buffers.begin(), w.buffers.end(), [&](const auto& a, const auto& b) {
    return *p.buffers[a.buffer].binding < *p.buffers[b.buffer].binding;
  });
  return w;
}

}  // namespace vyre
