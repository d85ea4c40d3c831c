// Validation: types, scopes, bindings, access and counts, reported with the
// JSON path of the offending value. Sub-expressions with an error have no
// type, and their parents stay silent about them, so one mistake gives one
// diagnostic.
#include "vyre/validate.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <set>

#include "ir/checked_facts.hpp"
#include "ir/identifier.hpp"
#include "ir/limits.hpp"
#include "ir/loop_step.hpp"
#include "ir/uniformity.hpp"

namespace vyre {
namespace {

using Type = std::optional<ScalarType>;

bool is_numeric(ScalarType t) { return t != ScalarType::Bool; }

// Vulkan's GLSL.std.450 defines these for 16- and 32-bit floats only, so
// SPIR-V for them on f64 is invalid whatever naga or one driver accepts.
bool undefined_for_f64(Op op) {
  switch (op) {
    case Op::Pow: case Op::Atan2: case Op::Exp: case Op::Exp2: case Op::Log: case Op::Log2:
    case Op::Sin: case Op::Cos: case Op::Tan: case Op::Tanh: return true;
    default: return false;
  }
}

std::string f64_refusal(Op op) {
  return std::string(op_info(op).json) +
         " is not defined for f64 (Vulkan defines it for 16- and 32-bit floats only): convert to f32 "
         "(a cast) and back";
}
bool is_integer(ScalarType t) { return t == ScalarType::U32 || t == ScalarType::I32; }

struct Local {
  ScalarType type = ScalarType::U32;
  bool loop_variable = false;
  uint32_t slot = 0;
  const Stmt* array = nullptr;  // a private array's declaration
};

class Validator {
 public:
  Validator(const Program& p, ir::CheckedFacts* facts) : program_(p), facts_(facts) {
    if (facts_) facts_->atomic.assign(p.buffers.size(), false);
  }

  std::vector<Diagnostic> run() {
    check_workgroup_size();
    check_buffers();
    check_domain();
    check_block(program_.body, "body", 0);
    if (nodes_ > kMaxProgramNodes)
      error("body", "the program has " + std::to_string(nodes_) + " statements and expressions; at most " +
                        std::to_string(kMaxProgramNodes) +
                        " (shader compilers take minutes beyond that): split it into several programs");
    if (diagnostics_.empty()) {
      for (auto& d : check_uniformity(program_)) diagnostics_.push_back(std::move(d));
    }
    return std::move(diagnostics_);
  }

 private:
  void error(std::string path, std::string message) { diagnostics_.push_back({std::move(path), std::move(message)}); }

  // ---- facts for the CheckedProgram ----------------------------------------

  void note_slot(const void* node, uint32_t slot) {
    if (facts_) facts_->slots[node] = slot;
  }
  void note_buffer(const void* node, const Buffer* b) {
    if (facts_ && b) facts_->buffers[node] = static_cast<uint32_t>(b - program_.buffers.data());
  }

  void check_workgroup_size() {
    const auto& wg = program_.workgroup_size;
    uint64_t product = 1;
    for (size_t i = 0; i < 3; ++i) {
      if (wg[i] == 0) error("workgroup_size[" + std::to_string(i) + "]", "must be a positive integer");
      product *= wg[i];
    }
    if (product > kMaxWorkgroupInvocations)
      error("workgroup_size", "product of the three sizes is " + std::to_string(product) + "; at most " +
                                  std::to_string(kMaxWorkgroupInvocations) + " invocations per workgroup");
  }

  void check_domain() {
    if (program_.domain.empty()) return;
    const Buffer* b = program_.find_buffer(program_.domain);
    if (b == nullptr)
      error("domain", "names no buffer of the program: '" + program_.domain + "'");
    else if (b->access == Access::Workgroup)
      error("domain", "'" + b->name + "' is a workgroup buffer; the domain is the elements of a bound buffer");
    else if (!program_.domain_shape.empty())
      check_domain_shape(*b);
  }

