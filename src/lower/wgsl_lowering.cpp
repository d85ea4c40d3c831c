// CheckedProgram -> ShaderSpec. The text is a function of the canonical
// program and the effective workgroup size only (see shaping_signature), so
// equal cache keys always mean equal shaders. Module-scope declarations are
// written from the ShaderInterface, so the text declares exactly the
// interface that comes out with it. Types, local slots and buffers come from
// the checked program: the lowering infers and resolves nothing itself.
//
// Names: buffers become b_<name>, locals l_<name>, and everything the
// lowering adds is vyre_*; user names can therefore never clash with WGSL
// keywords or with each other.
#include <algorithm>
#include <map>
#include <set>

#include "lower/expr_queries.hpp"
#include "lower/program_passes.hpp"
#include "lower/widening.hpp"
#include "lower/approximate_forms.hpp"
#include "lower/packed_elements.hpp"
#include "lower/wgsl_helpers.hpp"
#include "lower/wgsl_literal.hpp"
#include "vyre/error.hpp"
#include "vyre/lower.hpp"

namespace vyre {
namespace {

using lowering::holds_atomic;
using lowering::is_packed;
using wgsl::HelperSet;
using wgsl::wgsl_type;

std::string buffer_name(const std::string& name) { return "b_" + name; }
std::string local_name(const std::string& name) { return "l_" + name; }

class WgslLowering {
 public:
  // `c` is the program the text is written from: `original` after the passes
  // (program_passes.hpp), which keep its buffers, so buffer indices agree and
  // atomicity is the original's, as the interface declares it.
  WgslLowering(const CheckedProgram& c, const CheckedProgram& original, const ShaderInterface& iface,
               const ShaderOptions& options, std::optional<Widening> widening)
      : checked_(c), original_(original), program_(c.program()), iface_(iface), options_(options),
        workgroup_size_(iface.workgroup_size), widening_(std::move(widening)) {
    for (size_t i = 0; i < iface.length_bindings.size(); ++i)
      length_slot_[c.bound_buffers()[iface.length_bindings[i]]] = i;
  }

  std::string run() {
    if (iface_.domain_guard) compute_domain_flag();
    zero_workgroup_memory();
    if (widening_)
      widened_body();
    else
      block(program_.body, 1);
    std::string out;
    // WebGPU's shader-f16: the device must have it (the backend refuses the
    // program otherwise, gpu.md); programs without f16 never name it.
    if (uses_f16(original_.program())) out += "enable f16;\n\n";
    out += declarations();
    out += helpers_.definitions();
    if (!out.empty()) out += "\n";
    out += "@compute @workgroup_size(" + std::to_string(workgroup_size_[0]) + ", " + std::to_string(workgroup_size_[1]) +
           ", " + std::to_string(workgroup_size_[2]) + ")\n";
    out += "fn " + std::string(ShaderInterface::kEntryPoint) + "(" + entry_parameters() + ") {\n";
    out += body_;
    out += "}\n";
    return out;
  }

 private:
  // ---- module scope --------------------------------------------------------

  std::string declarations() const {
    std::string out;
    // Bound buffers, from the interface (in canonical order, which puts them
    // before the workgroup buffers).
    for (const ShaderBinding& sb : iface_.bindings) {
      const bool packed = is_packed(sb.type);
      const std::string t = packed ? "u32" : wgsl_type(sb.type);
      const std::string element = sb.atomic || atomic_words(sb) ? "atomic<" + t + ">" : sb.wide ? "vec4<" + t + ">" : t;
      const uint64_t count = packed ? lowering::packed_words(sb.type, sb.count) : sb.count;
      const std::string n = buffer_name(sb.buffer);
      const std::string at = "@group(" + std::to_string(sb.group) + ") @binding(" + std::to_string(sb.binding) + ") ";
      if (sb.kind == BindingKind::Uniform) {
        // Uniform arrays need a 16-byte element stride: pack four values to a row.
        out += at + "var<uniform> " + n + ": array<vec4<" + t + ">, " + std::to_string((uint64_t{sb.count} + 3) / 4) +
               ">;\n";
        continue;
      }
      const std::string array =
          count == 0 ? "array<" + element + ">" : "array<" + element + ", " + std::to_string(count) + ">";
      out += at + "var<storage, " + (sb.kind == BindingKind::StorageRead ? "read" : "read_write") + "> " + n + ": " +
             array + ";\n";
    }
    for (const Buffer* b : checked_.canonical_buffers()) {
      if (b->access != Access::Workgroup) continue;
      const std::string t = wgsl_type(b->type);
      const std::string element = atomic(*b) ? "atomic<" + t + ">" : t;
      out += "var<workgroup> " + buffer_name(b->name) + ": array<" + element + ", " + std::to_string(b->count) + ">;\n";
    }
    if (iface_.uniform_slots() != 0)
      out += "@group(" + std::to_string(ShaderInterface::kLengthsGroup) + ") @binding(" +
             std::to_string(ShaderInterface::kLengthsBinding) + ") var<uniform> vyre_lengths: array<vec4<u32>, " +
             std::to_string((iface_.uniform_slots() + 3) / 4) + ">;\n";
    if (iface_.domain_guard) out += "var<private> vyre_in_domain: bool;\n";
    if (iface_.loop_guard)
      out += "@group(" + std::to_string(ShaderInterface::kLengthsGroup) + ") @binding(" +
             std::to_string(ShaderInterface::kLoopGuardBinding) +
             ") var<storage, read_write> vyre_loop_guard: array<atomic<u32>, 1>;\n";
    return out;
  }

