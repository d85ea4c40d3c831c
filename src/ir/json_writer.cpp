// Program -> JSON text, laid out for people: one statement per line,
// expressions inline, nested blocks indented. f32 literals are written as
// the shortest decimal that reads back to the same bits.
#include <bit>
#include <cmath>
#include <nlohmann/json.hpp>

#include "util/f16_text.hpp"
#include "util/f64_text.hpp"
#include "util/f32_text.hpp"
#include "vyre/json.hpp"

namespace vyre {
namespace {

std::string quoted(const std::string& s) { return nlohmann::json(s).dump(); }

class JsonWriter {
 public:
  explicit JsonWriter(int indent) : indent_(indent) {}

  std::string program(const Program& p) {
    out_ += "{";
    open_line(1);
    out_ += "\"vyre\": " + std::to_string(format_version(p)) + ",";
    if (!p.name.empty()) {
      open_line(1);
      out_ += "\"name\": " + quoted(p.name) + ",";
    }
    open_line(1);
    out_ += "\"workgroup_size\": [" + std::to_string(p.workgroup_size[0]) + ", " + std::to_string(p.workgroup_size[1]) +
            ", " + std::to_string(p.workgroup_size[2]) + "],";
    if (!p.domain.empty()) {
      open_line(1);
      out_ += "\"domain\": ";
      if (p.domain_shape.empty()) {
        out_ += quoted(p.domain) + ",";
      } else {
        out_ += "{\"buffer\": " + quoted(p.domain) + ", \"shape\": [";
        for (size_t i = 0; i < p.domain_shape.size(); ++i)
          out_ += (i ? ", " : "") + std::to_string(p.domain_shape[i]);
        out_ += "]},";
      }
    }
    open_line(1);
    out_ += "\"buffers\": [";
    for (size_t i = 0; i < p.buffers.size(); ++i) {
      open_line(2);
      buffer(p.buffers[i]);
      if (i + 1 < p.buffers.size()) out_ += ",";
    }
    if (!p.buffers.empty()) open_line(1);
    out_ += "],";
    open_line(1);
    out_ += "\"body\": ";
    block(p.body, 1);
    open_line(0);
    out_ += "}";
    if (indent_ >= 0) out_ += "\n";
    return std::move(out_);
  }

 private:
  void open_line(int level) {
    if (indent_ < 0) {
      if (!out_.empty() && out_.back() != '[' && out_.back() != '{') out_ += ' ';
      return;
    }
    out_ += "\n";
    out_.append(static_cast<size_t>(level) * static_cast<size_t>(indent_), ' ');
  }

  void buffer(const Buffer& b) {
    out_ += "{\"name\": " + quoted(b.name);
    if (b.binding) out_ += ", \"binding\": " + std::to_string(*b.binding);
    out_ += ", \"access\": \"" + std::string(to_string(b.access)) + "\", \"type\": \"" + std::string(to_string(b.type)) + "\"";
    if (b.count != 0) out_ += ", \"count\": " + std::to_string(b.count);
    if (b.output) out_ += ", \"output\": true";
    out_ += "}";
  }

  void block(const std::vector<Stmt>& stmts, int level) {
    out_ += "[";
    for (size_t i = 0; i < stmts.size(); ++i) {
      open_line(level + 1);
      stmt(stmts[i], level + 1);
      if (i + 1 < stmts.size()) out_ += ",";
    }
    if (!stmts.empty()) open_line(level);
    out_ += "]";
  }