  // A shaped domain covers its buffer exactly: the buffer has a fixed count,
  // the product of the extents.
  void check_domain_shape(const Buffer& b) {
    const auto& shape = program_.domain_shape;
    if (shape.size() < 2 || shape.size() > 3) {
      error("domain.shape", "has two or three extents, not " + std::to_string(shape.size()));
      return;
    }
    uint64_t product = 1;
    for (uint32_t d : shape) {
      if (d == 0) {
        error("domain.shape", "extents are positive");
        return;
      }
      product *= d;
    }
    if (b.count == 0)
      error("domain.shape", "'" + b.name + "' is runtime-sized; a domain in a shape needs a buffer of fixed count");
    else if (product != b.count)
      error("domain.shape", "covers " + std::to_string(product) + " elements; '" + b.name + "' has " +
                                std::to_string(b.count));
  }

  void check_buffers() {
    std::map<std::string, size_t> names;
    std::map<uint32_t, size_t> bindings;
    const size_t workgroup_buffers = static_cast<size_t>(std::count_if(
        program_.buffers.begin(), program_.buffers.end(), [](const Buffer& b) { return b.access == Access::Workgroup; }));
    if (workgroup_buffers > kMaxWorkgroupBuffers)
      error("buffers", "the program declares " + std::to_string(workgroup_buffers) + " workgroup buffers; at most " +
                           std::to_string(kMaxWorkgroupBuffers) +
                           " (shader compilers take minutes for hundreds): make one larger buffer of them");
    for (size_t i = 0; i < program_.buffers.size(); ++i) {
      const Buffer& b = program_.buffers[i];
      const std::string at = "buffers[" + std::to_string(i) + "]";
      if (!is_identifier(b.name)) {
        error(at + ".name", "'" + b.name + "' is not an identifier ([A-Za-z_][A-Za-z0-9_]*, at most " +
                                std::to_string(kMaxIdentifierLength) + " characters)");
      } else if (auto [it, fresh] = names.emplace(b.name, i); !fresh) {
        error(at + ".name", "buffer '" + b.name + "' is already declared at buffers[" + std::to_string(it->second) + "]");
      }
      if (b.access == Access::Workgroup) {
        if (b.binding) error(at + ".binding", "workgroup buffers have no binding");
      } else if (!b.binding) {
        error(at + ".binding", "missing: " + std::string(to_string(b.access)) + " buffers need a binding");
      } else if (*b.binding > kMaxBinding) {
        error(at + ".binding", "binding " + std::to_string(*b.binding) + " is above the maximum of " +
                                   std::to_string(kMaxBinding));
      } else if (auto [it, fresh] = bindings.emplace(*b.binding, i); !fresh) {
        error(at + ".binding", "binding " + std::to_string(*b.binding) + " is already used by buffers[" +
                                   std::to_string(it->second) + "]");
      }
      // Narrow and bool elements are packed into 32-bit words in storage
      // buffers; uniform and workgroup memory keep whole words.
      if ((is_narrow(b.type) || b.type == ScalarType::Bool) &&
          (b.access == Access::Uniform || b.access == Access::Workgroup))
        error(at + ".type", std::string(to_string(b.type)) + " elements are for read and read_write buffers; a " +
                                std::string(to_string(b.access)) + " buffer holds u32, i32 or f32" +
                                (b.access == Access::Workgroup ? " (or f16, f64)" : ""));
      // A uniform array's elements need a 16-byte stride, which the lowering
      // packs for 4-byte elements only.
      if ((b.type == ScalarType::F16 || b.type == ScalarType::F64) && b.access == Access::Uniform)
        error(at + ".type", std::string(to_string(b.type)) +
                                " elements are for read, read_write and workgroup buffers, not uniform ones");
      if ((b.access == Access::Uniform || b.access == Access::Workgroup) && b.count == 0)
        error(at + ".count", std::string(to_string(b.access)) + " buffers need a positive count");
      if (b.output && b.access != Access::ReadWrite)
        error(at + ".output", "only read_write buffers can be outputs (this one is " +
                                  std::string(to_string(b.access)) + ")");
    }
  }

  // ---- statements ----------------------------------------------------------

