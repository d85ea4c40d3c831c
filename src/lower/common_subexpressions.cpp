// Common-subexpression elimination, per block. An expression qualifies when
// evaluating it has no effect and its value cannot change between its uses:
// no loads (a store could come between them), no atomics, and only locals
// that no assign statement writes. A block's largest such expressions that
// occur twice or more (in its statements or the blocks inside them) are
// computed once, in a new local declared before the first statement that
// uses them, where that leaves fewer nodes to compile; inner blocks then do
// the same with what is left.
#include <algorithm>
#include <set>
#include <unordered_map>

#include "lower/program_passes.hpp"
#include "util/concat.hpp"

namespace vyre::passes {
namespace {

// Whether naming an expression of `nodes` nodes that occurs `count` times
// leaves less to compile: a local and its uses against the copies.
bool pays(size_t nodes, size_t count) { return count * nodes > nodes + count + 1; }

bool composite(const Expr& e) {
  switch (op_info(e.op).cls) {
    case OpClass::Binary: case OpClass::Unary: case OpClass::Ternary: case OpClass::Conversion: return true;
    default: return false;
  }
}

class Sharing {
 public:
  explicit Sharing(const CheckedProgram& c) : checked_(c) {
    for (const Buffer& b : c.program().buffers) names_.insert(b.name);
    scan(c.program().body);
  }

  Program run() {
    Program out = checked_.program();
    out.body = block(checked_.program().body, {});
    return out;
  }

 private:
  using Names = std::unordered_map<std::string, std::string>;  // key -> the local holding it

  struct Candidate {
    size_t count = 0;
    size_t first = 0;  // index of the first statement of the block that uses it
    const Expr* example = nullptr;
  };

  // Numbers declarations in program order, so that the declarations inside
  // a statement (its loop variable, the locals of its blocks) are those
  // numbered within its span.
  void scan(const std::vector<Stmt>& stmts) {
    for (const Stmt& s : stmts) {
      const uint32_t begin = next_position_;
      if (s.op == StmtOp::Let || s.op == StmtOp::Loop) {
        names_.insert(s.name);
        position_[checked_.slot(s)] = next_position_++;
      }
      if (s.op == StmtOp::Array) names_.insert(s.name);  // no new local may take it
      if (s.op == StmtOp::Assign) assigned_.insert(checked_.slot(s));
      scan(s.body);
      scan(s.else_body);
      span_[&s] = {begin, next_position_};
    }
  }

  // Whether every local `e` reads is in scope before statement `s`: none is
  // declared inside it (an occurrence inside `s` sees only those and the
  // ones in scope before it).
  bool in_scope_before(const Expr& e, const Stmt& s) const {
    if (op_info(e.op).cls == OpClass::Var) {
      const auto [begin, end] = span_.at(&s);
      const uint32_t at = position_.at(checked_.slot(e));
      if (at >= begin && at < end) return false;
    }
    for (const Expr& a : e.args)
      if (!in_scope_before(a, s)) return false;
    return true;
  }

  // The structural identity of a qualifying expression (locals by slot, so
  // equal keys mean equal values), or empty when it does not qualify.
  const std::string& key(const Expr& e) {
    auto [it, inserted] = keys_.try_emplace(&e);
    if (!inserted) return it->second;
    std::string k;
    switch (op_info(e.op).cls) {
      case OpClass::Literal:
      case OpClass::Builtin: k = concat("#", std::to_string(static_cast<int>(e.op)), ":", std::to_string(e.imm)); break;
      case OpClass::Len: k = concat("n", std::to_string(checked_.buffer_index(e))); break;
      case OpClass::Var:
        if (!assigned_.count(checked_.slot(e))) k = concat("v", std::to_string(checked_.slot(e)));
        break;
      case OpClass::Load:
      case OpClass::Atomic: break;
      default: {
        k = concat("(", std::to_string(static_cast<int>(e.op)), ":", std::to_string(e.imm));
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

  bool shareable(const Expr& e) { return composite(e) && !key(e).empty() && nodes(e) >= 3; }

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
      if (it != seen.end() && pays(nodes(e), it->second.count)) {
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

  std::vector<Stmt> block(const std::vector<Stmt>& stmts, const Names& outer) {
    // Which expressions this block shares, and where each is first used.
    std::unordered_map<std::string, Candidate> all;
    for (size_t i = 0; i < stmts.size(); ++i) count(stmts[i], i, outer, nullptr, all);
    std::set<std::string> chosen;
    choose(stmts, all, chosen);
    std::unordered_map<std::string, Candidate> kept;
    if (!chosen.empty())
      for (size_t i = 0; i < stmts.size(); ++i) count(stmts[i], i, outer, &chosen, kept);
    // A local can hold an expression only where every local it reads is in scope.
    std::vector<std::pair<size_t, std::string>> lets;  // (statement, key)
    for (const auto& [k, c] : kept)
      if (pays(nodes(*c.example), c.count) && in_scope_before(*c.example, stmts[c.first])) lets.emplace_back(c.first, k);
    Names named = outer;
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
      Stmt copy = without_children(s);
      for (const Expr& e : s.exprs) copy.exprs.push_back(rebuild(e, named));
      copy.body = block(s.body, named);
      copy.else_body = block(s.else_body, named);
      out.push_back(std::move(copy));
    }
    return out;
  }

  const CheckedProgram& checked_;
  std::set<std::string> names_;     // every name the program declares, and those added
  std::set<uint32_t> assigned_;     // slots some assign statement writes
  std::unordered_map<const Expr*, std::string> keys_;
  std::unordered_map<uint32_t, uint32_t> position_;  // slot -> the declaration's number
  std::unordered_map<const Stmt*, std::pair<uint32_t, uint32_t>> span_;  // numbers declared inside a statement
  uint32_t next_position_ = 0;
  int next_name_ = 0;
};

}  // namespace

Program share_common_subexpressions(const CheckedProgram& program) { return Sharing(program).run(); }

}  // namespace vyre::passes
