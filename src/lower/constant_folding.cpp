// Constant folding. A folded value is computed with the format's operators
// (ir/scalar_ops.hpp), which the conformance suite holds every GPU to; an
// f32 operator folds only where IEEE-754 leaves WGSL no other result:
// addition, subtraction, multiplication, comparisons, min, max, clamp, the
// rounding functions and conversions, on finite operands that are neither
// subnormal (a GPU may flush those) nor negative zero (min and max may pick
// either zero). Division, remainder, fma and the transcendentals, whose GPU
// results may differ from the reference within their error bounds, are left
// to the shader.
#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <set>

#include "ir/scalar_ops.hpp"
#include "lower/expr_queries.hpp"
#include "lower/program_passes.hpp"

namespace vyre::passes {
namespace {

using lowering::holds_atomic;
using lowering::is_literal;

Expr literal(ScalarType type, uint64_t bits) {
  Expr e;
  e.op = type == ScalarType::U32   ? Op::LitU32
         : type == ScalarType::I32 ? Op::LitI32
         : type == ScalarType::F32 ? Op::LitF32
         : type == ScalarType::F16 ? Op::LitF16
                                   : Op::LitBool;
  e.imm = bits;
  return e;
}

// A finite, normal or +0 f32: the values every GPU computes with exactly.
bool plain_f32(uint32_t bits) {
  const float f = std::bit_cast<float>(bits);
  return std::isnormal(f) || bits == 0;
}

// Whether an integer or bool converts to f32 without rounding.
bool exactly_f32(ScalarType from, uint32_t bits) {
  const double v = from == ScalarType::I32 ? static_cast<double>(static_cast<int32_t>(bits)) : static_cast<double>(bits);
  return static_cast<double>(static_cast<float>(v)) == v;
}

bool exact_f32_operator(Op op) {
  switch (op) {
    case Op::Add: case Op::Sub: case Op::Mul: case Op::Min: case Op::Max:
    case Op::Eq: case Op::Ne: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge:
    case Op::Neg: case Op::Abs: case Op::Floor: case Op::Ceil: case Op::Round: case Op::Trunc:
    case Op::Clamp: case Op::Cast: case Op::Bitcast:
      return true;
    default: return false;
  }
}

class Folder {
 public:
  Folder(const CheckedProgram& c, const std::map<std::string, uint32_t>& fixed_lengths, const Dim3& workgroup)
      : checked_(c), fixed_lengths_(fixed_lengths), workgroup_(workgroup) {
    collect_assigned(c.program().body);
  }

  Program run() {
    Program out = checked_.program();
    out.body = block(checked_.program().body);
    return out;
  }

 private:
  void collect_assigned(const std::vector<Stmt>& stmts) {
    for (const Stmt& s : stmts) {
      if (s.op == StmtOp::Assign) assigned_.insert(checked_.slot(s));
      collect_assigned(s.body);
      collect_assigned(s.else_body);
    }
  }

  std::vector<Stmt> block(const std::vector<Stmt>& stmts) {
    std::vector<Stmt> out;
    out.reserve(stmts.size());
    for (const Stmt& s : stmts) out.push_back(stmt(s));
    return out;
  }

  Stmt stmt(const Stmt& s) {
    Stmt out = without_children(s);
    for (const Expr& e : s.exprs) out.exprs.push_back(fold(e));
    // A local never reassigned that holds a literal is that literal.
    if (s.op == StmtOp::Let && is_literal(out.exprs[0]) && !assigned_.count(checked_.slot(s)))
      known_[checked_.slot(s)] = out.exprs[0];
    // Inside a loop with literal u32 bounds its variable (read-only, and
    // never shadowed, so its name means it throughout the body) lies between
    // them.
    const bool ranged = s.op == StmtOp::Loop && out.exprs[0].op == Op::LitU32 && out.exprs[1].op == Op::LitU32 &&
                        out.exprs[0].imm < out.exprs[1].imm;
    if (ranged) loop_ranges_[s.name] = Range{out.exprs[0].imm, out.exprs[1].imm - 1};
    out.body = block(s.body);
    if (ranged) loop_ranges_.erase(s.name);
    out.else_body = block(s.else_body);
    return out;
  }

  // ---- ranges of u32 values ------------------------------------------------