  void check_block(const std::vector<Stmt>& block, const std::string& at, int loop_depth) {
    const size_t scope_mark = scope_.size();
    for (size_t i = 0; i < block.size(); ++i) check_stmt(block[i], at + "[" + std::to_string(i) + "]", loop_depth);
    // Leave the block: its locals go out of scope.
    while (scope_.size() > scope_mark) {
      locals_.erase(scope_.back());
      scope_.pop_back();
    }
  }

  // A loop's step is a literal of the loop's type, so its sign, and with it
  // the direction of the loop and the test that ends it, is known here.
  void check_step(const Expr& step, Type loop_type, const std::string& at) {
    const Type t = check_expr(step, at);
    if (step.op != Op::LitU32 && step.op != Op::LitI32) {
      error(at, "a loop step is a u32 or i32 literal, e.g. {\"i32\": -1}");
      return;
    }
    if (loop_type && t && *loop_type != t)
      error(at, "the step is " + std::string(to_string(*t)) + " but the loop counts in " + std::string(to_string(*loop_type)));
    else if (step.imm == 0)
      error(at, "a loop step of 0 would never end the loop");
    else if (is_unit_step(step))
      error(at, "a step of 1 is written as no step (the loop without one counts up by 1)");
  }

  uint32_t declare(const std::string& name, ScalarType type, bool loop_variable, const Stmt* array = nullptr) {
    const uint32_t slot = next_slot_++;
    locals_[name] = Local{type, loop_variable, slot, array};
    scope_.push_back(name);
    if (facts_) facts_->local_count = next_slot_;
    return slot;
  }

