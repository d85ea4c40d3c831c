// A conservative uniformity analysis.
//
// Values: literals, workgroup ids, workgroup counts, lengths and loads from
// read-only buffers at uniform indices are uniform; invocation ids, loads
// from read_write and workgroup buffers and atomics are not; an operator is
// uniform when its operands are. A local is uniform when every assignment to
// it, anywhere, stores a uniform value in uniform control flow (a fixed point
// over the whole program, flow-insensitive, hence conservative). A local is
// its declaration: two locals of one name in sibling blocks are two locals.
//
// Control flow: the branches of an `if`, and the body of a loop, are uniform
// when the enclosing flow and the condition (bounds) are. After an `if`
// whose branches may leave (return, break, continue) the flow stays uniform
// only when the condition was. A loop that some invocations may leave early
// (a break, continue or return in non-uniform flow) is non-uniform in every
// iteration and afterwards. These are the WGSL rules, taken on the safe side.
#include "ir/uniformity.hpp"

#include <map>
#include <set>
#include <optional>
#include <string>

namespace vyre {
namespace {

// nullopt: uniform; otherwise why not.
using Reason = std::optional<std::string>;

class Analysis {
 public:
  explicit Analysis(const Program& p) : program_(p) {
    for (const auto& b : p.buffers)
      if (buffer_is_atomic(p, b.name)) atomic_buffers_.insert(b.name);
  }

  std::vector<Diagnostic> run() {
    // Locals start uniform and only ever become non-uniform: iterate to the fixed point.
    do {
      changed_ = false;
      diagnostics_.clear();
      block(program_.body, "body", std::nullopt);
    } while (changed_);
    return diagnostics_;
  }

 private:
  struct LoopContext {
    bool exits_non_uniform = false;
    Reason why;
  };

  // Why a value may differ between invocations: `text` for the message,
  // `root` the source it comes from (a local passes on its root, so causes
  // never nest, however long a chain of locals is).
  struct Cause {
    std::string text;
    std::string root;
  };

  std::optional<Cause> cause(const Expr& e, const std::string& at) {
    auto leaf = [](const std::string& text) { return Cause{text, text}; };
    switch (e.op) {
      case Op::Gid: return leaf("the value at " + at + " depends on gid");
      case Op::Lid: return leaf("the value at " + at + " depends on lid");
      case Op::Atomic: return leaf("the value at " + at + " is the result of an atomic");
      case Op::Var: {
        auto it = non_uniform_locals_.find(declaration(e.name));
        if (it == non_uniform_locals_.end()) return std::nullopt;
        return Cause{"'" + e.name + "' may differ between invocations (" + it->second + ")", it->second};
      }
      case Op::Load: {
        // A private array's elements are not followed one by one: any may differ.
        if (const Stmt* d = declaration(e.name); d && d->op == StmtOp::Array)
          return leaf("the load at " + at + " reads private array '" + e.name + "', whose elements may differ "
                      "between invocations");
        const Buffer* b = program_.find_buffer(e.name);
        const bool read_only = b && (b->access == Access::Read || b->access == Access::Uniform);
        if (!read_only || atomic_buffers_.count(e.name))
          return leaf("the load at " + at + " reads buffer '" + e.name + "', which invocations may write");
        break;
      }
      default: break;
    }
    for (const auto& a : e.args)
      if (auto c = cause(a, at)) return c;
    return std::nullopt;
  }

  Reason value(const Expr& e, const std::string& at) {
    if (auto c = cause(e, at)) return c->text;
    return std::nullopt;
  }

  // The statement that declares the local `name` seen here (its `let`, or
  // its `loop`): the scope rules make it unique; it stays the same in every
  // pass to the fixed point.
  const Stmt* declaration(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = it->find(name);
      if (found != it->end()) return found->second;
    }
    return nullptr;  // not reached for a program that passed the scope checks
  }

  void mark_local(const Stmt* local, const std::optional<std::string>& root) {
    if (!root || !local || non_uniform_locals_.count(local)) return;
    non_uniform_locals_[local] = *root;
    changed_ = true;
  }

  static Reason join(const Reason& a, const Reason& b) { return a ? a : b; }

  // Returns the control flow after the block.
  Reason block(const std::vector<Stmt>& stmts, const std::string& at, Reason cf) {
    scopes_.emplace_back();
    for (size_t i = 0; i < stmts.size(); ++i) cf = stmt(stmts[i], at + "[" + std::to_string(i) + "]", cf);
    scopes_.pop_back();
    return cf;
  }

  void note_exit(const Stmt& s, const Reason& cf) {
    if (!cf) return;
    if (s.op == StmtOp::Return) {
      for (auto& loop : loops_) {
        loop.exits_non_uniform = true;
        loop.why = cf;
      }
    } else if (!loops_.empty()) {
      loops_.back().exits_non_uniform = true;
      loops_.back().why = cf;
    }
  }

