// Common-subexpression elimination, per block. An expression qualifies when
// evaluating it has no effect and its value cannot change between its uses:
// no loads (a store could come between them), no atomics, and only locals
// that no assign statement writes. A block's largest such expressions that
// occur twice or more (in its statements or the blocks inside them) are
// computed once, in a new local declared before the first statement that
// uses them; inner blocks then do the same with what is left.
#include <algorithm>
#include <set>
#include <unordered_map>

#include "lower/program_passes.hpp"

namespace vyre::passes {
namespace {

// Expressions smaller than this (an operator on two leaves) are cheaper to
// repeat than to name.
constexpr size_t kMinNodes = 3;

bool composite(const Expr& e) {
  switch (op_info(e.op).cls) {
    case OpClass::Binary: case OpClass::Unary: case OpClass::Ternary: case OpClass::Conversion: return true;
    default: return false;
  }
}

class Sharing {
 public:
  explicit Sharing(const CheckedProgram& c) : c_(c) {
    for (const Buffer& b : c.program().buffers) names_.insert(b.name);
    scan(c.program().body);
  }

  Program run() {
    Program out = c_.program();
    out.body = block(c_.program().body, {}, {});
    return out;
  }

 private:
  using Names = std::unordered_map<std::string, std::string>;  // key -> the local holding it

  struct Candidate {
    size_t count = 0;
    size_t first = 0;  // index of the first statement of the block that uses it
    const Expr* example = nullptr;
  };

  void scan(const std::vector<Stmt>& stmts) {
    for (const Stmt& s : stmts) {
      if (s.op == StmtOp::Let || s.op == StmtOp::Loop) names_.insert(s.name);
      if (s.op == StmtOp::Assign) assigned_.insert(c_.slot(s));
      scan(s.body);
      scan(s.else_body);
    }
  }

  // The structural identity of a qualifying expression (locals by slot, so
  // equal keys mean equal values), or empty when it does not qualify.
  const std::string& key(const Expr& e) {
    auto [it, inserted] = keys_.try_emplace(&e);
    if (!inserted) return it->second;
    std::string k;
    switch (op_info(e.op).cls) {
      case OpClass::Literal:
      case OpClass::Builtin: k = "#" + std::to_string(static_cast<int>(e.op)) + ":" + std::to_string(e.imm); break;
      case OpClass::Len: k = "n" + std::to_string(c_.buffer_index(e)); break;
      case OpClass::Var:
        if (!assigned_.count(c_.slot(e))) k = "v" + std::to_string(c_.slot(e));
        break;
      case OpClass::Load:
      case OpClass::Atomic: break;
      default: {
        k = "(" + std::to_string(static_cast<int>(e.op)) + ":" + std::to_string(e.imm);
        for (const Expr& a : e.args) {
          const std::string& ak = key(a);
          if (ak.empty()) {
            k.clear();
            break;
          }
          k += " " + ak;
        }
        if (!k.empty()) k += ")";
      }
    }
    // The element may have moved while the arguments were keyed.
    return keys_[&e] = std::move(k);
  }

  static size_t nodes(const Expr& e) {
    size_t n = 1;
    for (const Expr& a : e.args) n += nodes(a);
    return n;
  }

  bool shareable(const Expr& e) { return composite(e) && !key(e).empty() && nodes(e) >= kMinNodes; }

  // Counts shareable expressions of statement `index` (and the blocks in
  // it), not looking inside those already named by an enclosing block or,
  // with `only`, inside the ones chosen here.
  void count(const Expr& e, size_t index, const Names& named, const std::set<std::string>* only,
             std::unordered_map<std::string, Candidate>& seen) {
    if (!composite(e)) {
      for (const Expr& a : e.args) count(a, index, named, only, seen);
      return;
    }
    const std::string& k = key(e);
    if (!k.empty() && named.count(k)) return;
    if (shareable(e) && (!only || only->count(k))) {
      Candidate& c = seen[k];
      if (c.count++ == 0) {
        c.first = index;
        c.example = &e;
      }
      if (only) return;
    }
    for (const Expr& a : e.args) count(a, index, named, only, seen);
  }
  void count(const std::vector<Stmt>& stmts, size_t index, const Names& named, const std::set<std::string>* only,
             std::unordered_map<std::string, Candidate>& seen) {
    for (const Stmt& s : stmts) count(s, index, named, only, seen);
  }
  void count(const Stmt& s, size_t index, const Names& named, const std::set<std::string>* only,
             std::unordered_map<std::string, Candidate>& seen) {
    for (const Expr& e : s.exprs) count(e, index, named, only, seen);
    count(s.body, index, named, only, seen);
    count(s.else_body, index, named, only, seen);
  }