  void check_stmt(const Stmt& s, const std::string& at, int loop_depth) {
    ++nodes_;
    if (++depth_ > static_cast<int>(kMaxNesting)) {
      if (!depth_reported_) error(at, "nested deeper than " + std::to_string(kMaxNesting) + " levels");
      depth_reported_ = true;
      --depth_;
      return;
    }
    switch (s.op) {
      case StmtOp::Let: {
        Type t = check_expr(s.exprs.at(0), at + ".value");
        if (!is_identifier(s.name)) {
          error(at + ".let", "'" + s.name + "' is not an identifier");
        } else if (locals_.count(s.name)) {
          error(at + ".let", "'" + s.name + "' is already declared in this scope (no shadowing)");
        } else if (t) {
          note_slot(&s, declare(s.name, *t, false));
        }
        break;
      }
      case StmtOp::Assign: {
        Type t = check_expr(s.exprs.at(0), at + ".value");
        auto it = locals_.find(s.name);
        if (it != locals_.end()) {
          note_slot(&s, it->second.slot);
          if (facts_) {
            if (facts_->reassigned.size() <= it->second.slot) facts_->reassigned.resize(it->second.slot + 1, false);
            facts_->reassigned[it->second.slot] = true;
          }
        }
        if (it == locals_.end()) {
          error(at + ".assign", "no local named '" + s.name + "' in scope");
        } else if (it->second.loop_variable) {
          error(at + ".assign", "'" + s.name + "' is a loop variable, which is read-only");
        } else if (it->second.array) {
          error(at + ".assign", "'" + s.name + "' is a private array: store to one of its elements");
        } else if (t && *t != it->second.type) {
          error(at + ".value", "'" + s.name + "' is " + std::string(to_string(it->second.type)) + " but the value is " +
                                   std::string(to_string(*t)));
        }
        break;
      }
      case StmtOp::Store: {
        check_index(s.exprs.at(0), at + ".index");
        Type t = check_expr(s.exprs.at(1), at + ".value");
        if (const Stmt* a = array_in_scope(&s, s.name)) {
          if (t && *t != a->element_type)
            error(at + ".value", "array '" + s.name + "' holds " + std::string(to_string(a->element_type)) +
                                     " but the value is " + std::string(to_string(*t)));
          break;
        }
        const Buffer* b = program_.find_buffer(s.name);
        note_buffer(&s, b);
        if (!b) {
          error(at + ".store", "no buffer named '" + s.name + "'");
        } else if (b->access != Access::ReadWrite && b->access != Access::Workgroup) {
          error(at + ".store", "buffer '" + s.name + "' is " + std::string(to_string(b->access)) +
                                   "; stores need a read_write or workgroup buffer");
        } else if (t && *t != value_type(b->type)) {
          error(at + ".value", "buffer '" + s.name + "' holds " + std::string(to_string(b->type)) +
                                   (is_narrow(b->type) ? " (stored from " + std::string(to_string(value_type(b->type))) + ")"
                                                       : std::string()) +
                                   " but the value is " + std::string(to_string(*t)));
        }
        break;
      }
      case StmtOp::If:
        expect(check_expr(s.exprs.at(0), at + ".if"), ScalarType::Bool, at + ".if", "the condition");
        check_block(s.body, at + ".then", loop_depth);
        check_block(s.else_body, at + ".else", loop_depth);
        break;
      case StmtOp::Loop: {
        if (facts_) facts_->has_loop = true;
        Type from = check_expr(s.exprs.at(0), at + ".from");
        Type to = check_expr(s.exprs.at(1), at + ".to");
        if (from && !is_integer(*from)) error(at + ".from", "loop bounds are u32 or i32, not " + std::string(to_string(*from)));
        if (to && !is_integer(*to)) error(at + ".to", "loop bounds are u32 or i32, not " + std::string(to_string(*to)));
        if (from && to && is_integer(*from) && is_integer(*to) && *from != *to)
          error(at + ".to", "loop bounds must have one type: from is " + std::string(to_string(*from)) + ", to is " +
                                std::string(to_string(*to)));
        if (s.exprs.size() > 3) error(at + ".loop", "a loop holds from, to and an optional step, no more");
        if (s.exprs.size() == 3) check_step(s.exprs[2], from && is_integer(*from) ? from : std::nullopt, at + ".step");
        const size_t scope_mark = scope_.size();
        if (!is_identifier(s.name)) {
          error(at + ".loop", "'" + s.name + "' is not an identifier");
        } else if (locals_.count(s.name)) {
          error(at + ".loop", "'" + s.name + "' is already declared in this scope (no shadowing)");
        } else {
          note_slot(&s, declare(s.name, from && is_integer(*from) ? *from : ScalarType::U32, true));
        }
        check_block(s.body, at + ".body", loop_depth + 1);
        while (scope_.size() > scope_mark) {
          locals_.erase(scope_.back());
          scope_.pop_back();
        }
        break;
      }
      case StmtOp::Array: check_array(s, at); break;
      case StmtOp::While:
        if (facts_) facts_->has_loop = true;
        expect(check_expr(s.exprs.at(0), at + ".while"), ScalarType::Bool, at + ".while", "the condition");
        check_block(s.body, at + ".body", loop_depth + 1);
        break;
      case StmtOp::Break:
      case StmtOp::Continue:
        if (loop_depth == 0) error(at, std::string(to_string(s.op)) + " outside a loop or while");
        break;
      case StmtOp::Barrier:
        if (facts_) facts_->has_barrier = true;
        break;  // placement is checked by the uniformity pass
      case StmtOp::Eval:
        check_expr(s.exprs.at(0), at + ".eval");
        break;
      case StmtOp::Return:
        break;
    }
    --depth_;
  }

  // ---- expressions ---------------------------------------------------------

  void expect(Type got, ScalarType want, const std::string& at, const std::string& what) {
    if (got && *got != want)
      error(at, what + " must be " + std::string(to_string(want)) + ", not " + std::string(to_string(*got)));
  }

  // The declaration of the private array `name` when one is in scope, noted
  // as what the load or store `node` reads or writes.
  const Stmt* array_in_scope(const void* node, const std::string& name) {
    const auto it = locals_.find(name);
    if (it == locals_.end() || !it->second.array) return nullptr;
    if (facts_) facts_->arrays[node] = it->second.slot;
    return it->second.array;
  }

