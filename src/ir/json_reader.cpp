// JSON document -> Program. Every problem is collected with its JSON path;
// a node that cannot be read becomes a placeholder so that reading goes on
// and reports the rest.
#include <bit>
#include <charconv>

#include "ir/json_document.hpp"
#include "ir/loop_step.hpp"
#include "util/bounded_read.hpp"
#include "util/f16_text.hpp"
#include "util/f64_text.hpp"
#include "util/f32_text.hpp"
#include "vyre/error.hpp"
#include "vyre/json.hpp"
#include "vyre/checked.hpp"

namespace vyre {
namespace {

using json_detail::Value;
using Kind = Value::Kind;

constexpr std::string_view kStatementKeys[] = {"let",   "assign",   "store",   "if",   "loop",  "while",
                                               "break", "continue", "barrier", "eval", "return", "array"};

std::string join_keys(std::initializer_list<std::string_view> keys) {
  std::string out;
  for (auto k : keys) out += (out.empty() ? "" : ", ") + std::string(k);
  return out;
}

class JsonReader {
 public:
  std::vector<Diagnostic> diagnostics;

  Program program(const Value& doc) {
    Program p;
    if (!expect(doc, Kind::Object, "", "a program object")) return p;
    allow_keys(doc, "", {"vyre", "name", "workgroup_size", "domain", "buffers", "body"});
    uint64_t& version = version_;
    version = 1;
    if (const Value* v = required(doc, "", "vyre", "the format version, 1 to " + std::to_string(kFormatVersion))) {
      auto given = integer(*v, "vyre", 0, UINT32_MAX);
      if (given && (*given < 1 || *given > kFormatVersion))
        error("vyre", "format version " + std::to_string(*given) + " is not supported (this build reads versions 1 to " +
                          std::to_string(kFormatVersion) + ")");
      else if (given)
        version = *given;
    }
    if (const Value* v = doc.find("domain")) domain(*v, version, p);
    if (const Value* v = doc.find("name")) {
      if (expect(*v, Kind::String, "name", "a string")) p.name = v->text;
    }
    if (const Value* v = required(doc, "", "workgroup_size", "three positive integers")) {
      if (expect(*v, Kind::Array, "workgroup_size", "an array of three positive integers")) {
        if (v->items.size() != 3) {
          error("workgroup_size", "must hold exactly three integers, has " + std::to_string(v->items.size()));
        } else {
          for (size_t i = 0; i < 3; ++i) {
            auto d = integer(v->items[i], "workgroup_size[" + std::to_string(i) + "]", 0, UINT32_MAX);
            if (d) p.workgroup_size[i] = static_cast<uint32_t>(*d);
          }
        }
      }
    }
    if (const Value* v = required(doc, "", "buffers", "an array of buffer declarations")) {
      if (expect(*v, Kind::Array, "buffers", "an array")) {
        for (size_t i = 0; i < v->items.size(); ++i)
          p.buffers.push_back(buffer(v->items[i], "buffers[" + std::to_string(i) + "]", version));
      }
    }
    if (const Value* v = required(doc, "", "body", "an array of statements")) p.body = block(*v, "body");
    return p;
  }

 private:
  uint64_t version_ = 1;  // the format version the document declares

  void error(std::string path, std::string message) { diagnostics.push_back({std::move(path), std::move(message)}); }

  static std::string join(const std::string& at, std::string_view key) {
    return at.empty() ? std::string(key) : at + "." + std::string(key);
  }

  bool expect(const Value& v, Kind kind, const std::string& at, std::string_view what) {
    if (v.kind == kind) return true;
    error(at, "expected " + std::string(what) + ", got " + std::string(json_detail::kind_name(v.kind)));
    return false;
  }

  void allow_keys(const Value& obj, const std::string& at, std::initializer_list<std::string_view> allowed) {
    for (const auto& [k, v] : obj.members) {
      bool ok = false;
      for (auto a : allowed) ok = ok || a == k;
      if (!ok) error(join(at, k), "unknown key '" + k + "' (allowed here: " + join_keys(allowed) + ")");
    }
  }

