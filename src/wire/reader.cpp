// Decoding with limits: every read is bounds-checked, every count is checked
// against the bytes left before anything is allocated for it, nesting and
// node counts are capped, and only the canonical encoding is accepted (so
// decode(encode(p)) == p and encode(decode(b)) == b for every accepted b).
#include <algorithm>
#include <string>

#include "ir/identifier.hpp"
#include "ir/limits.hpp"
#include "vyre/error.hpp"
#include "vyre/wire.hpp"
#include "wire/encoding.hpp"

namespace vyre {
namespace {

class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, const WireLimits& limits) : in_(bytes), limits_(limits) {}

  Program program() {
    if (in_.size() > limits_.max_bytes)
      fail("input is " + std::to_string(in_.size()) + " bytes; the limit is " + std::to_string(limits_.max_bytes));
    for (uint8_t m : wire::kMagic)
      if (u8("magic") != m) fail_at(0, "not vyre wire bytes (bad magic)");
    const size_t version_at = pos_;
    const uint32_t version = u32("version");
    if (version < 1 || version > kWireVersion)
      fail_at(version_at, "wire version " + std::to_string(version) + " is not supported (this build reads versions 1 to " +
                              std::to_string(kWireVersion) + ")");
    Program p;
    for (auto& d : p.workgroup_size) d = u32("workgroup size");
    const uint64_t buffers = count("buffer count", 4);
    if (buffers > limits_.max_buffers)
      fail(std::to_string(buffers) + " buffers; the limit is " + std::to_string(limits_.max_buffers));
    for (uint64_t i = 0; i < buffers; ++i) p.buffers.push_back(buffer());
    check_canonical_buffer_order(p);
    if (version >= 4) {
      // Version 4 adds element types only, so there the domain is optional
      // (an empty name) and so is its shape (no extents): format_version,
      // checked below, keeps each program to one encoding.
      p.domain = identifier("domain", true);
      const uint64_t rank = count("domain rank", 1);
      if (rank != 0 && (rank < 2 || rank > 3 || p.domain.empty()))
        fail("a domain's shape has 2 or 3 extents and names its buffer, not " + std::to_string(rank) + " extents");
      for (uint64_t a = 0; a < rank; ++a) p.domain_shape.push_back(u32("domain extent"));
    } else if (version >= 2) {
      // Version 2's one addition, never empty (an identifier): so a program
      // version 1 holds has no version-2 encoding, and each program one.
      p.domain = identifier("domain");
      // Version 3's addition: the domain's shape, two or three extents, so a
      // program version 2 holds has no version-3 encoding.
      if (version == 3) {
        const uint64_t rank = count("domain rank", 1);
        if (rank < 2 || rank > 3) fail("a version-3 domain has 2 or 3 extents, not " + std::to_string(rank));
        for (uint64_t a = 0; a < rank; ++a) p.domain_shape.push_back(u32("domain extent"));
      }
    }
    p.body = block();
    if (pos_ != in_.size()) fail(std::to_string(in_.size() - pos_) + " trailing byte(s) after the program");
    // Each program has one encoding, in the oldest version that holds it
    // (the type tags above take version 4's types in any version).
    if (format_version(p) != version)
      fail_at(version_at, "a program of format version " + std::to_string(format_version(p)) +
                              " written as version " + std::to_string(version));
    return p;
  }

 private:
  [[noreturn]] void fail_at(size_t offset, const std::string& what) {
    throw Error(ErrorKind::invalid_wire, "invalid wire bytes at offset " + std::to_string(offset) + ": " + what);
  }
  [[noreturn]] void fail(const std::string& what) { fail_at(pos_, what); }

  uint8_t u8(const char* what) {
    if (pos_ >= in_.size()) fail(std::string("truncated: expected ") + what);
    return in_[pos_++];
  }