  // {"array": "acc", "type": "f32", "count": 16}: a name of its own (no
  // buffer's, so load and store mean one thing), a value type, a count
  // within the program's budget of private elements.
  void check_array(const Stmt& s, const std::string& at) {
    ++nodes_;
    if (!is_identifier(s.name)) {
      error(at + ".array", "'" + s.name + "' is not an identifier");
    } else if (locals_.count(s.name)) {
      error(at + ".array", "'" + s.name + "' is already declared in this scope (no shadowing)");
    } else if (program_.find_buffer(s.name)) {
      error(at + ".array", "'" + s.name + "' is a buffer's name; a private array needs a name of its own");
    } else {
      const uint32_t slot = declare(s.name, s.element_type, false, &s);
      note_slot(&s, slot);
      if (facts_) facts_->array_declarations[slot] = &s;
    }
    if (s.element_type == ScalarType::Bool || is_narrow(s.element_type))
      error(at + ".type", "a private array holds u32, i32, f32, f16 or f64, not " + std::string(to_string(s.element_type)));
    if (s.count == 0) error(at + ".count", "a private array has at least one element");
    private_elements_ += s.count;
    if (private_elements_ > kMaxPrivateElements && !private_limit_reported_) {
      private_limit_reported_ = true;
      error(at + ".count", "the program's private arrays hold more than " + std::to_string(kMaxPrivateElements) +
                               " elements in all (they live in each invocation's registers or local memory): "
                               "use a workgroup or storage buffer");
    }
  }

  void check_index(const Expr& e, const std::string& at) {
    Type t = check_expr(e, at);
    if (t && !is_integer(*t)) error(at, "an index is u32 or i32, not " + std::string(to_string(*t)));
  }

  const Buffer* lookup_buffer(const std::string& name, const std::string& at) {
    const Buffer* b = program_.find_buffer(name);
    if (!b) error(at, "no buffer named '" + name + "'");
    return b;
  }

  Type check_expr(const Expr& e, const std::string& at) {
    ++nodes_;
    if (++depth_ > static_cast<int>(kMaxNesting)) {
      if (!depth_reported_) error(at, "nested deeper than " + std::to_string(kMaxNesting) + " levels");
      depth_reported_ = true;
      --depth_;
      return std::nullopt;
    }
    Type t = check_expr_inner(e, at);
    if (t && facts_) {
      facts_->types[&e] = *t;
      facts_->ops.set(static_cast<size_t>(e.op));
    }
    --depth_;
    return t;
  }