  const Value* required(const Value& obj, const std::string& at, std::string_view key, std::string_view what) {
    const Value* v = obj.find(key);
    if (!v) error(at, "missing key '" + std::string(key) + "' (" + std::string(what) + ")");
    return v;
  }

  std::optional<int64_t> integer(const Value& v, const std::string& at, int64_t lo, int64_t hi) {
    if (v.kind != Kind::Number) {
      error(at, "expected an integer, got " + std::string(json_detail::kind_name(v.kind)));
      return std::nullopt;
    }
    if (v.text.find_first_of(".eE") != std::string::npos) {
      error(at, "expected an integer, got " + v.text);
      return std::nullopt;
    }
    int64_t n = 0;
    auto res = std::from_chars(v.text.data(), v.text.data() + v.text.size(), n);
    if (res.ec != std::errc() || n < lo || n > hi) {
      error(at, v.text + " is out of range (" + std::to_string(lo) + " to " + std::to_string(hi) + ")");
      return std::nullopt;
    }
    return n;
  }

  // "domain": "out" (version 2, flat along x) or {"buffer": "out", "shape":
  // [H, W]} (version 3, the domain in the buffer's row-major shape).
  void domain(const Value& v, uint64_t version, Program& p) {
    if (version < 2) {
      error("domain", "a declared launch domain needs format version 2 (\"vyre\": 2)");
      return;
    }
    if (v.kind == Kind::String) {
      if (v.text.empty()) error("domain", "must name a buffer");
      p.domain = v.text;
      return;
    }
    if (!expect(v, Kind::Object, "domain", "a buffer name, or {\"buffer\": name, \"shape\": [H, W]}")) return;
    if (version < 3) {
      error("domain", "a domain in a shape needs format version 3 (\"vyre\": 3)");
      return;
    }
    allow_keys(v, "domain", {"buffer", "shape"});
    if (const Value* b = required(v, "domain", "buffer", "a buffer name")) {
      if (auto s = string(*b, "domain.buffer")) {
        if (s->empty()) error("domain.buffer", "must name a buffer");
        p.domain = *s;
      }
    }
    if (const Value* s = required(v, "domain", "shape", "two or three positive extents, row-major")) {
      if (!expect(*s, Kind::Array, "domain.shape", "an array of two or three positive integers")) return;
      if (s->items.size() < 2 || s->items.size() > 3) {
        error("domain.shape", "must hold two or three extents (a flat domain is written \"domain\": \"" + p.domain +
                                  "\"), has " + std::to_string(s->items.size()));
        return;
      }
      for (size_t i = 0; i < s->items.size(); ++i)
        if (auto d = integer(s->items[i], "domain.shape[" + std::to_string(i) + "]", 1, UINT32_MAX))
          p.domain_shape.push_back(static_cast<uint32_t>(*d));
    }
  }

  std::optional<std::string> string(const Value& v, const std::string& at, std::string_view what = "a string") {
    if (!expect(v, Kind::String, at, what)) return std::nullopt;
    return v.text;
  }

  static constexpr const char* kBufferTypes = "u32, i32, f32, f16, f64, u8, i8, u16, i16 or bool";

  Buffer buffer(const Value& v, const std::string& at, uint64_t version) {
    Buffer b;
    if (!expect(v, Kind::Object, at, "a buffer declaration object")) return b;
    allow_keys(v, at, {"name", "binding", "access", "type", "count", "output"});
    if (const Value* n = required(v, at, "name", "an identifier")) {
      if (auto s = string(*n, at + ".name")) b.name = *s;
    }
    if (const Value* a = required(v, at, "access", "read, read_write, uniform or workgroup")) {
      if (auto s = string(*a, at + ".access")) {
        if (auto access = access_from_string(*s))
          b.access = *access;
        else
          error(at + ".access", "unknown access '" + *s + "' (read, read_write, uniform or workgroup)");
      }
    }
    if (const Value* t = required(v, at, "type", kBufferTypes)) {
      if (auto s = string(*t, at + ".type")) {
        auto type = scalar_type_from_string(*s);
        if (!type)
          error(at + ".type", "unknown type '" + *s + "' (" + kBufferTypes + ")");
        else if ((is_narrow(*type) || *type == ScalarType::Bool || *type == ScalarType::F16 || *type == ScalarType::F64) &&
                 version < 4)
          error(at + ".type", std::string(to_string(*type)) + " buffers need format version 4 (\"vyre\": 4)");
        else
          b.type = *type;
      }
    }
    if (const Value* n = v.find("binding")) {
      if (auto d = integer(*n, at + ".binding", 0, UINT32_MAX)) b.binding = static_cast<uint32_t>(*d);
    }
    if (const Value* n = v.find("count")) {
      if (auto d = integer(*n, at + ".count", 0, UINT32_MAX)) b.count = static_cast<uint32_t>(*d);
    }
    if (const Value* o = v.find("output")) {
      if (expect(*o, Kind::Bool, at + ".output", "true or false")) b.output = o->boolean;
    }
    return b;
  }