  std::string entry_parameters() const {
    static const std::pair<const char*, const char*> kBuiltins[] = {
        {"vyre_gid", "@builtin(global_invocation_id) vyre_gid: vec3<u32>"},
        {"vyre_lid", "@builtin(local_invocation_id) vyre_lid: vec3<u32>"},
        {"vyre_lidx", "@builtin(local_invocation_index) vyre_lidx: u32"},
        {"vyre_wid", "@builtin(workgroup_id) vyre_wid: vec3<u32>"},
        {"vyre_nwg", "@builtin(num_workgroups) vyre_nwg: vec3<u32>"},
    };
    std::string out;
    for (const auto& [name, decl] : kBuiltins) {
      if (!builtins_.count(name)) continue;
      if (!out.empty()) out += ", ";
      out += decl;
    }
    return out;
  }

  // The launch-domain guard: whether this invocation lies in the domain the
  // dispatch gave, computed once. Out of it, stores are skipped and atomics
  // only read (never an early return, which would leave barriers
  // non-uniform); loads have no effect and stay as they are.
  void compute_domain_flag() {
    builtins_.insert("vyre_gid");
    std::string domain;
    for (size_t a = 0; a < 3; ++a) domain += std::string(a ? ", " : "") + uniform_slot(iface_.domain_slot() + a);
    line(1, "vyre_in_domain = all(vyre_gid < vec3<u32>(" + domain + "));");
  }

  static std::string uniform_slot(size_t slot) {
    static const char kComponent[] = {'x', 'y', 'z', 'w'};
    return "vyre_lengths[" + std::to_string(slot / 4) + "]." + kComponent[slot % 4];
  }

  // An atomic read-modify-write under the domain guard: a function that does
  // it in the domain and only loads the element outside it.
  std::string guarded_atomic(const Buffer& b, const std::string& op_name, const std::string& call, bool compare_exchange) {
    const std::string buffer = buffer_name(b.name);
    const std::string t = wgsl_type(b.type);
    std::string name = "vyre_in_domain_" + op_name + "_" + buffer;
    const std::string params = compare_exchange ? "i: u32, expected: " + t + ", value: " + t : "i: u32, value: " + t;
    const std::string args = compare_exchange ? "(i, expected, value)" : "(&" + buffer + "[i], value)";
    helpers_.define(name, "fn " + name + "(" + params + ") -> " + t + " {\n  if (vyre_in_domain) { return " + call +
                              args + "; }\n  return atomicLoad(&" + buffer + "[i]);\n}\n");
    return name;
  }

  // WebGPU promises zeroed workgroup memory, but not every driver keeps the
  // promise (lavapipe does not), so the shader clears it itself: each
  // invocation clears a strided share, then all wait at a barrier.
  void zero_workgroup_memory() {
    const uint64_t invocations = uint64_t{workgroup_size_[0]} * workgroup_size_[1] * workgroup_size_[2];
    bool any = false;
    for (const Buffer* b : checked_.canonical_buffers()) {
      if (b->access != Access::Workgroup) continue;
      any = true;
      builtins_.insert("vyre_lidx");
      const std::string n = buffer_name(b->name);
      const std::string zero = b->type == ScalarType::F32   ? "0.0f"
                               : b->type == ScalarType::F16 ? "0.0h"
                               : b->type == ScalarType::F64 ? "0.0lf"
                               : b->type == ScalarType::I32 ? "0i"
                                                            : "0u";
      const std::string element = n + "[vyre_i]";
      line(1, "for (var vyre_i: u32 = vyre_lidx; vyre_i < " + std::to_string(b->count) + "u; vyre_i = vyre_i + " +
                  std::to_string(invocations) + "u) {");
      line(2, atomic(*b) ? "atomicStore(&" + element + ", " + zero + ");" : element + " = " + zero + ";");
      line(1, "}");
    }
    if (any) line(1, "workgroupBarrier();");
  }