  Type check_expr_inner(const Expr& e, const std::string& at) {
    const OpInfo& info = op_info(e.op);
    const std::string key = at + "." + std::string(info.json);
    auto operand = [&](size_t i) { return key + "[" + std::to_string(i) + "]"; };
    if ((info.cls == OpClass::Binary || info.cls == OpClass::Unary || info.cls == OpClass::Ternary) &&
        e.args.size() != info.arity) {
      error(key, std::string(info.json) + " takes " + std::to_string(info.arity) + " operand(s), got " +
                     std::to_string(e.args.size()));
      return std::nullopt;
    }
    switch (info.cls) {
      case OpClass::Literal:
        switch (e.op) {
          case Op::LitF64: return ScalarType::F64;
          case Op::LitU32: case Op::LitI32: case Op::LitF32:
            if (e.imm > UINT32_MAX) {
              error(key, std::string(info.json) + " literal holds 32 bits");
              return std::nullopt;
            }
            return e.op == Op::LitU32 ? ScalarType::U32 : e.op == Op::LitI32 ? ScalarType::I32 : ScalarType::F32;
          case Op::LitF16:
            if (e.imm > 0xffffu) {
              error(key, "an f16 literal holds 16 bits");
              return std::nullopt;
            }
            return ScalarType::F16;
          default:
            if (e.imm > 1) {
              error(key, "a bool literal is 0 or 1");
              return std::nullopt;
            }
            return ScalarType::Bool;
        }
      case OpClass::Var: {
        auto it = locals_.find(e.name);
        if (it == locals_.end()) {
          error(key, "no local named '" + e.name + "' in scope");
          return std::nullopt;
        }
        if (it->second.array) {
          error(key, "'" + e.name + "' is a private array: load one of its elements");
          return std::nullopt;
        }
        note_slot(&e, it->second.slot);
        return it->second.type;
      }
      case OpClass::Load: {
        if (e.args.size() != 1) {
          error(key, "load takes one index");
          return std::nullopt;
        }
        check_index(e.args[0], at + ".index");
        if (const Stmt* a = array_in_scope(&e, e.name)) return a->element_type;
        const Buffer* b = lookup_buffer(e.name, key);
        note_buffer(&e, b);
        return b ? Type(value_type(b->type)) : std::nullopt;
      }
      case OpClass::Len: {
        if (auto it = locals_.find(e.name); it != locals_.end() && it->second.array) {
          error(key, "'" + e.name + "' is a private array of " + std::to_string(it->second.array->count) +
                         " elements; len is a buffer's length");
          return std::nullopt;
        }
        const Buffer* b = lookup_buffer(e.name, key);
        if (!b) return std::nullopt;
        note_buffer(&e, b);
        return ScalarType::U32;
      }
      case OpClass::Builtin: {
        const bool flat_ok = e.op == Op::Lid;
        if (e.imm > static_cast<uint32_t>(Axis::Flat) || (e.imm == static_cast<uint32_t>(Axis::Flat) && !flat_ok)) {
          error(key, std::string("axis must be x, y or z") + (flat_ok ? " (or flat)" : ""));
          return std::nullopt;
        }
        return ScalarType::U32;
      }
      case OpClass::Binary: return check_binary(e, key, operand);
      case OpClass::Unary: return check_unary(e, key, operand);
      case OpClass::Ternary: return check_ternary(e, key, operand);
      case OpClass::Conversion: return check_conversion(e, at, key);
      case OpClass::Atomic: return check_atomic(e, at, key);
    }
    return std::nullopt;
  }

  template <class OperandPath>
  Type check_binary(const Expr& e, const std::string& key, const OperandPath& operand) {
    Type a = check_expr(e.args[0], operand(0));
    Type b = check_expr(e.args[1], operand(1));
    const std::string name(op_info(e.op).json);
    auto require = [&](Type t, size_t i, bool ok, const char* what) {
      if (t && !ok) error(operand(i), name + " takes " + what + ", not " + std::string(to_string(*t)));
      return !t || ok;
    };
    switch (e.op) {
      case Op::Shl:
      case Op::Shr:
        require(a, 0, a && is_integer(*a), "u32 or i32");
        require(b, 1, b && *b == ScalarType::U32, "a u32 shift amount");
        return a && is_integer(*a) ? a : std::nullopt;
      default: break;
    }
    bool ok_a = true, ok_b = true;
    switch (e.op) {
      case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Rem: case Op::Min: case Op::Max:
      case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge:
        ok_a = require(a, 0, a && is_numeric(*a), "u32, i32, f32, f16 or f64");
        ok_b = require(b, 1, b && is_numeric(*b), "u32, i32, f32, f16 or f64");
        break;
      case Op::And: case Op::Or: case Op::Xor:
        ok_a = require(a, 0, a && is_integer(*a), "u32 or i32");
        ok_b = require(b, 1, b && is_integer(*b), "u32 or i32");
        break;
      case Op::LAnd: case Op::LOr:
        ok_a = require(a, 0, a && *a == ScalarType::Bool, "bool");
        ok_b = require(b, 1, b && *b == ScalarType::Bool, "bool");
        break;
      case Op::Pow: case Op::Atan2:
        ok_a = require(a, 0, a && is_float(*a), "f32 or f16");
        ok_b = require(b, 1, b && is_float(*b), "f32 or f16");
        if (a && *a == ScalarType::F64) {
          error(key, f64_refusal(e.op));
          return std::nullopt;
        }
        break;
      default: break;  // eq, ne: any type
    }
    if (!a || !b || !ok_a || !ok_b) return std::nullopt;
    if (*a != *b) {
      error(key, name + " needs operands of one type, got " + std::string(to_string(*a)) + " and " +
                     std::string(to_string(*b)));
      return std::nullopt;
    }
    switch (e.op) {
      case Op::Eq: case Op::Ne: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge: return ScalarType::Bool;
      default: return a;
    }
  }

