#include "differential/shrinker.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_set>

#include "differential/choice_stream.hpp"
#include "vyre/builder.hpp"
#include "vyre/json.hpp"
#include "vyre/validate.hpp"

namespace vyre::differential {
namespace {

// Shortlex: fewer decisions first, then smaller ones. Each accepted
// candidate is smaller in this order, so shrinking terminates.
bool smaller(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

class DecisionShrinker {
 public:
  DecisionShrinker(const StillFails& still_fails, const ShrinkOptions& options)
      : still_fails_(still_fails), options_(options) {}

  ShrinkResult run(std::vector<uint32_t> decisions) {
    ShrinkResult r;
    ChoiceStream first = ChoiceStream::replay(decisions);
    best_case_ = generate_case(first, options_.generator);
    best_ = first.decisions();
    counts_ = first.count_positions();
    shapes_ = first.shape_positions();
    bool progress = true;
    while (progress && attempts_ < options_.max_attempts) {
      progress = false;
      // Fewer statements and buffers first, then leaves for expressions.
      progress |= lower_tagged(true);
      progress |= lower_tagged(false);
      for (size_t size : {8u, 2u, 1u}) progress |= delete_chunks(size);
      for (size_t size : {16u, 4u, 1u}) progress |= zero_chunks(size);
      progress |= lower_values();
    }
    r.smallest = best_case_;
    r.decisions = best_;
    r.attempts = attempts_;
    r.accepted = accepted_;
    return r;
  }

 private:
  bool attempt(std::vector<uint32_t> candidate) {
    if (attempts_ >= options_.max_attempts) return false;
    ChoiceStream replay = ChoiceStream::replay(std::move(candidate));
    GeneratedCase c = generate_case(replay, options_.generator);
    std::vector<uint32_t> used = replay.decisions();
    if (!smaller(used, best_)) return false;
    // Different decisions often build the same case: run each case once.
    if (!tried_.insert(fingerprint(c)).second) return false;
    ++attempts_;
    if (!still_fails_(c)) return false;
    best_ = std::move(used);
    counts_ = replay.count_positions();
    shapes_ = replay.shape_positions();
    best_case_ = std::move(c);
    ++accepted_;
    return true;
  }

  static std::string fingerprint(const GeneratedCase& c) {
    std::string key = program_to_json(c.program, 0);
    for (const auto& [name, values] : c.contents) {
      key += name;
      for (uint32_t v : values) key += std::to_string(v) + ",";
    }
    for (const auto& [name, n] : c.sizes) key += name + "=" + std::to_string(n);
    if (c.grid) key += "g" + std::to_string((*c.grid)[0]) + std::to_string((*c.grid)[1]) +
                              std::to_string((*c.grid)[2]);
    if (c.options.workgroup_override) key += "w" + std::to_string((*c.options.workgroup_override)[0]);
    return key;
  }

  // Counts (statements, buffers) or shapes (leaf or operator): 0, then half, then one less.
  bool lower_tagged(bool counts) {
    bool any = false;
    for (size_t k = 0; attempts_ < options_.max_attempts; ++k) {
      const std::vector<size_t>& positions = counts ? counts_ : shapes_;
      if (k >= positions.size()) break;
      const size_t i = positions[k];
      if (i >= best_.size() || best_[i] == 0) continue;
      for (uint32_t v : {0u, best_[i] / 2, best_[i] - 1}) {
        if (v >= best_[i]) continue;
        std::vector<uint32_t> candidate = best_;
        candidate[i] = v;
        if (attempt(std::move(candidate))) {
          any = true;
          break;
        }
      }
    }
    return any;
  }

  bool delete_chunks(size_t size) {
    bool any = false;
    for (size_t i = best_.size(); i-- > 0;) {
      if (i + size > best_.size()) continue;
      std::vector<uint32_t> candidate = best_;
      candidate.erase(candidate.begin() + static_cast<long>(i), candidate.begin() + static_cast<long>(i + size));
      any |= attempt(std::move(candidate));
      if (attempts_ >= options_.max_attempts) break;
    }
    return any;
  }

  bool zero_chunks(size_t size) {
    bool any = false;
    for (size_t i = 0; i + size <= best_.size(); i += size) {
      if (std::all_of(best_.begin() + static_cast<long>(i), best_.begin() + static_cast<long>(i + size),
                      [](uint32_t v) { return v == 0; }))
        continue;
      std::vector<uint32_t> candidate = best_;
      std::fill(candidate.begin() + static_cast<long>(i), candidate.begin() + static_cast<long>(i + size), 0u);
      any |= attempt(std::move(candidate));
      if (attempts_ >= options_.max_attempts) break;
    }
    return any;
  }

  bool lower_values() {
    bool any = false;
    for (size_t i = 0; i < best_.size() && attempts_ < options_.max_attempts; ++i) {
      if (best_[i] == 0) continue;
      for (uint32_t v : {0u, best_[i] / 2, best_[i] - 1}) {
        if (i >= best_.size() || v >= best_[i]) continue;
        std::vector<uint32_t> candidate = best_;
        candidate[i] = v;
        if (attempt(std::move(candidate))) {
          any = true;
          break;
        }
      }
    }
    return any;
  }

  const StillFails& still_fails_;
  const ShrinkOptions& options_;
  std::vector<uint32_t> best_;
  std::vector<size_t> counts_, shapes_;
  GeneratedCase best_case_;
  std::unordered_set<std::string> tried_;
  size_t attempts_ = 0;
  size_t accepted_ = 0;
};

// ---- edits on the case ------------------------------------------------------------

bool holds_barrier(const Stmt& s) {
  if (s.op == StmtOp::Barrier) return true;
  for (const auto& b : s.body)
    if (holds_barrier(b)) return true;
  for (const auto& b : s.else_body)
    if (holds_barrier(b)) return true;
  return false;
}

// Locals the generator relies on (the invocation index, loop counters) start with "s_".
bool structural(const std::string& name) { return name.rfind("s_", 0) == 0; }

// Every statement list of the program, outermost first.
void statement_lists(std::vector<Stmt>& list, std::vector<std::vector<Stmt>*>& out) {
  out.push_back(&list);
  for (auto& s : list) {
    statement_lists(s.body, out);
    statement_lists(s.else_body, out);
  }
}

bool reads_buffer(const Expr& e, const std::string& buffer) {
  if ((e.op == Op::Load || e.op == Op::Atomic) && e.name == buffer) return true;
  return std::any_of(e.args.begin(), e.args.end(), [&](const Expr& a) { return reads_buffer(a, buffer); });
}

bool any_reads(const std::vector<Stmt>& stmts, const std::string& buffer) {
  for (const auto& t : stmts) {
    for (const auto& e : t.exprs)
      if (reads_buffer(e, buffer)) return true;
    if (any_reads(t.body, buffer) || any_reads(t.else_body, buffer)) return true;
  }
  return false;
}

// Every expression position whose value may be replaced freely: values
// stored to integer buffers and to f32 buffers nothing reads back, evaluated
// expressions, and values of integer and bool locals (f32 locals keep the
// domain the generator gave them; the invocation index and loop counters
// stay). `list` is a copy of `checked_list`, which the checked program's
// types describe.
void free_expressions(std::vector<Stmt>& list, const std::vector<Stmt>& checked_list, const CheckedProgram& checked,
                      std::vector<Expr*>& out) {
  const Program& p = checked.program();
  for (size_t i = 0; i < list.size(); ++i) {
    Stmt& s = list[i];
    const Stmt& c = checked_list[i];
    switch (s.op) {
      case StmtOp::Store: {
        const Buffer* b = p.find_buffer(s.name);
        if (b && (b->type != ScalarType::F32 || !any_reads(p.body, s.name))) out.push_back(&s.exprs[1]);
        break;
      }
      case StmtOp::Eval: out.push_back(&s.exprs[0]); break;
      case StmtOp::Let:
      case StmtOp::Assign:
        // A valid program's value has its local's type.
        if (!structural(s.name) && checked.type(c.exprs[0]) != ScalarType::F32) out.push_back(&s.exprs[0]);
        break;
      default: break;
    }
    free_expressions(s.body, c.body, checked, out);
    free_expressions(s.else_body, c.else_body, checked, out);
  }
}

class CaseShrinker {
 public:
  CaseShrinker(GeneratedCase c, const StillFails& still_fails, size_t max_attempts)
      : best_(std::move(c)), still_fails_(still_fails), max_attempts_(max_attempts) {}

  GeneratedCase run() {
    bool progress = true;
    while (progress && attempts_ < max_attempts_) {
      progress = false;
      progress |= delete_statements();
      progress |= simplify_values();
      progress |= shorten_inputs();
      progress |= simplify_input_values();
      progress |= drop_unused_buffers();
    }
    return best_;
  }

  size_t attempts() const { return attempts_; }

 private:
  bool attempt(GeneratedCase candidate) {
    if (attempts_ >= max_attempts_) return false;
    if (!validate(candidate.program).empty()) return false;
    ++attempts_;
    if (!still_fails_(candidate)) return false;
    best_ = std::move(candidate);
    return true;
  }

  bool delete_statements() {
    bool any = false;
    for (size_t list = 0;; ++list) {
      std::vector<std::vector<Stmt>*> lists;
      statement_lists(best_.program.body, lists);
      if (list >= lists.size()) break;
      for (size_t i = lists[list]->size(); i-- > 0;) {
        std::vector<std::vector<Stmt>*> now;
        statement_lists(best_.program.body, now);
        if (list >= now.size() || i >= now[list]->size()) break;
        const Stmt& s = (*now[list])[i];
        if (holds_barrier(s)) continue;
        if (s.op == StmtOp::Assign && structural(s.name)) continue;
        GeneratedCase candidate = best_;
        std::vector<std::vector<Stmt>*> theirs;
        statement_lists(candidate.program.body, theirs);
        theirs[list]->erase(theirs[list]->begin() + static_cast<long>(i));
        any |= attempt(std::move(candidate));
      }
    }
    return any;
  }

  bool simplify_values() {
    bool any = false;
    std::optional<CheckedProgram> checked;  // of best_, checked again when best_ changes
    for (size_t k = 0;; ++k) {
      if (!checked) {
        try {
          checked.emplace(best_.program);
        } catch (const ProgramError&) {
          return any;  // only valid programs are simplified
        }
      }
      std::vector<Expr*> positions;
      Program mine = best_.program;
      free_expressions(mine.body, checked->program().body, *checked, positions);
      if (k >= positions.size()) break;
      const Expr current = *positions[k];
      if (current.args.empty() && op_info(current.op).cls == OpClass::Literal && current.imm == 0) continue;
      std::vector<Expr> replacements{build::u32(0), build::i32(0), build::boolean(false), build::f32(0.0f)};
      for (const auto& a : current.args) replacements.push_back(a);
      for (const auto& r : replacements) {
        GeneratedCase candidate = best_;
        std::vector<Expr*> theirs;
        free_expressions(candidate.program.body, checked->program().body, *checked, theirs);
        *theirs[k] = r;
        if (attempt(std::move(candidate))) {
          any = true;
          checked.reset();
          break;
        }
      }
    }
    return any;
  }

  bool shorten_inputs() {
    bool any = false;
    const std::set<std::string> names = best_.shortenable;  // best_ changes under the loop
    for (const auto& name : names) {
      for (;;) {
        auto it = best_.contents.find(name);
        if (it == best_.contents.end() || it->second.size() <= 1) break;
        const size_t n = it->second.size();
        bool shortened = false;
        for (size_t keep : {size_t{1}, n / 2, n - 1}) {
          if (keep == 0 || keep >= n) continue;
          GeneratedCase candidate = best_;
          candidate.contents[name].resize(keep);
          if (attempt(std::move(candidate))) {
            shortened = any = true;
            break;
          }
        }
        if (!shortened) break;
      }
    }
    return any;
  }

  bool simplify_input_values() {
    bool any = false;
    std::vector<std::string> names;
    for (const auto& [name, values] : best_.contents) names.push_back(name);
    for (const auto& name : names) {
      const Buffer* b = best_.program.find_buffer(name);
      if (!b) continue;
      const size_t n = best_.contents[name].size();
      for (size_t size = std::max<size_t>(n, 1); size >= 1; size /= 2) {
        for (size_t i = 0; i < n; i += size) {
          // Integers become 0; f32 values become the buffer's first value,
          // which lies in the buffer's domain.
          const auto& values = best_.contents[name];
          const uint32_t simple = b->type == ScalarType::F32 ? values[0] : 0u;
          const size_t end = std::min(n, i + size);
          if (std::all_of(values.begin() + static_cast<long>(i), values.begin() + static_cast<long>(end),
                          [&](uint32_t v) { return v == simple; }))
            continue;
          GeneratedCase candidate = best_;
          std::fill(candidate.contents[name].begin() + static_cast<long>(i),
                    candidate.contents[name].begin() + static_cast<long>(end), simple);
          any |= attempt(std::move(candidate));
        }
        if (size == 1) break;
      }
    }
    return any;
  }

  bool drop_unused_buffers() {
    bool any = false;
    for (size_t i = best_.program.buffers.size(); i-- > 0;) {
      if (i >= best_.program.buffers.size()) continue;
      const Buffer b = best_.program.buffers[i];
      if (b.output && !best_.grid) continue;  // the first output sizes the default grid
      GeneratedCase candidate = best_;
      candidate.program.buffers.erase(candidate.program.buffers.begin() + static_cast<long>(i));
      candidate.contents.erase(b.name);
      candidate.sizes.erase(b.name);
      candidate.shortenable.erase(b.name);
      candidate.compare.erase(b.name);
      any |= attempt(std::move(candidate));  // refused by validation while something names it
    }
    return any;
  }

  GeneratedCase best_;
  const StillFails& still_fails_;
  size_t max_attempts_;
  size_t attempts_ = 0;
};

}  // namespace

GeneratedCase shrink_case(GeneratedCase c, const StillFails& still_fails, size_t max_attempts, size_t* attempts) {
  CaseShrinker shrinker(std::move(c), still_fails, max_attempts);
  GeneratedCase out = shrinker.run();
  if (attempts) *attempts = shrinker.attempts();
  return out;
}

ShrinkResult shrink(const std::vector<uint32_t>& decisions, const StillFails& still_fails,
                    const ShrinkOptions& options) {
  DecisionShrinker decisions_stage(still_fails, options);
  ShrinkResult r = decisions_stage.run(decisions);
  const uint64_t seed = r.smallest.seed;
  size_t more = 0;
  r.smallest = shrink_case(std::move(r.smallest), still_fails, options.max_case_attempts, &more);
  r.smallest.seed = seed;
  r.attempts += more;
  return r;
}

}  // namespace vyre::differential