  // ---- vector widening --------------------------------------------------------

  // `let i = <flat index>; if (i < len(G)) { S }` becomes: invocation j takes
  // elements 4j .. 4j+3, reads each widened buffer's vec4 once, runs S once
  // per lane in element order with i = 4j + lane (its accesses at i going to
  // that lane of the vec4), and writes each stored vec4 back once. The
  // dispatch guarantees len(G) is a multiple of 4 and every widened buffer
  // holds at least len(G) elements (dispatch/widened_grid.hpp).
  void widened_body() {
    const Stmt& let = program_.body[0];
    const Stmt& check = program_.body[1];
    line(1, "let vyre_j: u32 = " + expr(let.exprs[0]) + ";");
    line(1, "if (vyre_j < (" + length(program_.buffers[widening_->guard], false) + " / 4u)) {");
    for (const Widening::Access& a : widening_->buffers) {
      const Buffer& b = program_.buffers[a.buffer];
      const std::string v = lane_vector(b), whole = buffer_name(b.name) + "[vyre_j]";
      if (!a.stored)
        line(2, "let " + v + " = " + whole + ";");
      else if (a.initial_load)
        line(2, "var " + v + " = " + whole + ";");
      else
        line(2, "var " + v + ": vec4<" + wgsl_type(b.type) + ">;");
    }
    for (uint32_t k = 0; k < kWideWidth; ++k) {
      lane_ = static_cast<int>(k);
      line(2, "{");
      line(3, "let " + local_name(let.name) + ": u32 = vyre_j * 4u + " + std::to_string(k) + "u;");
      block(check.body, 3);
      line(2, "}");
    }
    lane_ = -1;
    for (const Widening::Access& a : widening_->buffers)
      if (a.stored) line(2, buffer_name(program_.buffers[a.buffer].name) + "[vyre_j] = " + lane_vector(program_.buffers[a.buffer]) + ";");
    line(1, "}");
  }

  static std::string lane_vector(const Buffer& b) { return "vyre_v_" + b.name; }

  // In a lane, an access at i to a widened buffer: that lane of its vec4.
  std::optional<std::string> lane_element(const Buffer& b) const {
    if (lane_ < 0 || !widening_ || !widening_->find(static_cast<uint32_t>(&b - program_.buffers.data()))) return std::nullopt;
    static const char kLane[] = {'x', 'y', 'z', 'w'};
    return lane_vector(b) + "." + kLane[lane_];
  }

  // ---- statements ----------------------------------------------------------

  void line(int depth, const std::string& text) {
    body_.append(static_cast<size_t>(depth) * 2, ' ');
    body_ += text;
    body_ += '\n';
  }

  void block(const std::vector<Stmt>& stmts, int depth) {
    for (const auto& s : stmts) stmt(s, depth);
  }

