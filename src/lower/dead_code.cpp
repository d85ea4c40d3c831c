// Dead-code elimination. Expressions have no effect other than their
// atomics (a load out of range reads a defined value, integer division by
// zero is defined), so a statement whose only work is an expression without
// atomics can go when nothing reads what it computes.
#include <set>

#include "lower/expr_queries.hpp"
#include "lower/program_passes.hpp"

namespace vyre::passes {
namespace {

using lowering::holds_atomic;
using lowering::is_literal;


bool holds_atomic(const Stmt& s) {
  for (const Expr& e : s.exprs)
    if (holds_atomic(e)) return true;
  return false;
}

bool ends_block(StmtOp op) { return op == StmtOp::Return || op == StmtOp::Break || op == StmtOp::Continue; }

// Whether a loop from `from` to `to` (literals of type `t`) runs no iteration.
// A loop with literal bounds that runs no trip: counting up, from >= to;
// counting down (a negative step), from <= to.
bool empty_range(ScalarType t, const Stmt& loop) {
  const Expr &from = loop.exprs[0], &to = loop.exprs[1];
  if (t == ScalarType::I32) {
    const bool down = loop.exprs.size() == 3 && static_cast<int32_t>(loop.exprs[2].imm) < 0;
    const int32_t a = static_cast<int32_t>(from.imm), b = static_cast<int32_t>(to.imm);
    return down ? a <= b : a >= b;
  }
  return from.imm >= to.imm;
}

class DeadCode {
 public:
  explicit DeadCode(const CheckedProgram& c) : checked_(c) { collect_reads(c.program().body); }

  Program run() {
    Program out = checked_.program();
    out.body = block(checked_.program().body);
    return out;
  }

 private:
  void collect_reads(const Expr& e) {
    if (op_info(e.op).cls == OpClass::Var) read_.insert(checked_.slot(e));
    for (const Expr& a : e.args) collect_reads(a);
  }
  void collect_reads(const std::vector<Stmt>& stmts) {
    for (const Stmt& s : stmts) {
      for (const Expr& e : s.exprs) collect_reads(e);
      collect_reads(s.body);
      collect_reads(s.else_body);
    }
  }

  static bool declares_locals(const std::vector<Stmt>& stmts) {
    for (const Stmt& s : stmts)
      if (s.op == StmtOp::Let || s.op == StmtOp::Array) return true;
    return false;
  }

  std::vector<Stmt> block(const std::vector<Stmt>& stmts) {
    std::vector<Stmt> out;
    for (const Stmt& s : stmts) {
      keep(s, out);
      if (!out.empty() && ends_block(out.back().op)) break;  // nothing after it in this block runs
    }
    return out;
  }

  void keep(const Stmt& s, std::vector<Stmt>& out) {
    switch (s.op) {
      case StmtOp::Let:
      case StmtOp::Assign:
        if (!read_.count(checked_.slot(s)) && !holds_atomic(s)) return;
        break;
      case StmtOp::Eval:
        if (!holds_atomic(s)) return;
        break;
      case StmtOp::If:
        if (is_literal(s.exprs[0])) {
          std::vector<Stmt> taken = block(s.exprs[0].imm ? s.body : s.else_body);
          if (taken.empty()) return;
          // The taken branch joins this block unless its locals could then
          // clash with names declared later beside it.
          if (!declares_locals(taken)) {
            for (Stmt& t : taken) out.push_back(std::move(t));
            return;
          }
          Stmt branch = s;
          branch.exprs[0].imm = 1;
          branch.body = std::move(taken);
          branch.else_body.clear();
          out.push_back(std::move(branch));
          return;
        }
        break;
      case StmtOp::While:
        if (is_literal(s.exprs[0]) && s.exprs[0].imm == 0) return;
        break;
      case StmtOp::Loop:
        if (is_literal(s.exprs[0]) && is_literal(s.exprs[1]) && empty_range(checked_.type(s.exprs[0]), s))
          return;
        break;
      default: break;
    }
    Stmt copy = s;
    copy.body = block(s.body);
    copy.else_body = block(s.else_body);
    if (copy.op == StmtOp::If && copy.body.empty() && copy.else_body.empty() && !holds_atomic(copy)) return;
    out.push_back(std::move(copy));
  }

  const CheckedProgram& checked_;
  std::set<uint32_t> read_;  // slots some var expression reads (loop variables are read-only)
};

}  // namespace

Program remove_dead_code(const CheckedProgram& program) { return DeadCode(program).run(); }

}  // namespace vyre::passes