  std::vector<Stmt> block(const Value& v, const std::string& at) {
    std::vector<Stmt> out;
    if (!expect(v, Kind::Array, at, "an array of statements")) return out;
    for (size_t i = 0; i < v.items.size(); ++i) out.push_back(stmt(v.items[i], at + "[" + std::to_string(i) + "]"));
    return out;
  }

  std::string name_field(const Value& obj, const std::string& at, std::string_view key) {
    const Value* v = obj.find(key);
    if (!v) return {};
    auto s = string(*v, join(at, key), "a name (a string)");
    return s.value_or("");
  }

  Expr expr_field(const Value& obj, const std::string& at, std::string_view key) {
    const Value* v = required(obj, at, key, "an expression");
    return v ? expr(*v, join(at, key)) : Expr{};
  }

  void true_flag(const Value& obj, const std::string& at, std::string_view key) {
    const Value* v = obj.find(key);
    if (v && !(v->kind == Kind::Bool && v->boolean)) error(join(at, key), "must be true");
  }

  Stmt stmt(const Value& v, const std::string& at) {
    Stmt s;
    if (!expect(v, Kind::Object, at, "a statement object")) return s;
    std::vector<std::string_view> found;
    for (auto key : kStatementKeys)
      if (v.find(key)) found.push_back(key);
    if (found.size() != 1) {
      if (found.empty())
        error(at, "not a statement: expected one of let, assign, store, if, loop, while, break, continue, barrier, "
                  "eval, return, array");
      else
        error(at, "a statement has one kind; found '" + std::string(found[0]) + "' and '" + std::string(found[1]) + "'");
      return s;
    }
    const std::string_view kind = found[0];
    if (kind == "let" || kind == "assign") {
      s.op = kind == "let" ? StmtOp::Let : StmtOp::Assign;
      allow_keys(v, at, {kind, "value"});
      s.name = name_field(v, at, kind);
      s.exprs.push_back(expr_field(v, at, "value"));
    } else if (kind == "store") {
      s.op = StmtOp::Store;
      allow_keys(v, at, {"store", "index", "value"});
      s.name = name_field(v, at, "store");
      s.exprs.push_back(expr_field(v, at, "index"));
      s.exprs.push_back(expr_field(v, at, "value"));
    } else if (kind == "if") {
      s.op = StmtOp::If;
      allow_keys(v, at, {"if", "then", "else"});
      s.exprs.push_back(expr_field(v, at, "if"));
      if (const Value* t = required(v, at, "then", "an array of statements")) s.body = block(*t, at + ".then");
      if (const Value* e = v.find("else")) s.else_body = block(*e, at + ".else");
    } else if (kind == "loop") {
      s.op = StmtOp::Loop;
      allow_keys(v, at, {"loop", "from", "to", "step", "body"});
      s.name = name_field(v, at, "loop");
      s.exprs.push_back(expr_field(v, at, "from"));
      s.exprs.push_back(expr_field(v, at, "to"));
      if (v.find("step")) {
        if (version_ < 4) error(at + ".step", "a loop step needs format version 4 (\"vyre\": 4)");
        Expr step = expr_field(v, at, "step");
        if (!is_unit_step(step)) s.exprs.push_back(std::move(step));
      }
      if (const Value* b = required(v, at, "body", "an array of statements")) s.body = block(*b, at + ".body");
    } else if (kind == "while") {
      s.op = StmtOp::While;
      allow_keys(v, at, {"while", "body"});
      s.exprs.push_back(expr_field(v, at, "while"));
      if (const Value* b = required(v, at, "body", "an array of statements")) s.body = block(*b, at + ".body");
    } else if (kind == "break" || kind == "continue" || kind == "return") {
      s.op = kind == "break" ? StmtOp::Break : kind == "continue" ? StmtOp::Continue : StmtOp::Return;
      allow_keys(v, at, {kind});
      true_flag(v, at, kind);
    } else if (kind == "array") {
      // {"array": "acc", "type": "f32", "count": 16}: a private array (version 4).
      s.op = StmtOp::Array;
      allow_keys(v, at, {"array", "type", "count"});
      s.name = name_field(v, at, "array");
      if (version_ < 4) error(at + ".array", "a private array needs format version 4 (\"vyre\": 4)");
      if (const Value* t = required(v, at, "type", "u32, i32, f32, f16 or f64")) {
        if (auto name = string(*t, at + ".type")) {
          auto type = scalar_type_from_string(*name);
          if (type) s.element_type = *type;  // validation says which types an array may hold
          else error(at + ".type", "unknown type '" + *name + "' (u32, i32, f32, f16 or f64)");
        }
      }
      if (const Value* n = required(v, at, "count", "a positive integer"))
        if (auto d = integer(*n, at + ".count", 0, UINT32_MAX)) s.count = static_cast<uint32_t>(*d);
    } else if (kind == "barrier") {
      s.op = StmtOp::Barrier;
      allow_keys(v, at, {"barrier"});
      if (auto b = string(*v.find("barrier"), at + ".barrier", "\"workgroup\" or \"storage\"")) {
        if (*b == "workgroup")
          s.barrier = BarrierKind::Workgroup;
        else if (*b == "storage")
          s.barrier = BarrierKind::Storage;
        else
          error(at + ".barrier", "unknown barrier '" + *b + "' (workgroup or storage)");
      }
    } else {
      s.op = StmtOp::Eval;
      allow_keys(v, at, {"eval"});
      s.exprs.push_back(expr_field(v, at, "eval"));
    }
    return s;
  }

