#include "dispatch/default_grid.hpp"

#include "lower/widening.hpp"

#include <algorithm>
#include <optional>

namespace vyre {
namespace {


class StoreScan {
 public:
  StoreScan(const CheckedProgram& c, uint32_t index_slot, DefaultGridProof& proof)
      : c_(c), slot_(index_slot), proof_(proof) {}

  void block(const std::vector<Stmt>& stmts) {
    const size_t outer = checks_.size();
    for (const Stmt& s : stmts) {
      for (const Expr& e : s.exprs) expr(e);
      if (s.op == StmtOp::Store && !c_.array_slot(s)) store(s);  // a private array's store is the invocation's own
      if (const auto b = return_past_end(s)) {  // the rest of this block runs only for i < len(B)
        checks_.push_back(*b);
        continue;
      }
      const std::optional<uint32_t> checked = s.op == StmtOp::If ? checked_buffer(s.exprs[0]) : std::nullopt;
      if (checked) checks_.push_back(*checked);
      block(s.body);
      if (checked) checks_.pop_back();
      block(s.else_body);
    }
    checks_.resize(outer);
  }

 private:
  bool is_index(const Expr& e) const { return e.op == Op::Var && c_.slot(e) == slot_; }

  // B of a condition that holds only for i < len(B), a storage buffer:
  // `i < len(B)`, or a conjunction with it (`i < 10 && i < len(B)`).
  std::optional<uint32_t> checked_buffer(const Expr& e) const {
    if (e.op == Op::LAnd) {
      if (auto b = checked_buffer(e.args[0])) return b;
      return checked_buffer(e.args[1]);
    }
    return compared_buffer(e, Op::Lt);
  }

  // B of a condition that holds for every i >= len(B): `i >= len(B)`, or a
  // disjunction with it.
  std::optional<uint32_t> past_end_buffer(const Expr& e) const {
    if (e.op == Op::LOr) {
      if (auto b = past_end_buffer(e.args[0])) return b;
      return past_end_buffer(e.args[1]);
    }
    return compared_buffer(e, Op::Ge);
  }

  std::optional<uint32_t> compared_buffer(const Expr& e, Op op) const {
    if (e.op != op || !is_index(e.args[0]) || e.args[1].op != Op::Len) return std::nullopt;
    const uint32_t b = c_.buffer_index(e.args[1]);
    const Access access = c_.program().buffers[b].access;
    if (access == Access::Uniform || access == Access::Workgroup) return std::nullopt;
    return b;
  }

  // `if (i >= len(B)) { return }`: the early-return form of the check.
  std::optional<uint32_t> return_past_end(const Stmt& s) const {
    if (s.op != StmtOp::If || !s.else_body.empty() || s.body.size() != 1 || s.body[0].op != StmtOp::Return)
      return std::nullopt;
    return past_end_buffer(s.exprs[0]);
  }

  void store(const Stmt& s) {
    const Buffer& buffer = c_.program().buffers[c_.buffer_index(s)];
    if (buffer.access == Access::Workgroup)
      return refuse("it stores to the workgroup buffer '" + buffer.name + "'");
    if (!is_index(s.exprs[0]))
      return refuse("it stores to '" + buffer.name + "' at an index other than its invocation's own");
    if (checks_.empty())
      return refuse("its store to '" + buffer.name + "' is not inside a check `i < len(buffer)`");
    proof_.store_checks.push_back(checks_);
  }

  void expr(const Expr& e) {
    if (op_info(e.op).cls == OpClass::Atomic) return refuse("it uses atomics");
    for (const Expr& a : e.args) expr(a);
  }

  void refuse(std::string why) {
    if (proof_.why_not.empty()) proof_.why_not = std::move(why);
  }

  const CheckedProgram& c_;
  uint32_t slot_;
  DefaultGridProof& proof_;
  std::vector<uint32_t> checks_;  // the checks around the statement being scanned
};

}  // namespace

DefaultGridProof prove_default_grid(const CheckedProgram& c, const ShaderOptions& options) {
  DefaultGridProof proof;
  const Program& p = c.program();
  const Dim3 wg = effective_workgroup_size(p, options);
  if (wg[1] != 1 || wg[2] != 1) {
    proof.why_not = "its workgroup is not one-dimensional";
    return proof;
  }
  // gid.x + gid.y * (nwg.x * W) is gid.x on a default grid, whose y is 1.
  if (p.body.empty() || p.body[0].op != StmtOp::Let || !flat_index(p.body[0].exprs[0], wg[0]) ||
      c.reassigned(p.body[0])) {
    proof.why_not = "it does not start with `let i = gid.x`, the one index it may write at";
    return proof;
  }
  StoreScan(c, c.slot(p.body[0]), proof).block(p.body);
  if (proof.why_not.empty() && proof.store_checks.empty()) proof.why_not = "it stores nothing at its index";
  proof.proven = proof.why_not.empty();
  return proof;
}

}  // namespace vyre