  template <class OperandPath>
  Type check_unary(const Expr& e, const std::string& key, const OperandPath&) {
    Type a = check_expr(e.args[0], key);
    if (!a) return std::nullopt;
    const std::string name(op_info(e.op).json);
    bool ok = false;
    const char* want = "";
    switch (e.op) {
      case Op::Neg: ok = *a == ScalarType::I32 || is_float(*a); want = "i32, f32, f16 or f64"; break;
      case Op::Abs: ok = is_numeric(*a); want = "u32, i32, f32, f16 or f64"; break;
      case Op::Not: ok = *a == ScalarType::Bool; want = "bool"; break;
      case Op::BitNot: case Op::Popcount: case Op::Clz: case Op::Ctz: case Op::ReverseBits:
        ok = is_integer(*a); want = "u32 or i32"; break;
      default:
        if (*a == ScalarType::F64 && undefined_for_f64(e.op)) {
          error(key, f64_refusal(e.op));
          return std::nullopt;
        }
        ok = is_float(*a);
        want = "f32, f16 or f64";
        break;
    }
    if (!ok) {
      error(key, name + " takes " + want + ", not " + std::string(to_string(*a)));
      return std::nullopt;
    }
    return a;
  }

  template <class OperandPath>
  Type check_ternary(const Expr& e, const std::string& key, const OperandPath& operand) {
    Type t[3];
    for (size_t i = 0; i < 3; ++i) t[i] = check_expr(e.args[i], operand(i));
    const std::string name(op_info(e.op).json);
    if (e.op == Op::Select) {
      if (t[0] && *t[0] != ScalarType::Bool) {
        error(operand(0), "select's condition must be bool, not " + std::string(to_string(*t[0])));
        return std::nullopt;
      }
      if (!t[0] || !t[1] || !t[2]) return std::nullopt;
      if (*t[1] != *t[2]) {
        error(key, "select needs both values of one type, got " + std::string(to_string(*t[1])) + " and " +
                       std::string(to_string(*t[2])));
        return std::nullopt;
      }
      return t[1];
    }
    const bool fma = e.op == Op::Fma;
    bool ok = true;
    for (size_t i = 0; i < 3; ++i) {
      if (t[i] && (fma ? !is_float(*t[i]) : !is_numeric(*t[i]))) {
        error(operand(i), name + " takes " + (fma ? "f32, f16 or f64" : "u32, i32, f32, f16 or f64") + ", not " +
                              std::string(to_string(*t[i])));
        ok = false;
      }
    }
    if (!ok || !t[0] || !t[1] || !t[2]) return std::nullopt;
    if (*t[0] != *t[1] || *t[0] != *t[2]) {
      error(key, name + " needs operands of one type, got " + std::string(to_string(*t[0])) + ", " +
                     std::string(to_string(*t[1])) + " and " + std::string(to_string(*t[2])));
      return std::nullopt;
    }
    return t[0];
  }

  Type check_conversion(const Expr& e, const std::string& at, const std::string& key) {
    if (e.args.size() != 1) {
      error(key, "a conversion takes one value");
      return std::nullopt;
    }
    Type from = check_expr(e.args[0], at + ".value");
    if (e.imm > static_cast<uint32_t>(ScalarType::Bool) && e.imm != static_cast<uint32_t>(ScalarType::F16) &&
        e.imm != static_cast<uint32_t>(ScalarType::F64)) {
      const auto narrow = static_cast<ScalarType>(e.imm);
      error(key, e.imm <= static_cast<uint32_t>(ScalarType::I16)
                     ? std::string(to_string(narrow)) + " is a storage type, not a value type: convert to " +
                           std::string(to_string(value_type(narrow))) + " (a store to a " +
                           std::string(to_string(narrow)) + " buffer keeps the low bits)"
                     : "unknown target type");
      return std::nullopt;
    }
    const auto to = static_cast<ScalarType>(e.imm);
    if (e.op == Op::Bitcast) {
      for (const ScalarType t : {ScalarType::F16, ScalarType::F64})
        if (to == t || (from && *from == t)) {
          error(key, "bitcast converts between the 32-bit types u32, i32 and f32; an " + std::string(to_string(t)) +
                         " has " + (t == ScalarType::F16 ? "16" : "64") + " bits");
          return std::nullopt;
        }
      if (to == ScalarType::Bool) {
        error(key, "bitcast converts between u32, i32 and f32, not to bool");
        return std::nullopt;
      }
      if (from && *from == ScalarType::Bool) {
        error(at + ".value", "bitcast converts between u32, i32 and f32, not from bool");
        return std::nullopt;
      }
    }
    return from ? Type(to) : std::nullopt;
  }