  // The largest repeated expressions: a repeated one hides those inside it.
  void choose(const Expr& e, const std::unordered_map<std::string, Candidate>& seen, std::set<std::string>& chosen) {
    if (composite(e) && shareable(e)) {
      auto it = seen.find(key(e));
      if (it != seen.end() && it->second.count >= 2) {
        chosen.insert(key(e));
        return;
      }
    }
    for (const Expr& a : e.args) choose(a, seen, chosen);
  }
  void choose(const std::vector<Stmt>& stmts, const std::unordered_map<std::string, Candidate>& seen,
              std::set<std::string>& chosen) {
    for (const Stmt& s : stmts) {
      for (const Expr& e : s.exprs) choose(e, seen, chosen);
      choose(s.body, seen, chosen);
      choose(s.else_body, seen, chosen);
    }
  }

  void slots_of(const Expr& e, std::set<uint32_t>& out) {
    if (op_info(e.op).cls == OpClass::Var) out.insert(c_.slot(e));
    for (const Expr& a : e.args) slots_of(a, out);
  }

  std::string fresh_name() {
    for (;;) {
      std::string n = "cse" + std::to_string(next_name_++);
      if (names_.insert(n).second) return n;
    }
  }

  Expr rebuild(const Expr& e, const Names& named) {
    if (composite(e)) {
      const std::string& k = key(e);
      if (!k.empty()) {
        auto it = named.find(k);
        if (it != named.end()) {
          Expr var;
          var.op = Op::Var;
          var.name = it->second;
          return var;
        }
      }
    }
    Expr out;
    out.op = e.op;
    out.imm = e.imm;
    out.name = e.name;
    for (const Expr& a : e.args) out.args.push_back(rebuild(a, named));
    return out;
  }

  std::vector<Stmt> block(const std::vector<Stmt>& stmts, const Names& outer, const std::set<uint32_t>& visible) {
    // Which expressions this block shares, and where each is first used.
    std::unordered_map<std::string, Candidate> all;
    for (size_t i = 0; i < stmts.size(); ++i) count(stmts[i], i, outer, nullptr, all);
    std::set<std::string> chosen;
    choose(stmts, all, chosen);
    std::unordered_map<std::string, Candidate> kept;
    if (!chosen.empty())
      for (size_t i = 0; i < stmts.size(); ++i) count(stmts[i], i, outer, &chosen, kept);
    // A local can hold an expression only where every local it reads is in scope.
    std::vector<std::set<uint32_t>> visible_at;
    std::vector<std::pair<size_t, std::string>> lets;  // (statement, key)
    std::set<uint32_t> in_scope = visible;
    for (size_t i = 0; i < stmts.size(); ++i) {
      visible_at.push_back(in_scope);
      if (stmts[i].op == StmtOp::Let) in_scope.insert(c_.slot(stmts[i]));
    }
    Names named = outer;
    std::unordered_map<std::string, std::string> here;  // key -> name, declared in this block
    for (const auto& [k, c] : kept) {
      if (c.count < 2) continue;
      std::set<uint32_t> reads;
      slots_of(*c.example, reads);
      bool ok = true;
      for (uint32_t s : reads) ok = ok && visible_at[c.first].count(s);
      if (ok) lets.emplace_back(c.first, k);
    }
    std::sort(lets.begin(), lets.end());
    std::vector<Stmt> out;
    size_t next = 0;
    for (size_t i = 0; i < stmts.size(); ++i) {
      for (; next < lets.size() && lets[next].first == i; ++next) {
        const std::string& k = lets[next].second;
        Stmt let;
        let.op = StmtOp::Let;
        let.name = fresh_name();
        let.exprs.push_back(rebuild(*kept.at(k).example, outer));
        named[k] = let.name;
        out.push_back(std::move(let));
      }
      const Stmt& s = stmts[i];
      Stmt copy;
      copy.op = s.op;
      copy.name = s.name;
      copy.barrier = s.barrier;
      for (const Expr& e : s.exprs) copy.exprs.push_back(rebuild(e, named));
      std::set<uint32_t> inner = visible_at[i];
      if (s.op == StmtOp::Loop) inner.insert(c_.slot(s));
      copy.body = block(s.body, named, inner);
      copy.else_body = block(s.else_body, named, visible_at[i]);
      out.push_back(std::move(copy));
    }
    return out;
  }

  const CheckedProgram& c_;
  std::set<std::string> names_;     // every name the program declares, and those added
  std::set<uint32_t> assigned_;     // slots some assign statement writes
  std::unordered_map<const Expr*, std::string> keys_;
  int next_name_ = 0;
};

}  // namespace

Program share_common_subexpressions(const CheckedProgram& program) { return Sharing(program).run(); }

}  // namespace vyre::passes