  void stmt(const Stmt& s, int level) {
    const std::string name = quoted(s.name);
    switch (s.op) {
      case StmtOp::Let:
      case StmtOp::Assign:
        out_ += "{\"" + std::string(to_string(s.op)) + "\": " + name + ", \"value\": " + expr(s.exprs.at(0)) + "}";
        return;
      case StmtOp::Store:
        out_ += "{\"store\": " + name + ", \"index\": " + expr(s.exprs.at(0)) + ", \"value\": " + expr(s.exprs.at(1)) + "}";
        return;
      case StmtOp::If:
        out_ += "{\"if\": " + expr(s.exprs.at(0)) + ", \"then\": ";
        block(s.body, level);
        if (!s.else_body.empty()) {
          out_ += ", \"else\": ";
          block(s.else_body, level);
        }
        out_ += "}";
        return;
      case StmtOp::Loop:
        out_ += "{\"loop\": " + name + ", \"from\": " + expr(s.exprs.at(0)) + ", \"to\": " + expr(s.exprs.at(1)) +
                (s.exprs.size() == 3 ? ", \"step\": " + expr(s.exprs[2]) : std::string()) + ", \"body\": ";
        block(s.body, level);
        out_ += "}";
        return;
      case StmtOp::While:
        out_ += "{\"while\": " + expr(s.exprs.at(0)) + ", \"body\": ";
        block(s.body, level);
        out_ += "}";
        return;
      case StmtOp::Array:
        out_ += "{\"array\": " + name + ", \"type\": \"" + std::string(to_string(s.element_type)) +
                "\", \"count\": " + std::to_string(s.count) + "}";
        return;
      case StmtOp::Barrier:
        out_ += std::string("{\"barrier\": \"") + (s.barrier == BarrierKind::Workgroup ? "workgroup" : "storage") + "\"}";
        return;
      case StmtOp::Eval:
        out_ += "{\"eval\": " + expr(s.exprs.at(0)) + "}";
        return;
      case StmtOp::Break:
      case StmtOp::Continue:
      case StmtOp::Return:
        out_ += "{\"" + std::string(to_string(s.op)) + "\": true}";
        return;
    }
  }

  static std::string list(const std::vector<Expr>& args) {
    std::string out = "[";
    for (size_t i = 0; i < args.size(); ++i) out += (i ? ", " : "") + expr(args[i]);
    return out + "]";
  }

  static std::string expr(const Expr& e) {
    const OpInfo& info = op_info(e.op);
    const std::string key = "{\"" + std::string(info.json) + "\": ";
    switch (info.cls) {
      case OpClass::Literal:
        switch (e.op) {
          case Op::LitU32: return key + std::to_string(e.imm) + "}";
          case Op::LitI32: return key + std::to_string(static_cast<int32_t>(e.imm)) + "}";
          case Op::LitBool: return key + (e.imm ? "true" : "false") + "}";
          case Op::LitF16: {
            const half h{static_cast<uint16_t>(e.imm)};
            const std::string text = format_f16(h);
            return key + (std::isfinite(to_double(h)) ? text : "\"" + text + "\"") + "}";
          }
          case Op::LitF64: {
            const double d = std::bit_cast<double>(e.imm);
            const std::string text = format_f64(d);
            return key + (std::isfinite(d) ? text : "\"" + text + "\"") + "}";
          }
          default: {
            const float f = std::bit_cast<float>(static_cast<uint32_t>(e.imm));
            const std::string text = format_f32(f);
            return key + (f32_needs_word(f) ? "\"" + text + "\"" : text) + "}";
          }
        }
      case OpClass::Var:
      case OpClass::Len: return key + quoted(e.name) + "}";
      case OpClass::Load: return key + quoted(e.name) + ", \"index\": " + expr(e.args.at(0)) + "}";
      case OpClass::Builtin: return key + "\"" + std::string(to_string(static_cast<Axis>(e.imm))) + "\"}";
      case OpClass::Unary: return key + expr(e.args.at(0)) + "}";
      case OpClass::Binary:
      case OpClass::Ternary: return key + list(e.args) + "}";
      case OpClass::Conversion:
        return key + "\"" + std::string(to_string(static_cast<ScalarType>(e.imm))) + "\", \"value\": " + expr(e.args.at(0)) + "}";
      case OpClass::Atomic: {
        const auto op = static_cast<AtomicOp>(e.imm);
        std::string out = key + "\"" + std::string(to_string(op)) + "\", \"buffer\": " + quoted(e.name) +
                          ", \"index\": " + expr(e.args.at(0));
        if (op == AtomicOp::CompareExchange) out += ", \"expected\": " + expr(e.args.at(1));
        if (op != AtomicOp::Load) out += ", \"value\": " + expr(e.args.back());
        return out + "}";
      }
    }
    return "{}";
  }

  int indent_;
  std::string out_;
};

}  // namespace

std::string program_to_json(const Program& program, int indent) { return JsonWriter(indent).program(program); }

}  // namespace vyre