  // ---- expressions ---------------------------------------------------------

  Expr expr(const Value& v, const std::string& at) {
    Expr e;
    if (v.kind != Kind::Object) {
      error(at, "expected an expression (an object such as {\"u32\": 7}), got " + std::string(json_detail::kind_name(v.kind)));
      return e;
    }
    std::vector<std::pair<Op, const Value*>> ops;
    for (const auto& [k, val] : v.members)
      if (auto op = op_from_json(k)) ops.emplace_back(*op, &val);
    if (ops.size() != 1) {
      if (ops.size() > 1) {
        error(at, "an expression has one operator; found '" + std::string(op_info(ops[0].first).json) + "' and '" +
                      std::string(op_info(ops[1].first).json) + "'");
      } else if (v.members.size() == 1) {
        error(join(at, v.members[0].first), "unknown operator '" + v.members[0].first + "'");
      } else {
        error(at, "expected an expression: an object with one operator key, such as {\"u32\": 7}");
      }
      return e;
    }
    e.op = ops[0].first;
    const Value& operand = *ops[0].second;
    const OpInfo& info = op_info(e.op);
    const std::string key = join(at, info.json);
    switch (info.cls) {
      case OpClass::Literal:
        allow_keys(v, at, {info.json});
        literal(e, operand, key);
        break;
      case OpClass::Var:
      case OpClass::Len:
        allow_keys(v, at, {info.json});
        e.name = string(operand, key, "a name (a string)").value_or("");
        break;
      case OpClass::Load:
        allow_keys(v, at, {"load", "index"});
        e.name = string(operand, key, "a buffer name (a string)").value_or("");
        e.args.push_back(expr_field(v, at, "index"));
        break;
      case OpClass::Builtin:
        allow_keys(v, at, {info.json});
        if (auto axis = string(operand, key, "an axis: \"x\", \"y\" or \"z\"")) {
          if (*axis == "x" || *axis == "y" || *axis == "z")
            e.imm = static_cast<uint32_t>(*axis == "x" ? Axis::X : *axis == "y" ? Axis::Y : Axis::Z);
          else if (*axis == "flat" && e.op == Op::Lid)
            e.imm = static_cast<uint32_t>(Axis::Flat);
          else
            error(key, "unknown axis '" + *axis + "' (x, y or z" + (e.op == Op::Lid ? ", or flat)" : ")"));
        }
        break;
      case OpClass::Unary:
        allow_keys(v, at, {info.json});
        e.args.push_back(expr(operand, key));
        break;
      case OpClass::Binary:
      case OpClass::Ternary:
        allow_keys(v, at, {info.json});
        if (expect(operand, Kind::Array, key, "an array of " + std::to_string(info.arity) + " operands")) {
          if (operand.items.size() != info.arity) {
            error(key, std::string(info.json) + " takes " + std::to_string(info.arity) + " operands, got " +
                           std::to_string(operand.items.size()));
          } else {
            for (size_t i = 0; i < operand.items.size(); ++i)
              e.args.push_back(expr(operand.items[i], key + "[" + std::to_string(i) + "]"));
          }
        }
        break;
      case OpClass::Conversion:
        allow_keys(v, at, {info.json, "value"});
        if (auto t = string(operand, key, "a type name")) {
          auto type = scalar_type_from_string(*t);
          if (!type || (e.op == Op::Bitcast && *type == ScalarType::Bool))
            error(key, "unknown target type '" + *t + "' (" +
                           (e.op == Op::Bitcast ? "u32, i32 or f32)" : "u32, i32, f32, f16, f64 or bool)"));
          else if ((*type == ScalarType::F16 || *type == ScalarType::F64) && version_ < 4)
            error(key, std::string(to_string(*type)) + " needs format version 4 (\"vyre\": 4)");
          else
            e.imm = static_cast<uint32_t>(*type);
        }
        e.args.push_back(expr_field(v, at, "value"));
        break;
      case OpClass::Atomic:
        atomic(e, v, operand, at);
        break;
    }
    return e;
  }