  void stmt(const Stmt& s, int depth) {
    switch (s.op) {
      case StmtOp::Let:
        // A local no statement reassigns is a value, not storage: naga and the
        // driver then see an expression instead of a variable's store and loads.
        line(depth, (checked_.reassigned(s) ? "var " : "let ") + local_name(s.name) + ": " + wgsl_type(type_of(s.exprs[0])) + " = " + expr(s.exprs[0]) + ";");
        return;
      case StmtOp::Assign:
        line(depth, local_name(s.name) + " = " + expr(s.exprs[0]) + ";");
        return;
      case StmtOp::Array:
      {
        // Zeroed by an explicit initializer: WGSL zeroes a var without one each time its
        // declaration runs, but naga hoists such a declaration out of a loop and zeroes it once
        // (the array kept its last trip's values on lavapipe).
        const std::string type = "array<" + wgsl_type(s.element_type) + ", " + wgsl::u32_literal(s.count) + ">";
        line(depth, "var " + local_name(s.name) + ": " + type + " = " + type + "();");
      }
        return;
      case StmtOp::Store: {
        if (auto a = checked_.array_slot(s)) {
          // The invocation's own memory: no domain guard, nothing to race with.
          line(depth, array_element(*a, s.exprs[0]) + " = " + expr(s.exprs[1]) + ";");
          return;
        }
        const Buffer& b = program_.buffers[checked_.buffer_index(s)];
        if (auto lane = lane_element(b)) {
          line(depth, *lane + " = " + expr(s.exprs[1]) + ";");
          return;
        }
        const std::string element = is_packed(b.type) ? "" : buffer_name(b.name) + "[" + index(s.exprs[0], b) + "]";
        const std::string store = is_packed(b.type) ? packed_store(b, s.exprs[0], s.exprs[1])
                                  : atomic(b)       ? "atomicStore(&" + element + ", " + expr(s.exprs[1]) + ");"
                                                    : element + " = " + expr(s.exprs[1]) + ";";
        line(depth, iface_.domain_guard ? "if (vyre_in_domain) { " + store + " }" : store);
        return;
      }
      case StmtOp::If:
        line(depth, "if (" + expr(s.exprs[0]) + ") {");
        block(s.body, depth + 1);
        if (!s.else_body.empty()) {
          line(depth, "} else {");
          block(s.else_body, depth + 1);
        }
        line(depth, "}");
        return;
      case StmtOp::Loop: {
        const ScalarType t = type_of(s.exprs[0]);
        const std::string v = local_name(s.name);
        const std::string head = "for (var " + v + ": " + wgsl_type(t) + " = " + expr(s.exprs[0]) + "; ";
        const bool down = s.exprs.size() == 3 && t == ScalarType::I32 && static_cast<int32_t>(s.exprs[2].imm) < 0;
        const std::string condition = v + (down ? " > " : " < ") + expr(s.exprs[1]);
        const std::string step = "; " + v + " = " + loop_next(t, v, s.exprs.size() == 3 ? s.exprs[2].imm : 1u) + ") {";
        if (!iface_.loop_guard) {
          line(depth, head + condition + step);
          block(s.body, depth + 1);
          line(depth, "}");
          return;
        }
        guarded_loop(depth, head + step, condition, s.body);
        return;
      }
      case StmtOp::While:
        if (!iface_.loop_guard) {
          line(depth, "while (" + expr(s.exprs[0]) + ") {");
          block(s.body, depth + 1);
          line(depth, "}");
          return;
        }
        guarded_loop(depth, "while (true) {", expr(s.exprs[0]), s.body);
        return;
      case StmtOp::Break:
        if (iface_.loop_guard) line(depth, done_flag(open_loops_.back()) + " = true;");
        line(depth, "break;");
        return;
      case StmtOp::Continue: line(depth, "continue;"); return;
      case StmtOp::Return: line(depth, "return;"); return;
      case StmtOp::Barrier:
        line(depth, s.barrier == BarrierKind::Workgroup ? "workgroupBarrier();" : "storageBarrier();");
        return;
      case StmtOp::Eval: line(depth, "_ = " + expr(s.exprs[0]) + ";"); return;
    }
  }

  // With the loop guard, a loop records how it ended: by its condition or a
  // break sets its flag; a loop the driver cut short leaves it unset, and the
  // shader then raises the guard, which the dispatch reports as an error.
  // The condition moves into the body so that its one evaluation per
  // iteration both steers the loop and sets the flag.
  static std::string done_flag(int loop) { return "vyre_done_" + std::to_string(loop); }

  // The loop variable after one step. Counting by one never passes the end of
  // the type (the variable is below the bound); a longer step stops at the
  // end, where the loop's test fails whatever the bound, instead of wrapping.
  static std::string loop_next(ScalarType t, const std::string& v, uint32_t step) {
    if (step == 1) return v + " + " + (t == ScalarType::I32 ? "1i" : "1u");
    if (t == ScalarType::U32)
      return "select(" + v + " + " + wgsl::u32_literal(step) + ", " + wgsl::u32_literal(UINT32_MAX) + ", " + v + " > " +
             wgsl::u32_literal(UINT32_MAX - step) + ")";
    const int32_t s = static_cast<int32_t>(step);
    const std::string add = v + " + " + wgsl::i32_literal(s);
    if (s > 0)
      return "select(" + add + ", " + wgsl::i32_literal(INT32_MAX) + ", " + v + " > " + wgsl::i32_literal(INT32_MAX - s) + ")";
    return "select(" + add + ", " + wgsl::i32_literal(INT32_MIN) + ", " + v + " < " + wgsl::i32_literal(INT32_MIN - s) + ")";
  }

