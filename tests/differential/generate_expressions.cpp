// Integer and bool expressions, indices, atomics and uniform values.
#include "differential/program_generator.hpp"

namespace vyre::differential::detail {

using namespace vyre::build;

namespace {

ScalarType other_integer(ScalarType t) { return t == ScalarType::U32 ? ScalarType::I32 : ScalarType::U32; }

Expr integer_literal(ScalarType t, uint32_t bits) {
  return t == ScalarType::I32 ? i32(static_cast<int32_t>(bits)) : u32(bits);
}

AtomicOp family_op(Family f, ChoiceStream& choices) {
  switch (f) {
    case Family::add_sub: return choices.coin(50) ? AtomicOp::Sub : AtomicOp::Add;
    case Family::min: return AtomicOp::Min;
    case Family::max: return AtomicOp::Max;
    case Family::bit_and: return AtomicOp::And;
    case Family::bit_or: return AtomicOp::Or;
    case Family::bit_xor: return AtomicOp::Xor;
  }
  return AtomicOp::Add;
}

constexpr Op kIntegerBinary[] = {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Rem,
                                 Op::Min, Op::Max, Op::And, Op::Or,  Op::Xor};
constexpr Op kComparisons[] = {Op::Eq, Op::Ne, Op::Lt, Op::Le, Op::Gt, Op::Ge};
constexpr Axis kAxes[] = {Axis::X, Axis::Y, Axis::Z};

}  // namespace

std::vector<BufferInfo*> ProgramGenerator::buffers_where(const std::function<bool(const BufferInfo&)>& pred) {
  std::vector<BufferInfo*> out;
  for (auto& b : buffers_)
    if (pred(b)) out.push_back(&b);
  return out;
}

const PrivateArray* ProgramGenerator::pick_array(const std::function<bool(const PrivateArray&)>& pred) {
  std::vector<const PrivateArray*> found;
  for (const auto& scope : arrays_)
    for (const auto& a : scope)
      if (pred(a)) found.push_back(&a);
  return pick(found);
}

Expr ProgramGenerator::array_index(const PrivateArray& a, int depth) {
  switch (choices_.weighted({4, 3, 1})) {
    case 0: return rem(int_expr(ScalarType::U32, depth - 1), u32(a.count));
    case 1: return choices_.coin(50) ? u32(choices_.below(a.count)) : i32(static_cast<int32_t>(choices_.below(a.count)));
    default: return int_expr(choices_.coin(50) ? ScalarType::U32 : ScalarType::I32, depth - 1);
  }
}

std::vector<const Local*> ProgramGenerator::locals_where(const std::function<bool(const Local&)>& pred) const {
  std::vector<const Local*> out;
  for (const auto& scope : scopes_)
    for (const auto& l : scope)
      if (pred(l)) out.push_back(&l);
  return out;
}

// ---- indices ----------------------------------------------------------------

Expr ProgramGenerator::me() { return var("s_me"); }

Expr ProgramGenerator::lid_flat() {
  if (choices_.coin(60)) return build::lid_flat();
  // The same index from the three axes.
  return add(add(lid(Axis::X), mul(lid(Axis::Y), u32(workgroup_[0]))),
             mul(lid(Axis::Z), u32(workgroup_[0] * workgroup_[1])));
}

Expr ProgramGenerator::own_index(const BufferInfo& b, uint32_t j, bool as_i32) {
  Expr base = phased(b) ? lid_flat() : me();
  Expr index = b.per_owner == 1 ? std::move(base)
                                : add(choices_.coin(50) ? mul(std::move(base), u32(b.per_owner))
                                                        : mul(u32(b.per_owner), std::move(base)),
                                      u32(j));
  // Group-shared storage: the workgroup's slice first.
  if (b.role == Role::group_shared) index = add(mul(var("s_wg"), u32(group_size_ * b.per_owner)), std::move(index));
  return as_i32 ? cast(ScalarType::I32, std::move(index)) : index;
}

bool ProgramGenerator::in_mode(const BufferInfo& b, WorkgroupMode mode) const {
  auto it = workgroup_mode_.find(b.decl.name);
  return phased(b) && it != workgroup_mode_.end() && it->second == mode;
}

bool ProgramGenerator::readable(const BufferInfo& b) const {
  if (b.length == 0) return false;
  switch (b.role) {
    case Role::input: case Role::uniform: case Role::stable: case Role::owned: return true;
    case Role::workgroup:
    case Role::group_shared: return in_mode(b, WorkgroupMode::owned) || in_mode(b, WorkgroupMode::read);
    default: return false;
  }
}

bool ProgramGenerator::own_reads_only(const BufferInfo& b) const {
  return b.role == Role::owned || in_mode(b, WorkgroupMode::owned);
}

Expr ProgramGenerator::read_index(const BufferInfo& b, int depth) {
  if (own_reads_only(b)) {
    const bool as_i32 = choices_.coin(25);
    return own_index(b, choices_.below(b.per_owner), as_i32);
  }
  return any_index(b, depth);
}

Expr ProgramGenerator::any_index(const BufferInfo& b, int depth) {
  // An index may read a buffer whose index reads another: past
  // kMaxIndexNesting the operand is a literal, so that no choice sequence
  // nests deeper than the format allows.
  const bool innermost = index_nesting_ >= kMaxIndexNesting;
  ++index_nesting_;
  struct Leave {
    int& nesting;
    ~Leave() { --nesting; }
  } leave{index_nesting_};
  auto operand = [&](ScalarType t) {
    return innermost ? integer_literal(t, pick_integer_bits(choices_, t)) : int_expr(t, depth - 1);
  };
  if (b.role == Role::group_shared) {
    // Any slot of this workgroup's slice.
    const uint32_t slice = group_size_ * b.per_owner;
    return add(mul(var("s_wg"), u32(slice)), rem(operand(ScalarType::U32), u32(slice)));
  }
  const bool fixed = !b.decl.runtime_sized();
  Expr length = fixed && choices_.coin(50) ? u32(b.decl.count) : len(b.decl.name);
  switch (choices_.below(fixed ? 5 : 4)) {
    case 0:
      if (fixed) return u32(choices_.below(b.decl.count));
      return rem(innermost ? operand(ScalarType::U32) : int_leaf(ScalarType::U32, 0), std::move(length));
    case 1: return rem(operand(ScalarType::U32), std::move(length));
    case 2: return cast(ScalarType::I32, rem(operand(ScalarType::U32), std::move(length)));
    case 3: return rem(bitcast(ScalarType::U32, operand(ScalarType::I32)), std::move(length));
    default: return i32(static_cast<int32_t>(choices_.below(b.decl.count)));
  }
}

// ---- integers -----------------------------------------------------------------

Expr ProgramGenerator::int_leaf(ScalarType t, int depth) {
  switch (choices_.weighted({4, 4, 2, 1, 4, 1, 2})) {
    case 1: {
      if (auto* l = pick(locals_where([&](const Local& l) { return l.type == t; }))) return var(l->name);
      break;
    }
    case 2: {
      Expr b;
      switch (choices_.below(5)) {
        case 0: b = gid(kAxes[choices_.below(3)]); break;
        case 1: b = lid(kAxes[choices_.below(3)]); break;
        case 2: b = wid(kAxes[choices_.below(3)]); break;
        case 3: b = nwg(kAxes[choices_.below(3)]); break;
        default: b = build::lid_flat(); break;
      }
      return t == ScalarType::U32 ? b : (choices_.coin(50) ? cast(t, std::move(b)) : bitcast(t, std::move(b)));
    }
    case 3: {
      const BufferInfo& b = buffers_[choices_.below(static_cast<uint32_t>(buffers_.size()))];
      return t == ScalarType::U32 ? len(b.decl.name) : bitcast(t, len(b.decl.name));
    }
    case 4: {
      // A narrow buffer's load is its value type (u8 and u16 give u32, i8 and i16 i32).
      auto candidates =
          buffers_where([&](const BufferInfo& b) { return value_type(b.decl.type) == t && readable(b); });
      if (BufferInfo* b = pick(candidates)) return load(b->decl.name, read_index(*b, depth));
      break;
    }
    case 5: return owned_atomic(t, depth);
    case 6:
      if (const PrivateArray* a = pick_array([&](const PrivateArray& a) { return a.type == t; })) {
        const PrivateArray copy = *a;
        return load(copy.name, array_index(copy, depth));
      }
      break;
    default: break;
  }
  return integer_literal(t, pick_integer_bits(choices_, t));
}

Expr ProgramGenerator::int_conversion(ScalarType t, int depth) {
  switch (choices_.below(5)) {
    case 0: return cast(t, int_expr(other_integer(t), depth - 1));
    case 1: return bitcast(t, int_expr(other_integer(t), depth - 1));
    case 2: return cast(t, bool_expr(depth - 1));
    // f32 to integer: truncation, saturation, NaN to 0, defined for every value.
    case 3: return cast(t, f32_expr(depth - 1, true, true, true).expr);
    // Bitcast of finite nonzero normals only: a zero's sign, a NaN's payload
    // and a subnormal are not kept by every GPU.
    default: return bitcast(t, f32_expr(depth - 1, false, false, false).expr);
  }
}

Expr ProgramGenerator::int_expr(ScalarType t, int depth) {
  if (depth <= 0) return int_leaf(t, 0);
  switch (choices_.shape({3, 5, 1, 2, 1, 1, 2})) {
    case 1: {
      const Op op = kIntegerBinary[choices_.below(std::size(kIntegerBinary))];
      Expr a = int_expr(t, depth - 1);
      return binary(op, std::move(a), int_expr(t, depth - 1));
    }
    case 2: {
      Expr a = int_expr(t, depth - 1);
      Expr amount = choices_.coin(50) ? u32(choices_.range(0, 40)) : int_expr(ScalarType::U32, depth - 1);
      return choices_.coin(50) ? shl(std::move(a), std::move(amount)) : shr(std::move(a), std::move(amount));
    }
    case 3: {
      static const Op kUnary[] = {Op::Abs, Op::BitNot, Op::Popcount, Op::Clz, Op::Ctz, Op::ReverseBits, Op::Neg};
      const Op op = kUnary[choices_.below(t == ScalarType::I32 ? 7 : 6)];
      return unary(op, int_expr(t, depth - 1));
    }
    case 4: {
      Expr x = int_expr(t, depth - 1);
      Expr lo = int_expr(t, depth - 1);
      return clamp(std::move(x), std::move(lo), int_expr(t, depth - 1));
    }
    case 5: {
      Expr c = bool_expr(depth - 1);
      Expr a = int_expr(t, depth - 1);
      return select(std::move(c), std::move(a), int_expr(t, depth - 1));
    }
    case 6: return int_conversion(t, depth);
    default: return int_leaf(t, depth);
  }
}

Expr ProgramGenerator::small_u32(uint32_t bound, int depth, std::pair<int64_t, int64_t>* range) {
  if (range) *range = {0, static_cast<int64_t>(bound) - 1};
  switch (choices_.below(4)) {
    case 0: {
      const uint32_t v = choices_.below(bound);
      if (range) *range = {v, v};
      return u32(v);
    }
    case 1: return rem(int_expr(ScalarType::U32, depth - 1), u32(bound));
    case 2: return min(int_expr(ScalarType::U32, depth - 1), u32(bound - 1));
    default: {
      // A mask keeps it below the next power of two; min keeps it below the bound.
      uint32_t mask = 1;
      while (mask < bound) mask <<= 1;
      return min(bit_and(int_expr(ScalarType::U32, depth - 1), u32(mask - 1)), u32(bound - 1));
    }
  }
}

// ---- bools ---------------------------------------------------------------------

Expr ProgramGenerator::bool_expr(int depth) {
  if (depth <= 0) {
    if (choices_.coin(50)) {
      if (auto* l = pick(locals_where([](const Local& l) { return l.type == ScalarType::Bool; }))) return var(l->name);
    }
    if (choices_.coin(30)) {
      auto candidates = buffers_where([&](const BufferInfo& b) { return b.decl.type == ScalarType::Bool && readable(b); });
      if (BufferInfo* b = pick(candidates)) return load(b->decl.name, read_index(*b, depth));
    }
    return boolean(choices_.coin(50));
  }
  switch (choices_.shape({2, 2, 5, 2, 1, 1, 2, 1, 1, 1})) {
    case 1: return bool_expr(0);
    case 2: {
      const ScalarType t = choices_.coin(50) ? ScalarType::I32 : ScalarType::U32;
      Expr a = int_expr(t, depth - 1);
      Expr b = int_expr(t, depth - 1);
      return binary(kComparisons[choices_.below(6)], std::move(a), std::move(b));
    }
    case 3: {
      // Comparisons are exact for every value but NaN, infinities and subnormals (flushing).
      Expr a = f32_expr(depth - 1, false, false, true).expr;
      Expr b = f32_expr(depth - 1, false, false, true).expr;
      return binary(kComparisons[choices_.below(6)], std::move(a), std::move(b));
    }
    case 4: {
      Expr a = bool_expr(depth - 1);
      return choices_.coin(50) ? eq(std::move(a), bool_expr(depth - 1)) : ne(std::move(a), bool_expr(depth - 1));
    }
    case 5: return logical_not(bool_expr(depth - 1));
    case 6: {
      Expr a = bool_expr(depth - 1);
      return choices_.coin(50) ? land(std::move(a), bool_expr(depth - 1)) : lor(std::move(a), bool_expr(depth - 1));
    }
    case 7: return cast(ScalarType::Bool, int_expr(choices_.coin(50) ? ScalarType::I32 : ScalarType::U32, depth - 1));
    // Neither NaN nor infinities (WGSL lets a GPU assume they never occur),
    // nor subnormals (a GPU may flush them).
    case 8: return cast(ScalarType::Bool, f32_expr(depth - 1, false, false, true).expr);
    case 9: {
      Expr c = bool_expr(depth - 1);
      Expr a = bool_expr(depth - 1);
      return select(std::move(c), std::move(a), bool_expr(depth - 1));
    }
    default: return boolean(choices_.coin(50));
  }
}

// ---- atomics ---------------------------------------------------------------------

Expr ProgramGenerator::owned_atomic(ScalarType t, int depth) {
  auto candidates = buffers_where([&](const BufferInfo& b) { return b.atomic && b.decl.type == t && readable(b); });
  BufferInfo* b = pick(candidates);
  if (!b) return integer_literal(t, pick_integer_bits(choices_, t));
  const bool read_only = !own_reads_only(*b);
  if (read_only) return atomic_load(b->decl.name, any_index(*b, depth));
  const uint32_t j = choices_.below(b->per_owner);
  const bool as_i32 = choices_.coin(25);
  switch (choices_.below(10)) {
    case 0: return atomic_load(b->decl.name, own_index(*b, j, as_i32));
    case 1: {
      // Expect the present value half of the time, so that the exchange happens.
      Expr index = own_index(*b, j, as_i32);
      Expr expected = choices_.coin(50) ? load(b->decl.name, own_index(*b, j, false)) : int_expr(t, depth - 1);
      return atomic_compare_exchange(b->decl.name, std::move(index), std::move(expected), int_expr(t, depth - 1));
    }
    default: {
      static const AtomicOp kOps[] = {AtomicOp::Add, AtomicOp::Sub, AtomicOp::Min, AtomicOp::Max,
                                      AtomicOp::And, AtomicOp::Or,  AtomicOp::Xor, AtomicOp::Exchange};
      const AtomicOp op = kOps[choices_.below(8)];
      Expr index = own_index(*b, j, as_i32);
      return atomic(op, b->decl.name, std::move(index), int_expr(t, depth - 1));
    }
  }
}

Expr ProgramGenerator::counter_update(int depth) {
  auto candidates = buffers_where([&](const BufferInfo& b) {
    return b.role == Role::counter || (b.atomic && in_mode(b, WorkgroupMode::accumulate));
  });
  BufferInfo* b = pick(candidates);
  if (!b) return Expr{};
  const Family family = b->role == Role::counter ? b->family : workgroup_family_.at(b->decl.name);
  const AtomicOp op = family_op(family, choices_);
  Expr index = any_index(*b, depth);
  return atomic(op, b->decl.name, std::move(index), int_expr(b->decl.type, depth - 1));
}

Expr ProgramGenerator::effect_expr(int depth) {
  Expr update = counter_update(depth);
  if (update == Expr{}) {
    return choices_.coin(50) ? owned_atomic(choices_.coin(50) ? ScalarType::I32 : ScalarType::U32, depth)
                             : int_expr(ScalarType::U32, depth);
  }
  const ScalarType t = program_.find_buffer(update.name) ? program_.find_buffer(update.name)->type : ScalarType::U32;
  switch (choices_.below(5)) {
    case 1: {
      // Short-circuit: the update runs only when the left side does not decide.
      Expr c = bool_expr(depth - 1);
      Expr v = int_expr(t, depth - 1);
      return land(std::move(c), eq(std::move(update), std::move(v)));
    }
    case 2: {
      Expr c = bool_expr(depth - 1);
      Expr v = int_expr(t, depth - 1);
      return lor(std::move(c), ne(std::move(update), std::move(v)));
    }
    case 3: {
      // Both values of a select are evaluated.
      Expr c = bool_expr(depth - 1);
      Expr other = counter_update(depth);
      const Buffer* ob = program_.find_buffer(other.name);
      if (!ob || ob->type != t) other = int_expr(t, depth - 1);
      return select(std::move(c), std::move(update), std::move(other));
    }
    case 4: return add(std::move(update), int_expr(t, depth - 1));
    default: return update;
  }
}

// ---- uniform values -----------------------------------------------------------------

Expr ProgramGenerator::uniform_u32(int depth) {
  if (depth > 0 && choices_.coin(40)) {
    static const Op kOps[] = {Op::Add, Op::Xor, Op::Min, Op::Max, Op::Mul, Op::Shr, Op::Rem, Op::Sub};
    const Op op = kOps[choices_.below(std::size(kOps))];
    Expr a = uniform_u32(depth - 1);
    return binary(op, std::move(a), uniform_u32(depth - 1));
  }
  switch (choices_.below(6)) {
    case 5: {
      // Locals that only ever hold uniform values, assigned in uniform flow,
      // are uniform too (the validator decides it over the whole program).
      auto candidates = locals_where([](const Local& l) { return l.uniform && l.type == ScalarType::U32; });
      if (auto* l = pick(candidates)) return var(l->name);
      break;
    }
    case 1: return wid(kAxes[choices_.below(3)]);
    case 2: return nwg(kAxes[choices_.below(3)]);
    case 3: return len(buffers_[choices_.below(static_cast<uint32_t>(buffers_.size()))].decl.name);
    case 4: {
      auto readable = buffers_where([](const BufferInfo& b) {
        return (b.decl.access == Access::Read || b.decl.access == Access::Uniform) && b.length > 0;
      });
      if (BufferInfo* b = pick(readable)) {
        // The index is uniform too; it may load again, kMaxIndexNesting
        // deep at most (depth falls by one per load), then a literal.
        Expr index;
        if (!b->decl.runtime_sized())
          index = u32(choices_.below(b->decl.count));
        else if (depth > -kMaxIndexNesting)
          index = rem(uniform_u32(depth - 1), len(b->decl.name));
        else
          index = rem(u32(pick_integer_bits(choices_, ScalarType::U32)), len(b->decl.name));
        Expr value = load(b->decl.name, std::move(index));
        switch (value_type(b->decl.type)) {  // a narrow buffer loads as its value type
          case ScalarType::I32: return bitcast(ScalarType::U32, std::move(value));
          case ScalarType::F32:
          case ScalarType::Bool: return cast(ScalarType::U32, std::move(value));
          default: return value;
        }
      }
      break;
    }
    default: break;
  }
  return u32(pick_integer_bits(choices_, ScalarType::U32));
}

Expr ProgramGenerator::uniform_bool() {
  if (choices_.coin(30)) {
    const uint32_t parity = choices_.below(2);
    return eq(rem(uniform_u32(1), u32(2)), u32(parity));
  }
  Expr a = uniform_u32(1);
  Expr b = uniform_u32(1);
  return binary(kComparisons[choices_.below(6)], std::move(a), std::move(b));
}

}  // namespace vyre::differential::detail