  void literal(Expr& e, const Value& v, const std::string& at) {
    switch (e.op) {
      case Op::LitU32:
        if (auto n = integer(v, at, 0, UINT32_MAX)) e.imm = static_cast<uint32_t>(*n);
        return;
      case Op::LitI32:
        if (auto n = integer(v, at, INT32_MIN, INT32_MAX)) e.imm = static_cast<uint32_t>(static_cast<int32_t>(*n));
        return;
      case Op::LitBool:
        if (expect(v, Kind::Bool, at, "true or false")) e.imm = v.boolean ? 1 : 0;
        return;
      case Op::LitF16: f16_literal(e, v, at); return;
      case Op::LitF64: f64_literal(e, v, at); return;
      default: break;
    }
    // f32: a number, or one of the strings "inf", "-inf", "nan".
    float f = 0;
    if (v.kind == Kind::String) {
      if (v.text != "inf" && v.text != "-inf" && v.text != "nan") {
        error(at, "an f32 literal is a number or one of \"inf\", \"-inf\", \"nan\"; got \"" + v.text + "\"");
        return;
      }
    } else if (v.kind != Kind::Number) {
      error(at, "an f32 literal is a number or one of \"inf\", \"-inf\", \"nan\"; got " +
                    std::string(json_detail::kind_name(v.kind)));
      return;
    }
    switch (parse_f32(v.text, f)) {
      case F32ParseError::none: e.imm = std::bit_cast<uint32_t>(f); return;
      case F32ParseError::overflow:
        error(at, v.text + " is beyond the f32 range (write \"inf\" or \"-inf\" for infinities)");
        return;
      case F32ParseError::syntax: error(at, "cannot read " + v.text + " as an f32"); return;
    }
  }