  void guarded_loop(int depth, const std::string& opening, const std::string& condition, const std::vector<Stmt>& body) {
    const int id = next_loop_++;
    line(depth, "var " + done_flag(id) + ": bool = false;");
    line(depth, opening);
    line(depth + 1, "if (!(" + condition + ")) {");
    line(depth + 2, done_flag(id) + " = true;");
    line(depth + 2, "break;");
    line(depth + 1, "}");
    open_loops_.push_back(id);
    block(body, depth + 1);
    open_loops_.pop_back();
    line(depth, "}");
    line(depth, "if (!" + done_flag(id) + ") { atomicStore(&vyre_loop_guard[0], 1u); }");
  }

  // ---- types ---------------------------------------------------------------

  bool atomic(const Buffer& b) const { return original_.atomic(static_cast<uint32_t>(&b - program_.buffers.data())); }

  // A writable packed buffer is made of atomic words (packed_elements.hpp).
  static bool atomic_words(const ShaderBinding& sb) {
    return is_packed(sb.type) && sb.kind == BindingKind::StorageReadWrite;
  }
  static bool atomic_words(const Buffer& b) { return is_packed(b.type) && b.access == Access::ReadWrite; }

  std::string packed_load(const Buffer& b, const Expr& index) {
    const std::string name = "vyre_load_" + buffer_name(b.name);
    helpers_.define(name, lowering::packed_loader(name, buffer_name(b.name), b.type, atomic_words(b)));
    return name + "(" + as_u32(index) + ")";
  }

  std::string packed_store(const Buffer& b, const Expr& index, const Expr& value) {
    const std::string name = "vyre_store_" + buffer_name(b.name);
    helpers_.define(name, lowering::packed_storer(name, buffer_name(b.name), b.type));
    return name + "(" + as_u32(index) + ", " + expr(value) + ");";
  }

  ScalarType type_of(const Expr& e) const { return checked_.type(e); }

  static bool rounds_to_f16_by_bits(ScalarType from, ScalarType to) {
    return to == ScalarType::F16 && (from == ScalarType::F32 || from == ScalarType::U32 || from == ScalarType::I32);
  }

  // ---- constants -------------------------------------------------------------

  const Buffer& buffer_of(const Expr& e) const { return program_.buffers[checked_.buffer_index(e)]; }

  // True when WGSL would evaluate the expression at shader creation.
  bool is_const(const Expr& e) const {
    switch (op_info(e.op).cls) {
      case OpClass::Literal: return true;
      case OpClass::Len: return !buffer_of(e).runtime_sized();
      case OpClass::Binary:
      case OpClass::Unary:
      case OpClass::Ternary:
        for (const auto& a : e.args)
          if (!is_const(a)) return false;
        return true;
      case OpClass::Conversion: {
        const auto to = static_cast<ScalarType>(e.imm);
        const bool via_helper = e.op == Op::Cast && ((is_float(type_of(e.args[0])) &&
                                                      (to == ScalarType::U32 || to == ScalarType::I32)) ||
                                                     rounds_to_f16_by_bits(type_of(e.args[0]), to));
        return !via_helper && is_const(e.args[0]);
      }
      default: return false;
    }
  }

  std::string literal(const Expr& e, bool opaque) {
    std::string text;
    ScalarType t = type_of(e);
    switch (e.op) {
      case Op::LitU32: text = wgsl::u32_literal(static_cast<uint32_t>(e.imm)); break;
      case Op::LitI32: text = wgsl::i32_literal(static_cast<int32_t>(e.imm)); break;
      case Op::LitBool: text = e.imm ? "true" : "false"; break;
      case Op::LitF16:
        text = wgsl::f16_literal(static_cast<uint32_t>(e.imm), helpers_);
        if (text.rfind("vyre_f16_bits", 0) == 0) return text;  // already a runtime call
        break;
      case Op::LitF64:
        text = wgsl::f64_literal(e.imm, helpers_);
        if (text.rfind("f64(vyre_f32_bits", 0) == 0) return text;  // already a runtime call
        break;
      default:
        text = wgsl::f32_literal(static_cast<uint32_t>(e.imm), helpers_);
        if (text.rfind("vyre_f32_bits", 0) == 0) return text;  // already a runtime call
        break;
    }
    if (!opaque) return text;
    return helpers_.use("vyre_opaque_" + wgsl_type(t)) + "(" + text + ")";
  }

  // ---- expressions -------------------------------------------------------------