  uint64_t varint(const char* what) {
    const size_t start = pos_;
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const uint8_t b = u8(what);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        if (b == 0 && shift > 0) fail_at(start, std::string("non-minimal integer encoding for ") + what);
        return v;
      }
      if (shift == 63) break;
    }
    fail_at(start, std::string("integer too long for ") + what);
  }

  uint32_t u32(const char* what) {
    const size_t start = pos_;
    const uint64_t v = varint(what);
    if (v > UINT32_MAX) fail_at(start, std::string(what) + " does not fit 32 bits");
    return static_cast<uint32_t>(v);
  }

  // A count of items each at least `min_item_bytes` long: never more than the bytes left can hold.
  uint64_t count(const char* what, size_t min_item_bytes) {
    const size_t start = pos_;
    const uint64_t n = varint(what);
    if (n > (in_.size() - pos_) / min_item_bytes) fail_at(start, std::string(what) + " exceeds the bytes left");
    return n;
  }

  uint32_t fixed32(const char* what) {
    if (in_.size() - pos_ < 4) fail(std::string("truncated: expected ") + what);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(in_[pos_ + i]) << (8 * i);
    pos_ += 4;
    return v;
  }

  uint64_t fixed64(const char* what) {
    const uint64_t low = fixed32(what);
    return low | uint64_t{fixed32(what)} << 32;
  }

  std::string identifier(const char* what, bool may_be_empty = false) {
    const size_t start = pos_;
    const uint64_t n = count(what, 1);
    if (n > limits_.max_string) fail_at(start, std::string(what) + " longer than " + std::to_string(limits_.max_string));
    std::string s(reinterpret_cast<const char*>(in_.data() + pos_), n);
    pos_ += n;
    if (!(may_be_empty && s.empty()) && !is_identifier(s)) fail_at(start, std::string(what) + " is not an identifier");
    return s;
  }

  template <class Enum>
  Enum tag(const char* what, Enum last) {
    const size_t start = pos_;
    const uint8_t v = u8(what);
    if (v > static_cast<uint8_t>(last)) fail_at(start, "unknown " + std::string(what) + " " + std::to_string(v));
    return static_cast<Enum>(v);
  }

  bool flag(const char* what) {
    const size_t start = pos_;
    const uint8_t v = u8(what);
    if (v > 1) fail_at(start, std::string(what) + " must be 0 or 1");
    return v == 1;
  }

  void node() {
    if (++nodes_ > limits_.max_nodes) fail("more than " + std::to_string(limits_.max_nodes) + " nodes");
  }

  struct Nest {
    // Never deeper than the format allows (kMaxNesting), whatever the
    // caller's limit: the writer refuses such a program, so accepting it
    // would give a program without wire bytes or digest (found by
    // wire_decoder_fuzz with the default max_depth of 256).
    Nest(Reader& r) : reader(r) {
      const size_t limit = std::min(reader.limits_.max_depth, kMaxNesting);
      if (++reader.depth_ > limit) reader.fail("nested deeper than " + std::to_string(limit));
    }
    ~Nest() { --reader.depth_; }
    Reader& reader;
  };

  Buffer buffer() {
    Buffer b;
    b.name = identifier("buffer name");
    b.access = tag("access", Access::Workgroup);
    b.type = tag("type", ScalarType::F64);
    if (b.access != Access::Workgroup) b.binding = u32("binding");
    b.count = u32("count");
    b.output = flag("output flag");
    return b;
  }

  void check_canonical_buffer_order(const Program& p) {
    const auto order = canonical_buffer_order(p);
    for (size_t i = 0; i < order.size(); ++i) {
      if (order[i] != &p.buffers[i]) fail("buffers are not in canonical order");
      if (i > 0 && order[i - 1]->access != Access::Workgroup && order[i]->access != Access::Workgroup &&
          order[i - 1]->binding == order[i]->binding)
        fail("two buffers share binding " + std::to_string(order[i]->binding.value_or(0)));
      if (i > 0 && order[i - 1]->access == Access::Workgroup && order[i]->access == Access::Workgroup &&
          order[i - 1]->name == order[i]->name)
        fail("two workgroup buffers share the name '" + order[i]->name + "'");
    }
  }

  std::vector<Stmt> block() {
    const uint64_t n = count("statement count", 1);
    std::vector<Stmt> out;
    out.reserve(n);
    for (uint64_t i = 0; i < n; ++i) out.push_back(stmt());
    return out;
  }

  Stmt stmt() {
    Nest nest(*this);
    node();
    Stmt s;
    const bool stepped = pos_ < in_.size() && in_[pos_] == wire::kSteppedLoopTag;
    if (stepped) ++pos_;
    s.op = stepped ? StmtOp::Loop : tag("statement", StmtOp::Array);
    switch (s.op) {
      case StmtOp::Let:
      case StmtOp::Assign:
        s.name = identifier("local name");
        s.exprs.push_back(expr());
        break;
      case StmtOp::Store:
        s.name = identifier("buffer name");
        s.exprs.push_back(expr());
        s.exprs.push_back(expr());
        break;
      case StmtOp::If:
        s.exprs.push_back(expr());
        s.body = block();
        s.else_body = block();
        break;
      case StmtOp::Loop:
        s.name = identifier("loop variable");
        s.exprs.push_back(expr());
        s.exprs.push_back(expr());
        if (stepped) s.exprs.push_back(expr());
        s.body = block();
        break;
      case StmtOp::While:
        s.exprs.push_back(expr());
        s.body = block();
        break;
      case StmtOp::Barrier:
        s.barrier = tag("barrier kind", BarrierKind::Storage);
        break;
      case StmtOp::Array:
        s.name = identifier("array name");
        s.element_type = tag("array element type", ScalarType::F64);
        s.count = u32("array count");
        break;
      case StmtOp::Eval:
        s.exprs.push_back(expr());
        break;
      case StmtOp::Break:
      case StmtOp::Continue:
      case StmtOp::Return:
        break;
    }
    return s;
  }

  Expr expr() {
    Nest nest(*this);
    node();
    Expr e;
    e.op = tag("operator", Op::LitF64);
    const OpInfo& info = op_info(e.op);
    switch (info.cls) {
      case OpClass::Literal:
        if (e.op == Op::LitBool) {
          e.imm = flag("bool literal") ? 1 : 0;
        } else if (e.op == Op::LitF64) {
          const size_t start = pos_;
          e.imm = fixed64("f64 literal");
          if (wire::canonical_f64_bits(e.imm) != e.imm) fail_at(start, "non-canonical NaN");
        } else {
          const size_t start = pos_;
          e.imm = fixed32("literal");
          if (e.op == Op::LitF32 && wire::canonical_f32_bits(e.imm) != e.imm) fail_at(start, "non-canonical NaN");
          if (e.op == Op::LitF16 && (e.imm > 0xffffu || wire::canonical_f16_bits(e.imm) != e.imm))
            fail_at(start, "an f16 literal is 16 bits, NaN canonical");
        }
        break;
      case OpClass::Var:
      case OpClass::Len:
        e.name = identifier(info.cls == OpClass::Var ? "local name" : "buffer name");
        break;
      case OpClass::Load:
        e.name = identifier("buffer name");
        e.args.push_back(expr());
        break;
      case OpClass::Builtin:
        e.imm = static_cast<uint32_t>(tag("axis", Axis::Flat));
        break;
      case OpClass::Conversion: {
        const size_t start = pos_;
        const ScalarType to = tag("type", ScalarType::F64);
        if (is_narrow(to)) fail_at(start, "a conversion to the storage type " + std::string(to_string(to)));
        e.imm = static_cast<uint32_t>(to);
        e.args.push_back(expr());
        break;
      }
      case OpClass::Atomic: {
        const auto op = tag("atomic operation", AtomicOp::Load);
        e.imm = static_cast<uint32_t>(op);
        e.name = identifier("buffer name");
        const size_t start = pos_;
        const uint64_t n = count("atomic operand count", 1);
        const uint64_t want = op == AtomicOp::Load ? 1 : op == AtomicOp::CompareExchange ? 3 : 2;
        if (n != want) fail_at(start, "atomic " + std::string(to_string(op)) + " takes " + std::to_string(want) + " operands");
        for (uint64_t i = 0; i < n; ++i) e.args.push_back(expr());
        break;
      }
      case OpClass::Binary:
      case OpClass::Unary:
      case OpClass::Ternary:
        for (uint8_t i = 0; i < info.arity; ++i) e.args.push_back(expr());
        break;
    }
    return e;
  }

  std::span<const uint8_t> in_;
  const WireLimits& limits_;
  size_t pos_ = 0;
  size_t depth_ = 0;
  size_t nodes_ = 0;
};

}  // namespace

Program from_wire(std::span<const uint8_t> bytes, const WireLimits& limits) { return Reader(bytes, limits).program(); }

}  // namespace vyre