  // {"f16": 1.5} (version 4): a number, or "inf", "-inf", "nan".
  void f16_literal(Expr& e, const Value& v, const std::string& at) {
    if (version_ < 4) error(at, "f16 literals need format version 4 (\"vyre\": 4)");
    const bool word = v.kind == Kind::String && (v.text == "inf" || v.text == "-inf" || v.text == "nan");
    if (v.kind != Kind::Number && !word) {
      error(at, "an f16 literal is a number or one of \"inf\", \"-inf\", \"nan\"");
      return;
    }
    half h;
    switch (parse_f16(v.text, h)) {
      case F32ParseError::none: e.imm = h.bits; return;
      case F32ParseError::overflow:
        error(at, v.text + " is beyond the f16 range, 65504 (write \"inf\" or \"-inf\" for infinities)");
        return;
      case F32ParseError::syntax: error(at, "cannot read " + v.text + " as an f16"); return;
    }
  }

  // {"f64": 0.1} (version 4): a number, or "inf", "-inf", "nan". A JSON
  // number is read as the f64 nearest to its decimal, so 0.1 is the double
  // 0.1, as in Python and C.
  void f64_literal(Expr& e, const Value& v, const std::string& at) {
    if (version_ < 4) error(at, "f64 literals need format version 4 (\"vyre\": 4)");
    const bool word = v.kind == Kind::String && (v.text == "inf" || v.text == "-inf" || v.text == "nan");
    if (v.kind != Kind::Number && !word) {
      error(at, "an f64 literal is a number or one of \"inf\", \"-inf\", \"nan\"");
      return;
    }
    double d = 0;
    switch (parse_f64(v.text, d)) {
      case F32ParseError::none: e.imm = std::bit_cast<uint64_t>(d); return;
      case F32ParseError::overflow:
        error(at, v.text + " is beyond the f64 range (write \"inf\" or \"-inf\" for infinities)");
        return;
      case F32ParseError::syntax: error(at, "cannot read " + v.text + " as an f64"); return;
    }
  }

  void atomic(Expr& e, const Value& v, const Value& operand, const std::string& at) {
    allow_keys(v, at, {"atomic", "buffer", "index", "value", "expected"});
    auto op_name = string(operand, at + ".atomic", "an atomic operation name");
    std::optional<AtomicOp> op;
    if (op_name) op = atomic_op_from_string(*op_name);
    if (op_name && !op)
      error(at + ".atomic", "unknown atomic operation '" + *op_name +
                                "' (add, sub, min, max, and, or, xor, exchange, compare_exchange, load)");
    if (const Value* b = required(v, at, "buffer", "a buffer name"))
      e.name = string(*b, at + ".buffer", "a buffer name (a string)").value_or("");
    e.args.push_back(expr_field(v, at, "index"));
    if (!op) return;
    e.imm = static_cast<uint32_t>(*op);
    if (*op == AtomicOp::CompareExchange) e.args.push_back(expr_field(v, at, "expected"));
    else if (v.find("expected")) error(at + ".expected", "only compare_exchange takes 'expected'");
    if (*op != AtomicOp::Load) e.args.push_back(expr_field(v, at, "value"));
    else if (v.find("value")) error(at + ".value", "an atomic load takes no 'value'");
  }
};

}  // namespace

Program program_from_json_unchecked(std::string_view text, const JsonLimits& limits) {
  const auto doc = json_detail::parse_document(text, limits);
  JsonReader reader;
  Program p = reader.program(doc);
  if (!reader.diagnostics.empty()) throw ProgramError(std::move(reader.diagnostics));
  return p;
}

CheckedProgram program_from_json(std::string_view text, const JsonLimits& limits) {
  return CheckedProgram(program_from_json_unchecked(text, limits));
}

CheckedProgram program_from_json_file(const std::filesystem::path& path, const JsonLimits& limits) {
  // Bounded as it reads: a FIFO or /dev/zero stops at the limit.
  const std::vector<uint8_t> text = read_file_bounded(
      path, ReadBound{limits.max_bytes, path.string(), "the limit of a program (vyre::JsonLimits::max_bytes)"});
  return program_from_json(as_text(text), limits);
}

}  // namespace vyre