  // A constant expression (other than a bare literal) is emitted with its
  // leaves passed through opaque calls, so WGSL evaluates it at run time with
  // the format's semantics instead of rejecting it at shader creation.
  std::string expr(const Expr& e, bool opaque = false) {
    if (!opaque && op_info(e.op).cls != OpClass::Literal && is_const(e)) opaque = true;
    auto arg = [&](size_t i) { return expr(e.args[i], opaque); };
    const OpInfo& info = op_info(e.op);
    switch (info.cls) {
      case OpClass::Literal: return literal(e, opaque);
      case OpClass::Var: return local_name(e.name);
      case OpClass::Len: return length(buffer_of(e), opaque);
      case OpClass::Builtin: return builtin(e);
      case OpClass::Load: return load(e);
      case OpClass::Atomic: return atomic(e);
      case OpClass::Binary: return binary(e.op, type_of(e.args[0]), arg(0), arg(1));
      case OpClass::Unary: return unary(e.op, type_of(e.args[0]), arg(0));
      case OpClass::Ternary:
        switch (e.op) {
          case Op::Fma: return "fma(" + arg(0) + ", " + arg(1) + ", " + arg(2) + ")";
          // WGSL's clamp may pick the median for floats and rejects lo > hi in
          // constants; the format means min(max(x, lo), hi).
          case Op::Clamp: return "min(max(" + arg(0) + ", " + arg(1) + "), " + arg(2) + ")";
          default:
            // WGSL's select(f, t, c) evaluates f first, the format c, t, f:
            // when an operand holds an atomic, a function keeps the order.
            if (holds_atomic(e))
              return helpers_.use("vyre_select_" + wgsl_type(type_of(e.args[1]))) + "(" + arg(0) + ", " + arg(1) +
                     ", " + arg(2) + ")";
            return "select(" + arg(2) + ", " + arg(1) + ", " + arg(0) + ")";
        }
      case OpClass::Conversion: return conversion(e, arg(0));
    }
    throw Error(ErrorKind::lowering, "internal: unknown operator");
  }

  std::string length(const Buffer& b, bool opaque) {
    if (!b.runtime_sized()) {
      const std::string n = wgsl::u32_literal(b.count);
      return opaque ? helpers_.use("vyre_opaque_u32") + "(" + n + ")" : n;
    }
    return uniform_slot(length_slot_.at(&b));
  }

  std::string builtin(const Expr& e) {
    const auto axis = static_cast<Axis>(e.imm);
    if (e.op == Op::Lid && axis == Axis::Flat) {
      builtins_.insert("vyre_lidx");
      return "vyre_lidx";
    }
    const char* name = e.op == Op::Gid ? "vyre_gid" : e.op == Op::Lid ? "vyre_lid" : e.op == Op::Wid ? "vyre_wid" : "vyre_nwg";
    builtins_.insert(name);
    return std::string(name) + "." + std::string(to_string(axis));
  }

  // An index into a buffer. A constant index that is not a plain in-range
  // literal is made opaque: WGSL rejects constant indices that are negative
  // or beyond a fixed-size array, and naga refuses 4294967295 even into a
  // runtime-sized one, so there only indices an i32 can hold stay literal.
  std::string index(const Expr& idx, const Buffer& b) {
    if (!is_const(idx)) return expr(idx);
    if (idx.op == Op::LitU32 || idx.op == Op::LitI32) {
      const int64_t v = idx.op == Op::LitU32 ? static_cast<int64_t>(idx.imm) : int64_t{static_cast<int32_t>(idx.imm)};
      const int64_t end = b.runtime_sized() ? int64_t{INT32_MAX} + 1 : int64_t{b.count};
      if (v >= 0 && v < end) return expr(idx);
    }
    return expr(idx, true);
  }

  std::string as_u32(const Expr& idx) {
    return type_of(idx) == ScalarType::U32 ? expr(idx) : "u32(" + expr(idx) + ")";
  }

  // An element of a private array. An index out of range goes to the last
  // element, as robust access may for a buffer (docs/format-v4.md): never
  // to memory outside the array, which WGSL leaves undefined for arrays in
  // function memory. A literal index is clamped here (a u32 reading of a
  // negative i32 is past the end).
  std::string array_element(uint32_t slot, const Expr& idx) {
    const Stmt& a = checked_.array_declaration(slot);
    const std::string name = local_name(a.name);
    if (idx.op == Op::LitU32 || idx.op == Op::LitI32)
      return name + "[" + wgsl::u32_literal(static_cast<uint32_t>(std::min<uint64_t>(idx.imm, a.count - 1))) + "]";
    return name + "[min(" + as_u32(idx) + ", " + wgsl::u32_literal(a.count - 1) + ")]";
  }

