// Canonical encoding: buffers in canonical order, no label, minimal LEB128
// integers, fixed-width little-endian literals, canonical NaN.
#include "vyre/error.hpp"
#include "vyre/wire.hpp"
#include "ir/limits.hpp"
#include "wire/encoding.hpp"

namespace vyre {
namespace {

class Writer {
 public:
  std::vector<uint8_t> out;

  void u8(uint8_t v) { out.push_back(v); }
  void varint(uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<uint8_t>(v | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<uint8_t>(v));
  }
  void fixed32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void str(const std::string& s) {
    varint(s.size());
    out.insert(out.end(), s.begin(), s.end());
  }

  void program(const Program& p) {
    for (uint8_t m : wire::kMagic) out.push_back(m);
    const uint32_t version = format_version(p);
    varint(version);
    for (uint32_t d : p.workgroup_size) varint(d);
    const auto order = canonical_buffer_order(p);
    varint(order.size());
    for (const Buffer* b : order) buffer(*b);
    if (version >= 2) str(p.domain);
    if (version >= 3) {
      varint(p.domain_shape.size());
      for (uint32_t d : p.domain_shape) varint(d);
    }
    block(p.body);
  }

  void buffer(const Buffer& b) {
    str(b.name);
    u8(static_cast<uint8_t>(b.access));
    u8(static_cast<uint8_t>(b.type));
    if (b.access != Access::Workgroup) varint(b.binding.value_or(0));
    varint(b.count);
    u8(b.output ? 1 : 0);
  }

  void block(const std::vector<Stmt>& stmts) {
    varint(stmts.size());
    for (const auto& s : stmts) stmt(s);
  }

  // The writer takes any program (validation is separate), but a node with
  // the wrong number of operands has no encoding.
  static void need(bool ok, const char* what) {
    if (!ok) throw Error(ErrorKind::invalid_program, std::string("cannot encode a malformed program: ") + what);
  }

  static bool stmt_exprs_fit(const Stmt& s) {
    switch (s.op) {
      case StmtOp::Let: case StmtOp::Assign: case StmtOp::If: case StmtOp::While: case StmtOp::Eval: return s.exprs.size() == 1;
      case StmtOp::Store: return s.exprs.size() == 2;
      case StmtOp::Loop: return s.exprs.size() == 2 || s.exprs.size() == 3;
      default: return s.exprs.empty();
    }
  }

  static size_t expr_args(const Expr& e) {
    const OpInfo& info = op_info(e.op);
    switch (info.cls) {
      case OpClass::Load: case OpClass::Conversion: return 1;
      case OpClass::Binary: case OpClass::Unary: case OpClass::Ternary: return info.arity;
      case OpClass::Atomic: return e.args.size();  // counted in the encoding
      default: return 0;
    }
  }

  struct Nest {
    explicit Nest(size_t& d) : depth(++d) { need(depth <= kMaxNesting, "nested deeper than the format allows"); }
    ~Nest() { --depth; }
    size_t& depth;
  };
  size_t depth_ = 0;

  void stmt(const Stmt& s) {
    Nest nest(depth_);
    need(stmt_exprs_fit(s), "a statement has the wrong number of expressions");
    const bool stepped = s.op == StmtOp::Loop && s.exprs.size() == 3;
    u8(stepped ? wire::kSteppedLoopTag : static_cast<uint8_t>(s.op));
    switch (s.op) {
      case StmtOp::Let:
      case StmtOp::Assign:
        str(s.name);
        expr(s.exprs.at(0));
        break;
      case StmtOp::Store:
        str(s.name);
        expr(s.exprs.at(0));
        expr(s.exprs.at(1));
        break;
      case StmtOp::If:
        expr(s.exprs.at(0));
        block(s.body);
        block(s.else_body);
        break;
      case StmtOp::Loop:
        str(s.name);
        expr(s.exprs.at(0));
        expr(s.exprs.at(1));
        if (stepped) expr(s.exprs[2]);
        block(s.body);
        break;
      case StmtOp::While:
        expr(s.exprs.at(0));
        block(s.body);
        break;
      case StmtOp::Barrier:
        u8(static_cast<uint8_t>(s.barrier));
        break;
      case StmtOp::Array:
        str(s.name);
        u8(static_cast<uint8_t>(s.element_type));
        varint(s.count);
        break;
      case StmtOp::Eval:
        expr(s.exprs.at(0));
        break;
      case StmtOp::Break:
      case StmtOp::Continue:
      case StmtOp::Return:
        break;
    }
  }

  void expr(const Expr& e) {
    Nest nest(depth_);
    need(e.args.size() == expr_args(e), "an operator has the wrong number of operands");
    u8(static_cast<uint8_t>(e.op));
    switch (op_info(e.op).cls) {
      case OpClass::Literal:
        if (e.op == Op::LitBool) {
          u8(e.imm ? 1 : 0);
        } else if (e.op == Op::LitF64) {
          const uint64_t bits = wire::canonical_f64_bits(e.imm);
          fixed32(static_cast<uint32_t>(bits));
          fixed32(static_cast<uint32_t>(bits >> 32));
        } else {
          const auto bits = static_cast<uint32_t>(e.imm);
          fixed32(e.op == Op::LitF32   ? wire::canonical_f32_bits(bits)
                  : e.op == Op::LitF16 ? wire::canonical_f16_bits(bits)
                                       : bits);
        }
        return;
      case OpClass::Var:
      case OpClass::Len:
        str(e.name);
        return;
      case OpClass::Load:
        str(e.name);
        expr(e.args.at(0));
        return;
      case OpClass::Builtin:
        u8(static_cast<uint8_t>(e.imm));
        return;
      case OpClass::Conversion:
        u8(static_cast<uint8_t>(e.imm));
        expr(e.args.at(0));
        return;
      case OpClass::Atomic:
        u8(static_cast<uint8_t>(e.imm));
        str(e.name);
        varint(e.args.size());
        for (const auto& a : e.args) expr(a);
        return;
      case OpClass::Binary:
      case OpClass::Unary:
      case OpClass::Ternary:
        for (const auto& a : e.args) expr(a);
        return;
    }
  }
};

}  // namespace

std::vector<uint8_t> to_wire(const Program& program) {
  Writer w;
  w.program(program);
  return std::move(w.out);
}

}  // namespace vyre