  struct Range {
    uint64_t lo = 0, hi = 0;
  };

  // The values a u32 expression (already folded, so not a node of the
  // checked program: no facts about it) can take, when it is an expression
  // without effects whose bounds are known.
  std::optional<Range> range(const Expr& e) const {
    auto both = [&](auto combine) -> std::optional<Range> {
      const auto a = range(e.args[0]), b = range(e.args[1]);
      if (!a || !b) return std::nullopt;
      return combine(*a, *b);
    };
    constexpr uint64_t kMax = 0xffffffffu;
    switch (e.op) {
      case Op::LitU32: return Range{e.imm, e.imm};
      case Op::Lid: {
        const auto axis = static_cast<Axis>(e.imm);
        const uint64_t n = axis == Axis::Flat ? uint64_t{workgroup_[0]} * workgroup_[1] * workgroup_[2]
                                              : workgroup_[static_cast<size_t>(axis)];
        return Range{0, n - 1};
      }
      case Op::Var: {
        auto it = loop_ranges_.find(e.name);
        return it == loop_ranges_.end() ? std::nullopt : std::optional<Range>(it->second);
      }
      case Op::Add:
        return both([](Range a, Range b) {
          return a.hi + b.hi <= kMax ? std::optional<Range>(Range{a.lo + b.lo, a.hi + b.hi}) : std::nullopt;
        });
      case Op::Mul:
        return both([](Range a, Range b) {
          return a.hi * b.hi <= kMax ? std::optional<Range>(Range{a.lo * b.lo, a.hi * b.hi}) : std::nullopt;
        });
      case Op::Min: return both([](Range a, Range b) { return std::optional<Range>(Range{std::min(a.lo, b.lo), std::min(a.hi, b.hi)}); });
      case Op::And: {
        // x & m never exceeds m, whatever x is (when evaluating x has no effect).
        const auto a = range(e.args[0]), b = range(e.args[1]);
        if ((!a && holds_atomic(e.args[0])) || (!b && holds_atomic(e.args[1])) || (!a && !b)) return std::nullopt;
        return Range{0, std::min(a ? a->hi : kMax, b ? b->hi : kMax)};
      }
      case Op::Rem: {
        // x % m is below m for m > 0 (the format's x % 0 is 0, never reached here).
        const auto a = range(e.args[0]), b = range(e.args[1]);
        if (!b || b->lo == 0 || (!a && holds_atomic(e.args[0]))) return std::nullopt;
        return Range{0, std::min(a ? a->hi : kMax, b->hi - 1)};
      }
      default: return std::nullopt;
    }
  }

  // A u32 comparison the ranges of its operands decide: 1 or 0.
  std::optional<uint32_t> decided(const Expr& e) const {
    if (e.op != Op::Lt && e.op != Op::Le && e.op != Op::Gt && e.op != Op::Ge) return std::nullopt;
    const auto a = range(e.args[0]), b = range(e.args[1]);
    if (!a || !b) return std::nullopt;
    switch (e.op) {
      case Op::Lt: return a->hi < b->lo ? std::optional<uint32_t>(1) : a->lo >= b->hi ? std::optional<uint32_t>(0) : std::nullopt;
      case Op::Le: return a->hi <= b->lo ? std::optional<uint32_t>(1) : a->lo > b->hi ? std::optional<uint32_t>(0) : std::nullopt;
      case Op::Gt: return a->lo > b->hi ? std::optional<uint32_t>(1) : a->hi <= b->lo ? std::optional<uint32_t>(0) : std::nullopt;
      default: return a->lo >= b->hi ? std::optional<uint32_t>(1) : a->hi < b->lo ? std::optional<uint32_t>(0) : std::nullopt;
    }
  }

  Expr fold(const Expr& e) {
    const OpClass cls = op_info(e.op).cls;
    if (cls == OpClass::Var) {
      auto it = known_.find(checked_.slot(e));
      return it == known_.end() ? e : it->second;
    }
    if (cls == OpClass::Len) {
      const Buffer& b = checked_.program().buffers[checked_.buffer_index(e)];
      if (!b.runtime_sized()) return literal(ScalarType::U32, b.count);
      auto it = fixed_lengths_.find(b.name);
      return it == fixed_lengths_.end() ? e : literal(ScalarType::U32, it->second);
    }
    Expr out = e;
    for (size_t i = 0; i < e.args.size(); ++i) out.args[i] = fold(e.args[i]);
    switch (cls) {
      case OpClass::Binary: return binary(e, std::move(out));
      case OpClass::Unary:
      case OpClass::Ternary:
      case OpClass::Conversion: return computed(e, std::move(out));
      default: return out;
    }
  }