  std::string load(const Expr& e) {
    if (auto a = checked_.array_slot(e)) return array_element(*a, e.args[0]);
    const Buffer& b = buffer_of(e);
    if (b.access == Access::Uniform)
      return helpers_.use_uniform_loader(buffer_name(b.name), b.type) + "(" + as_u32(e.args[0]) + ")";
    if (auto lane = lane_element(b)) return *lane;
    if (is_packed(b.type)) return packed_load(b, e.args[0]);
    const std::string element = buffer_name(b.name) + "[" + index(e.args[0], b) + "]";
    return atomic(b) ? "atomicLoad(&" + element + ")" : element;
  }

  std::string atomic(const Expr& e) {
    const Buffer& b = buffer_of(e);
    const auto op = static_cast<AtomicOp>(e.imm);
    if (op == AtomicOp::CompareExchange) {
      std::string cas = helpers_.use_compare_exchange(buffer_name(b.name), b.type);
      if (iface_.domain_guard) cas = guarded_atomic(b, "compare_exchange", cas, true);
      return cas + "(" + as_u32(e.args[0]) + ", " + expr(e.args[1]) + ", " + expr(e.args[2]) + ")";
    }
    const std::string pointer = "&" + buffer_name(b.name) + "[" + index(e.args[0], b) + "]";
    if (op == AtomicOp::Load) return "atomicLoad(" + pointer + ")";
    static const std::map<AtomicOp, const char*> kNames = {
        {AtomicOp::Add, "atomicAdd"}, {AtomicOp::Sub, "atomicSub"}, {AtomicOp::Min, "atomicMin"},
        {AtomicOp::Max, "atomicMax"}, {AtomicOp::And, "atomicAnd"}, {AtomicOp::Or, "atomicOr"},
        {AtomicOp::Xor, "atomicXor"}, {AtomicOp::Exchange, "atomicExchange"}};
    const std::string call = kNames.at(op);
    if (iface_.domain_guard)
      return guarded_atomic(b, call.substr(6), call, false) + "(" + as_u32(e.args[0]) + ", " + expr(e.args[1]) + ")";
    return call + "(" + pointer + ", " + expr(e.args[1]) + ")";
  }

  std::string binary(Op op, ScalarType t, const std::string& a, const std::string& b) {
    auto infix = [&](const char* o) { return "(" + a + " " + o + " " + b + ")"; };
    switch (op) {
      case Op::Add: return infix("+");
      case Op::Sub: return infix("-");
      case Op::Mul: return infix("*");
      case Op::Div:
        if (is_float(t)) return infix("/");
        return helpers_.use(t == ScalarType::U32 ? "vyre_div_u32" : "vyre_div_i32") + "(" + a + ", " + b + ")";
      case Op::Rem:
        if (is_float(t)) return infix("%");
        return helpers_.use(t == ScalarType::U32 ? "vyre_rem_u32" : "vyre_rem_i32") + "(" + a + ", " + b + ")";
      case Op::Min: return "min(" + a + ", " + b + ")";
      case Op::Max: return "max(" + a + ", " + b + ")";
      case Op::And: return infix("&");
      case Op::Or: return infix("|");
      case Op::Xor: return infix("^");
      // Shift amounts are taken modulo 32.
      case Op::Shl: return "(" + a + " << (" + b + " & 31u))";
      case Op::Shr: return "(" + a + " >> (" + b + " & 31u))";
      case Op::Eq: return infix("==");
      case Op::Ne: return infix("!=");
      case Op::Lt: return infix("<");
      case Op::Le: return infix("<=");
      case Op::Gt: return infix(">");
      case Op::Ge: return infix(">=");
      case Op::LAnd: return infix("&&");
      case Op::LOr: return infix("||");
      case Op::Pow: return approximate_or(op, t, "pow") + "(" + a + ", " + b + ")";
      case Op::Atan2: return "atan2(" + a + ", " + b + ")";
      default: break;
    }
    throw Error(ErrorKind::lowering, "internal: not a binary operator");
  }