  Reason stmt(const Stmt& s, const std::string& at, Reason cf) {
    switch (s.op) {
      case StmtOp::Let:
      case StmtOp::Assign: {
        std::optional<Cause> c = cf ? std::nullopt : cause(s.exprs[0], at + ".value");
        if (s.op == StmtOp::Let) scopes_.back()[s.name] = &s;  // in scope after its value
        const Stmt* local = declaration(s.name);
        if (cf) {
          mark_local(local, cf);
        } else if (c) {
          mark_local(local, c->root);
        }
        return cf;
      }
      case StmtOp::Store:
      case StmtOp::Eval:
        return cf;
      case StmtOp::Array:
        scopes_.back()[s.name] = &s;
        return cf;
      case StmtOp::Barrier:
        if (cf)
          diagnostics_.push_back({at, "a barrier must be reached in uniform control flow, but here " + *cf});
        return cf;
      case StmtOp::Return:
      case StmtOp::Break:
      case StmtOp::Continue:
        note_exit(s, cf);
        return cf;
      case StmtOp::If: {
        Reason cond = value(s.exprs[0], at + ".if");
        Reason inside = join(cf, cond ? Reason("the condition at " + at + ".if " + cond_reason(*cond)) : std::nullopt);
        Reason then_out = block(s.body, at + ".then", inside);
        Reason else_out = block(s.else_body, at + ".else", inside);
        if (!may_exit(s.body) && !may_exit(s.else_body)) return cf;
        return join(inside, join(then_out, else_out));
      }
      case StmtOp::Loop:
      case StmtOp::While: {
        Reason bounds;
        if (s.op == StmtOp::Loop) {
          bounds = join(value(s.exprs[0], at + ".from"), value(s.exprs[1], at + ".to"));
          if (bounds) bounds = "the bounds of the loop at " + at + " " + cond_reason(*bounds);
        } else {
          bounds = value(s.exprs[0], at + ".while");
          if (bounds) bounds = "the condition at " + at + ".while " + cond_reason(*bounds);
        }
        Reason inside = join(cf, bounds);
        // The loop variable is in scope in the body only.
        scopes_.emplace_back();
        if (s.op == StmtOp::Loop) {
          scopes_.back()[s.name] = &s;
          mark_local(&s, inside);
        }
        loops_.push_back({});
        const size_t mark = diagnostics_.size();
        block(s.body, at + ".body", inside);
        LoopContext ctx = loops_.back();
        if (ctx.exits_non_uniform && !inside) {
          // Later iterations run with the invocations that did not leave.
          diagnostics_.resize(mark);
          inside = "some invocations may leave the loop at " + at + " early (" + *ctx.why + ")";
          if (s.op == StmtOp::Loop) mark_local(&s, inside);
          loops_.back() = {};
          block(s.body, at + ".body", inside);
        }
        loops_.pop_back();
        scopes_.pop_back();
        // A return inside leaves the enclosing loops too.
        if (ctx.exits_non_uniform && contains_return(s.body)) {
          for (auto& loop : loops_) {
            loop.exits_non_uniform = true;
            loop.why = ctx.why;
          }
        }
        return ctx.exits_non_uniform || bounds ? inside : cf;
      }
    }
    return cf;
  }

  static std::string cond_reason(const std::string& why) { return "is not uniform: " + why; }

  static bool may_exit(const std::vector<Stmt>& stmts) {
    for (const auto& s : stmts) {
      if (s.op == StmtOp::Return || s.op == StmtOp::Break || s.op == StmtOp::Continue) return true;
      if (s.op == StmtOp::If && (may_exit(s.body) || may_exit(s.else_body))) return true;
      // break/continue inside a nested loop stay inside it; a return leaves.
      if ((s.op == StmtOp::Loop || s.op == StmtOp::While) && contains_return(s.body)) return true;
    }
    return false;
  }

  static bool contains_return(const std::vector<Stmt>& stmts) {
    for (const auto& s : stmts) {
      if (s.op == StmtOp::Return) return true;
      if (contains_return(s.body) || contains_return(s.else_body)) return true;
    }
    return false;
  }

  const Program& program_;
  std::map<const Stmt*, std::string> non_uniform_locals_;  // by declaration: why not uniform
  std::vector<std::map<std::string, const Stmt*>> scopes_;   // name -> declaration, innermost last
  std::set<std::string> atomic_buffers_;
  std::vector<LoopContext> loops_;
  std::vector<Diagnostic> diagnostics_;
  bool changed_ = false;
};

}  // namespace

std::vector<Diagnostic> check_uniformity(const Program& program) { return Analysis(program).run(); }

}  // namespace vyre