  // `&&` and `||` with a literal left operand need not evaluate the right
  // one, as in the format (the right one is then never run).
  Expr binary(const Expr& original, Expr e) {
    if ((e.op == Op::LAnd || e.op == Op::LOr) && is_literal(e.args[0])) {
      const bool left = e.args[0].imm != 0;
      if (e.op == Op::LAnd) return left ? std::move(e.args[1]) : literal(ScalarType::Bool, 0);
      return left ? literal(ScalarType::Bool, 1) : std::move(e.args[1]);
    }
    if (checked_.type(original.args[0]) == ScalarType::U32)
      if (auto v = decided(e)) return literal(ScalarType::Bool, *v);
    return computed(original, std::move(e));
  }

  Expr computed(const Expr& original, Expr e) {
    if (e.op == Op::Select && is_literal(e.args[0])) {
      // select evaluates both operands; the unused one may go only when
      // evaluating it has no effect.
      const size_t keep = e.args[0].imm ? 1 : 2, drop = keep == 1 ? 2 : 1;
      if (!holds_atomic(e.args[drop])) return std::move(e.args[keep]);
      return e;
    }
    for (const Expr& a : e.args)
      if (!is_literal(a)) return e;
    const ScalarType operand = checked_.type(original.args[0]);
    const ScalarType result = checked_.type(original);
    // f16 and f64 are left to the device: its rounding of intermediate
    // values is not pinned down as closely as f32's (docs/format-v4.md).
    for (const ScalarType t : {ScalarType::F16, ScalarType::F64})
      if (operand == t || result == t) return e;
    if (operand == ScalarType::F32 || result == ScalarType::F32) {
      if (!exact_f32_operator(e.op)) return e;
      for (const Expr& a : e.args)
        if (checked_.type(original.args[&a - e.args.data()]) == ScalarType::F32 && !plain_f32(static_cast<uint32_t>(a.imm))) return e;
    }
    uint64_t value = 0;
    switch (op_info(e.op).cls) {
      case OpClass::Binary: value = scalar::apply_binary(e.op, operand, e.args[0].imm, e.args[1].imm); break;
      case OpClass::Unary: value = scalar::apply_unary(e.op, operand, e.args[0].imm); break;
      case OpClass::Ternary:
        if (e.op == Op::Select) return e.args[0].imm ? e.args[1] : e.args[2];
        value = scalar::apply_ternary(e.op, checked_.type(original), e.args[0].imm, e.args[1].imm, e.args[2].imm);
        break;
      default: {
        const auto to = static_cast<ScalarType>(e.imm);
        value = e.op == Op::Bitcast ? e.args[0].imm : scalar::apply_cast(operand, to, e.args[0].imm);
        // An integer WGSL converts to f32 may round either way when it is not
        // exactly representable: fold only exact conversions.
        if (to == ScalarType::F32 && e.op == Op::Cast && !exactly_f32(operand, static_cast<uint32_t>(e.args[0].imm))) return e;
        break;
      }
    }
    if (result == ScalarType::F32 && !plain_f32(static_cast<uint32_t>(value))) return e;
    return literal(result, value);
  }

  const CheckedProgram& checked_;
  const std::map<std::string, uint32_t>& fixed_lengths_;
  Dim3 workgroup_;
  std::map<std::string, Range> loop_ranges_;  // loop variable -> its range, in its body
  std::set<uint32_t> assigned_;       // slots some assign statement writes
  std::map<uint32_t, Expr> known_;    // slot -> the literal a never-reassigned local holds
};

}  // namespace

Program fold_constants(const CheckedProgram& program, const std::map<std::string, uint32_t>& fixed_lengths,
                       const Dim3& workgroup) {
  return Folder(program, fixed_lengths, workgroup).run();
}

}  // namespace vyre::passes