  Type check_atomic(const Expr& e, const std::string& at, const std::string& key) {
    if (e.imm > static_cast<uint32_t>(AtomicOp::Load)) {
      error(key, "unknown atomic operation");
      return std::nullopt;
    }
    const auto op = static_cast<AtomicOp>(e.imm);
    const size_t want_args = op == AtomicOp::Load ? 1 : op == AtomicOp::CompareExchange ? 3 : 2;
    if (e.args.size() != want_args) {
      error(key, "atomic " + std::string(to_string(op)) + " takes " + std::to_string(want_args) + " operand(s)");
      return std::nullopt;
    }
    check_index(e.args[0], at + ".index");
    const Buffer* b = lookup_buffer(e.name, at + ".buffer");
    note_buffer(&e, b);
    if (facts_ && b) facts_->atomic[static_cast<size_t>(b - program_.buffers.data())] = true;
    std::vector<std::pair<Type, std::string>> values;
    if (op == AtomicOp::CompareExchange) values.emplace_back(check_expr(e.args[1], at + ".expected"), at + ".expected");
    if (op != AtomicOp::Load) values.emplace_back(check_expr(e.args.back(), at + ".value"), at + ".value");
    if (!b) return std::nullopt;
    if (b->access != Access::ReadWrite && b->access != Access::Workgroup) {
      error(at + ".buffer", "atomics need a read_write or workgroup buffer; '" + b->name + "' is " +
                                std::string(to_string(b->access)));
      return std::nullopt;
    }
    if (!is_integer(b->type)) {
      error(at + ".buffer", "atomics need a u32 or i32 buffer; '" + b->name + "' holds " + std::string(to_string(b->type)));
      return std::nullopt;
    }
    bool ok = true;
    for (const auto& [t, path] : values) {
      if (t && *t != b->type) {
        error(path, "buffer '" + b->name + "' holds " + std::string(to_string(b->type)) + " but this is " +
                        std::string(to_string(*t)));
        ok = false;
      }
    }
    return ok ? Type(b->type) : std::nullopt;
  }

  const Program& program_;
  ir::CheckedFacts* facts_;
  std::vector<Diagnostic> diagnostics_;
  std::map<std::string, Local> locals_;
  std::vector<std::string> scope_;  // declaration order, for leaving blocks
  int depth_ = 0;
  bool depth_reported_ = false;
  uint32_t next_slot_ = 0;
  size_t nodes_ = 0;  // statements and expressions checked
  uint64_t private_elements_ = 0;  // of every array statement, counted once each
  bool private_limit_reported_ = false;
};

}  // namespace

namespace {
std::atomic<uint64_t> g_checks_run{0};
}  // namespace

std::vector<Diagnostic> ir::check(const Program& program, ir::CheckedFacts* facts) {
  g_checks_run.fetch_add(1, std::memory_order_relaxed);
  return Validator(program, facts).run();
}

uint64_t ir::checks_run() { return g_checks_run.load(std::memory_order_relaxed); }

std::vector<Diagnostic> validate(const Program& program) { return ir::check(program, nullptr); }

void require_valid(const Program& program) {
  auto diagnostics = validate(program);
  if (!diagnostics.empty()) throw ProgramError(std::move(diagnostics));
}

}  // namespace vyre