  std::string unary(Op op, ScalarType t, const std::string& a) {
    static const std::map<Op, const char*> kCalls = {
        {Op::Abs, "abs"},          {Op::Popcount, "countOneBits"}, {Op::Clz, "countLeadingZeros"},
        {Op::Ctz, "countTrailingZeros"}, {Op::ReverseBits, "reverseBits"}, {Op::Sqrt, "sqrt"},
        {Op::InverseSqrt, "inverseSqrt"}, {Op::Exp, "exp"},      {Op::Exp2, "exp2"},
        {Op::Log, "log"},          {Op::Log2, "log2"},             {Op::Sin, "sin"},
        {Op::Cos, "cos"},          {Op::Tan, "tan"},               {Op::Tanh, "tanh"},
        {Op::Floor, "floor"},      {Op::Ceil, "ceil"},             {Op::Round, "round"},
        {Op::Trunc, "trunc"},      {Op::Fract, "fract"}};
    if (t == ScalarType::F64 && (op == Op::Round || op == Op::Trunc || op == Op::Ceil))
      return helpers_.use(std::string("vyre_f64_") + kCalls.at(op)) + "(" + a + ")";  // keeps a zero's sign
    switch (op) {
      case Op::Neg: return "(-" + a + ")";
      case Op::Not: return "(!" + a + ")";
      case Op::BitNot: return "(~" + a + ")";
      default: break;
    }
    return approximate_or(op, t, kCalls.at(op)) + "(" + a + ")";
  }

  // The function computing `op` on type `t`: its faster form where the ULP
  // budget allows one (approximate_forms.hpp: f32 forms), else the builtin.
  std::string approximate_or(Op op, ScalarType t, const char* builtin) {
    if (t != ScalarType::F32) return builtin;
    const lowering::ApproximateForm* form = lowering::chosen_form(op, options_);
    if (!form) return builtin;
    helpers_.define(std::string(form->helper), std::string(form->definition));
    return std::string(form->helper);
  }

  std::string conversion(const Expr& e, const std::string& a) {
    const auto to = static_cast<ScalarType>(e.imm);
    const ScalarType from = type_of(e.args[0]);
    if (to == from) return a;
    if (e.op == Op::Bitcast) return "bitcast<" + wgsl_type(to) + ">(" + a + ")";
    if (from == ScalarType::F64 && to == ScalarType::U32) return helpers_.use("vyre_f64_to_u32") + "(" + a + ")";
    if (from == ScalarType::F64 && to == ScalarType::I32) return helpers_.use("vyre_f64_to_i32") + "(" + a + ")";
    // To f16 from f32 (and from integers, through f32: exact wherever the
    // result is finite), rounded on the bits: NVIDIA's driver drops an
    // f32 -> f16 conversion that is widened back to f32 (seen on the H200:
    // f32(f16(0.1)) gave 0.1), which integer operations cannot be.
    if (rounds_to_f16_by_bits(from, to))
      return helpers_.use("vyre_f16_from_f32") + "(" + (from == ScalarType::F32 ? a : "f32(" + a + ")") + ")";
    // f16 goes through f32, which holds every f16 exactly.
    const std::string f = from == ScalarType::F16 ? "f32(" + a + ")" : a;
    if (is_float(from) && to == ScalarType::U32) return helpers_.use("vyre_f32_to_u32") + "(" + f + ")";
    if (is_float(from) && to == ScalarType::I32) return helpers_.use("vyre_f32_to_i32") + "(" + f + ")";
    return wgsl_type(to) + "(" + a + ")";
  }

  const CheckedProgram& checked_;
  const CheckedProgram& original_;
  const Program& program_;
  const ShaderInterface& iface_;
  const ShaderOptions& options_;
  Dim3 workgroup_size_;
  HelperSet helpers_;
  std::map<const Buffer*, size_t> length_slot_;
  std::set<std::string> builtins_;
  std::optional<Widening> widening_;
  int lane_ = -1;                  // in a widened body: the lane being lowered
  int next_loop_ = 0;              // guarded loops numbered in text order
  std::vector<int> open_loops_;    // the guarded loops around the statement being lowered
  std::string body_;
};

}  // namespace

ShaderSpec lower(const CheckedProgram& program, const ShaderOptions& options) {
  ShaderSpec spec;
  spec.interface = shader_interface(program, options);
  checked_fixed_lengths(program, options);
  if (spec.interface.vector_width != 1) {
    // A widened shader is written from the program as it is: its body is the
    // pattern find_widening recognised (docs/lowering.md, "Passes").
    spec.wgsl = WgslLowering(program, program, spec.interface, options, find_widening(program, options)).run();
    return spec;
  }
  const CheckedProgram shaped = passes::run_passes(program, options);
  spec.wgsl = WgslLowering(shaped, program, spec.interface, options, std::nullopt).run();
  return spec;
}

std::string lower_to_wgsl(const CheckedProgram& program, const ShaderOptions& options) {
  return lower(program, options).wgsl;
}

}  // namespace vyre
