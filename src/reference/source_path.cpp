#include "reference/source_path.hpp"

#include <optional>

namespace vyre::reference {
namespace {

// Each field's key is the one the JSON writer writes (src/ir/json_writer.cpp).
class PathFinder {
 public:
  explicit PathFinder(const void* node) : node_(node) {}

  std::optional<std::string> block(const std::vector<Stmt>& stmts, const std::string& at) const {
    for (size_t i = 0; i < stmts.size(); ++i)
      if (auto found = stmt(stmts[i], at + "[" + std::to_string(i) + "]")) return found;
    return std::nullopt;
  }

 private:
  std::optional<std::string> stmt(const Stmt& s, const std::string& at) const {
    if (&s == node_) return at;
    auto in = [&](size_t i, const char* key) { return expr(s.exprs.at(i), at + "." + key); };
    std::optional<std::string> found;
    switch (s.op) {
      case StmtOp::Let:
      case StmtOp::Assign: return in(0, "value");
      case StmtOp::Store: return (found = in(0, "index")) ? found : in(1, "value");
      case StmtOp::If:
        if ((found = in(0, "if")) || (found = block(s.body, at + ".then"))) return found;
        return block(s.else_body, at + ".else");
      case StmtOp::Loop:
        if ((found = in(0, "from")) || (found = in(1, "to"))) return found;
        return block(s.body, at + ".body");
      case StmtOp::While: return (found = in(0, "while")) ? found : block(s.body, at + ".body");
      case StmtOp::Eval: return in(0, "eval");
      default: return std::nullopt;
    }
  }

  std::optional<std::string> expr(const Expr& e, const std::string& at) const {
    if (&e == node_) return at;
    const OpInfo& info = op_info(e.op);
    const std::string key(info.json);
    std::optional<std::string> found;
    switch (info.cls) {
      case OpClass::Load: return expr(e.args.at(0), at + ".index");
      case OpClass::Unary: return expr(e.args.at(0), at + "." + key);
      case OpClass::Conversion: return expr(e.args.at(0), at + ".value");
      case OpClass::Binary:
      case OpClass::Ternary:
        for (size_t i = 0; i < e.args.size(); ++i)
          if ((found = expr(e.args[i], at + "." + key + "[" + std::to_string(i) + "]"))) return found;
        return std::nullopt;
      case OpClass::Atomic: {
        const auto op = static_cast<AtomicOp>(e.imm);
        if ((found = expr(e.args.at(0), at + ".index"))) return found;
        if (op == AtomicOp::CompareExchange && (found = expr(e.args.at(1), at + ".expected"))) return found;
        if (op != AtomicOp::Load) return expr(e.args.back(), at + ".value");
        return std::nullopt;
      }
      default: return std::nullopt;
    }
  }

  const void* node_;
};

}  // namespace

std::string source_path(const Program& program, const void* node) {
  return PathFinder(node).block(program.body, "body").value_or("");
}

}  // namespace vyre::reference
