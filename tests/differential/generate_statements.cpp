// Statements, phases and barriers.
//
// A program is a sequence of phases separated by barriers (or uniform loops
// and ifs whose bodies are phases ending in a barrier). In each phase every
// workgroup buffer and group-shared storage buffer has one mode: its
// invocations write only their own slots, or read any slot, or accumulate
// with one commutative atomic operation; a barrier of the buffer's kind
// (workgroup or storage) separates any two phases, so no read races a write.
// Barriers stand only in uniform control flow: a phase that a barrier
// follows has no return (but an `if` on a uniform condition), and its loops
// are wrapped in an `if`, after which the flow is uniform again.
#include <algorithm>
#include <array>

#include "differential/program_generator.hpp"

namespace vyre::differential::detail {

using namespace vyre::build;

namespace {

constexpr const char* kLocalNames[] = {"x",   "i",      "let",  "var",  "loop",     "fn",   "main", "select",
                                       "i32", "f32",    "bool", "l_v0", "vyre_gid", "b_a",  "_t",   "while",
                                       "out", "return", "gid",  "len",  "atomic",   "tile", "a",    "acc"};

}  // namespace

std::string ProgramGenerator::fresh_local_name() {
  if (choices_.coin(30)) {
    const std::string name = kLocalNames[choices_.below(std::size(kLocalNames))];
    if (used_local_names_.insert(name).second) return name;
  }
  std::string name;
  do name = "v" + std::to_string(local_counter_++);
  while (!used_local_names_.insert(name).second);
  return name;
}

std::vector<Stmt> ProgramGenerator::body() {
  std::vector<Stmt> out;
  push_scope();
  // s_me: the invocation's index in [0, invocations), from the builtins.
  Expr index;
  const bool one_dimensional = workgroup_[1] == 1 && workgroup_[2] == 1 && grid_[1] == 1 && grid_[2] == 1;
  switch (choices_.below(3)) {
    case 0:
      if (one_dimensional) {
        index = gid(Axis::X);
        break;
      }
      [[fallthrough]];
    case 1: {
      Expr width = mul(nwg(Axis::X), u32(workgroup_[0]));
      Expr height = mul(nwg(Axis::Y), u32(workgroup_[1]));
      index = add(add(gid(Axis::X), mul(gid(Axis::Y), width)), mul(gid(Axis::Z), mul(width, height)));
      break;
    }
    default: {
      Expr group = add(add(wid(Axis::X), mul(wid(Axis::Y), nwg(Axis::X))),
                       mul(wid(Axis::Z), mul(nwg(Axis::X), nwg(Axis::Y))));
      index = add(mul(std::move(group), u32(group_size_)), lid_flat());
      break;
    }
  }
  out.push_back(let("s_me", std::move(index)));
  declare({"s_me", ScalarType::U32, {}, false, std::pair<int64_t, int64_t>{0, std::max<int64_t>(invocations_, 1) - 1}});
  used_local_names_.insert("s_me");

  bool has_phased = false, has_group_shared = false;
  for (const auto& b : buffers_) {
    has_phased = has_phased || phased(b);
    has_group_shared = has_group_shared || b.role == Role::group_shared;
  }
  if (has_group_shared) {
    // s_wg: the workgroup's index in the grid, for its slice of group-shared storage.
    out.push_back(let("s_wg", add(add(wid(Axis::X), mul(wid(Axis::Y), nwg(Axis::X))),
                                  mul(wid(Axis::Z), mul(nwg(Axis::X), nwg(Axis::Y))))));
    declare({"s_wg", ScalarType::U32, {}, false, std::nullopt});
    used_local_names_.insert("s_wg");
  }
  if (choices_.coin(has_phased ? 85 : 30)) {
    const uint32_t items = 1 + choices_.count(3);
    for (uint32_t i = 0; i < items; ++i) {
      if (choices_.coin(30)) {
        uniform_construct(out);
      } else {
        phase(out, false);
        boundary(out);
      }
    }
  }
  phase(out, true);
  pop_scope();
  return out;
}

void ProgramGenerator::choose_workgroup_modes() {
  for (const auto& b : buffers_) {
    if (!phased(b)) continue;
    const size_t mode = choices_.weighted({4, 4, b.atomic ? 3u : 0u});
    workgroup_mode_[b.decl.name] = static_cast<WorkgroupMode>(mode);
    workgroup_family_[b.decl.name] = static_cast<Family>(choices_.below(6));
  }
}

void ProgramGenerator::phase(std::vector<Stmt>& out, bool final_phase) {
  choose_workgroup_modes();
  Flow flow;
  flow.final_phase = final_phase;
  const uint32_t n = choices_.count(static_cast<uint32_t>(options_.max_block_statements) + 3);
  for (uint32_t i = 0; i < n; ++i) {
    // A storage barrier alone is no phase boundary, but it must be uniform too.
    if (!final_phase && choices_.coin(6)) out.push_back(barrier(BarrierKind::Storage));
    statement(out, flow);
  }
  if (final_phase) final_stores(out);
}

void ProgramGenerator::boundary(std::vector<Stmt>& out) {
  // A workgroup barrier orders workgroup memory, a storage barrier storage
  // memory: each kind of phased buffer needs its own.
  bool workgroup = false, storage = false;
  for (const auto& b : buffers_) {
    workgroup = workgroup || b.role == Role::workgroup;
    storage = storage || b.role == Role::group_shared;
  }
  if (!workgroup && !storage) workgroup = true;
  if (!storage && choices_.coin(20)) out.push_back(barrier(BarrierKind::Storage));
  const bool storage_first = choices_.coin(50);
  if (storage && storage_first) out.push_back(barrier(BarrierKind::Storage));
  if (workgroup || choices_.coin(15)) out.push_back(barrier(BarrierKind::Workgroup));
  if (storage && !storage_first) out.push_back(barrier(BarrierKind::Storage));
  if (!storage && choices_.coin(15)) out.push_back(barrier(BarrierKind::Storage));
}

void ProgramGenerator::uniform_construct(std::vector<Stmt>& out) {
  if (choices_.coin(60)) {
    // Any name, also one a closed sibling block used for a non-uniform local:
    // a local is its declaration.
    std::string name = fresh_local_name();
    Expr bound;
    switch (choices_.below(4)) {
      case 0: bound = u32(choices_.below(4)); break;
      case 1: bound = rem(uniform_u32(1), u32(3)); break;
      case 2: bound = min(uniform_u32(1), u32(2)); break;
      default: bound = add(rem(uniform_u32(1), u32(2)), u32(1)); break;
    }
    std::vector<Stmt> inner;
    push_scope();
    declare({name, ScalarType::U32, {}, false, std::pair<int64_t, int64_t>{0, 2}, true});
    const uint32_t phases = 1 + choices_.count(2);
    for (uint32_t i = 0; i < phases; ++i) {
      phase(inner, false);
      boundary(inner);
    }
    pop_scope();
    out.push_back(loop(std::move(name), u32(0), std::move(bound), std::move(inner)));
    return;
  }
  Expr cond = uniform_bool();
  auto branch = [&] {
    std::vector<Stmt> inner;
    push_scope();
    phase(inner, false);
    boundary(inner);
    pop_scope();
    return inner;
  };
  std::vector<Stmt> then_body = branch();
  std::vector<Stmt> else_body;
  if (choices_.coin(50)) else_body = branch();
  out.push_back(if_(std::move(cond), std::move(then_body), std::move(else_body)));
}

std::vector<Stmt> ProgramGenerator::block(const Flow& flow, int max_statements) {
  std::vector<Stmt> out;
  push_scope();
  const uint32_t n = choices_.count(static_cast<uint32_t>(max_statements) + 1);
  for (uint32_t i = 0; i < n; ++i) statement(out, flow);
  pop_scope();
  return out;
}

void ProgramGenerator::statement(std::vector<Stmt>& out, const Flow& flow) {
  const int depth = options_.max_expression_depth;
  const bool nest = flow.depth < options_.max_nesting;
  const size_t kind = choices_.weighted({5, 4, 3, nest ? 3u : 0u, nest ? 2u : 0u, nest ? 1u : 0u, 2,
                                         flow.loops > 0 ? 1u : 0u, flow.final_phase ? 1u : 0u,
                                         !flow.final_phase && flow.top ? 1u : 0u,
                                         !flow.final_phase && flow.top ? 1u : 0u, 1, 2});
  Flow inner = flow;
  inner.top = false;
  inner.depth = flow.depth + 1;
  switch (kind) {
    case 0:
      if (store_statement(out, depth)) return;
      break;
    case 2:
      if (assign_statement(out, depth)) return;
      break;
    case 3: if_statement(out, flow); return;
    case 4:
    case 5: {
      // Loops that a barrier follows sit in an `if`: the flow after an `if`
      // with no exit is as uniform as before it.
      const bool wrap = !flow.final_phase && flow.top;
      if (wrap) push_scope();
      std::vector<Stmt> loop_code;
      if (kind == 4) loop_statement(loop_code, inner);
      else while_statement(loop_code, inner);
      if (wrap) {
        pop_scope();
        out.push_back(if_(bool_expr(1), std::move(loop_code)));
      } else {
        for (auto& s : loop_code) out.push_back(std::move(s));
      }
      return;
    }
    case 6:
      if (!buffers_.empty() && choices_.below(10) == 0) out.push_back(extreme_index_load());
      else out.push_back(eval(effect_expr(depth)));
      return;
    case 7: {
      Stmt exit = choices_.coin(50) ? break_() : continue_();
      if (choices_.coin(80)) out.push_back(if_(bool_expr(2), {std::move(exit)}));
      else out.push_back(std::move(exit));
      return;
    }
    case 8:
      if (choices_.coin(85)) out.push_back(if_(bool_expr(2), {return_()}));
      else out.push_back(return_());
      return;
    case 9:
      // A whole workgroup may leave before a barrier.
      out.push_back(if_(uniform_bool(), {return_()}));
      return;
    case 10: uniform_local_statement(out); return;
    case 11: array_statement(out, depth); return;
    case 12:
      if (array_store_statement(out, depth)) return;
      break;
    default: break;
  }
  let_statement(out, depth);
}

Expr ProgramGenerator::value_for_buffer(BufferInfo& b, int depth) {
  if (b.decl.type == ScalarType::Bool) return bool_expr(depth);
  if (b.decl.type != ScalarType::F32) return int_expr(value_type(b.decl.type), depth);
  if (b.f32.kind == F32Class::Kind::bounded) {
    if (choices_.coin(15)) return exact_expr(depth).expr;
    return imprecise_value(b, depth).expr;
  }
  return fit_into_class(b.f32, depth).expr;
}

Expr ProgramGenerator::value_for_local(const Local& l, int depth) {
  switch (l.type) {
    case ScalarType::Bool: return bool_expr(depth);
    case ScalarType::F32:
      if (l.f32.kind == F32Class::Kind::exact) return fit(exact_expr(depth), l.f32.range).expr;
      return f32_expr(depth, l.f32.special.nan_inf, l.f32.special.subnormal, l.f32.zero).expr;
    default: return int_expr(l.type, depth);
  }
}

bool ProgramGenerator::store_statement(std::vector<Stmt>& out, int depth) {
  auto targets = buffers_where([&](const BufferInfo& b) {
    if (b.role == Role::owned || b.role == Role::guarded) return b.length > 0 || b.role == Role::guarded;
    return in_mode(b, WorkgroupMode::owned);
  });
  BufferInfo* b = pick(targets);
  if (!b) return false;
  const uint32_t j = choices_.below(b->per_owner);
  const bool as_i32 = choices_.coin(20);
  Expr value = value_for_buffer(*b, depth);
  Stmt s = store(b->decl.name, own_index(*b, j, as_i32), std::move(value));
  if (b->role == Role::guarded) {
    // The guard keeps the store in bounds; it is never out of bounds otherwise.
    out.push_back(choices_.coin(70) ? if_(lt(own_index(*b, j), len(b->decl.name)), {std::move(s)})
                                    : if_(ge(own_index(*b, j), len(b->decl.name)), {}, {std::move(s)}));
    return true;
  }
  out.push_back(std::move(s));
  return true;
}

void ProgramGenerator::let_statement(std::vector<Stmt>& out, int depth) {
  Local l;
  l.name = fresh_local_name();
  Expr value;
  switch (choices_.weighted({3, 3, 2, 2, 1})) {
    case 1: l.type = ScalarType::I32; value = int_expr(l.type, depth); break;
    case 2: l.type = ScalarType::Bool; value = bool_expr(depth); break;
    case 3: {
      l.type = ScalarType::F32;
      F32Value v = exact_expr(depth);
      l.f32.kind = F32Class::Kind::exact;
      l.f32.range = choices_.coin(50) ? pick_exact_range() : *v.exact;
      value = fit(std::move(v), l.f32.range).expr;
      break;
    }
    case 4: {
      l.type = ScalarType::F32;
      l.f32.kind = F32Class::Kind::special;
      l.f32.special = {choices_.coin(50), choices_.coin(50)};
      l.f32.zero = true;
      value = f32_expr(depth, l.f32.special.nan_inf, l.f32.special.subnormal, true).expr;
      break;
    }
    default: l.type = ScalarType::U32; value = int_expr(l.type, depth); break;
  }
  out.push_back(let(l.name, std::move(value)));
  declare(std::move(l));
}

void ProgramGenerator::array_statement(std::vector<Stmt>& out, int depth) {
  if (private_elements_ + 40 > kMaxGeneratedPrivateElements) {
    let_statement(out, depth);
    return;
  }
  PrivateArray a;
  do a.name = "p" + std::to_string(array_counter_++);
  while (!used_local_names_.insert(a.name).second);
  a.type = std::array{ScalarType::U32, ScalarType::I32, ScalarType::F32}[choices_.below(3)];
  a.count = choices_.coin(20) ? 1 : choices_.range(2, 40);
  if (a.type == ScalarType::F32) {
    a.range = pick_exact_range();
    if (a.range.lo > 0 || a.range.hi < 0) a.range = integer_range(-256, 256);
  }
  private_elements_ += a.count;
  out.push_back(array(a.name, a.type, a.count));
  arrays_.back().push_back(a);
  const uint32_t stores = choices_.count(3);
  for (uint32_t i = 0; i < stores; ++i) array_store_statement(out, depth);
}

bool ProgramGenerator::array_store_statement(std::vector<Stmt>& out, int depth) {
  const PrivateArray* found = pick_array([](const PrivateArray&) { return true; });
  if (!found) return false;
  const PrivateArray a = *found;  // the value may declare nothing, but keep a copy anyway
  Expr index = array_index(a, depth);
  Expr value = a.type == ScalarType::F32 ? fit(exact_expr(depth), a.range).expr : int_expr(a.type, depth);
  out.push_back(store(a.name, std::move(index), std::move(value)));
  return true;
}

bool ProgramGenerator::assign_statement(std::vector<Stmt>& out, int depth) {
  const Local* l = pick(locals_where([](const Local& l) { return l.assignable; }));
  if (!l) return false;
  const Local target = *l;  // the value may declare nothing, but keep a copy anyway
  out.push_back(assign(target.name, value_for_local(target, depth)));
  return true;
}

// Only at the top of a phase a barrier follows, where the flow is uniform:
// an assignment anywhere else would make the local non-uniform everywhere.
void ProgramGenerator::uniform_local_statement(std::vector<Stmt>& out) {
  auto existing = locals_where([](const Local& l) { return l.uniform && l.name.rfind("s_u", 0) == 0; });
  if (const Local* l = pick(existing); l && choices_.coin(50)) {
    const std::string name = l->name;
    out.push_back(assign(name, uniform_u32(1)));
    return;
  }
  const std::string name = "s_u" + std::to_string(local_counter_++);
  used_local_names_.insert(name);
  out.push_back(let(name, uniform_u32(1)));
  declare({name, ScalarType::U32, {}, false, std::nullopt, true});
}

void ProgramGenerator::if_statement(std::vector<Stmt>& out, const Flow& flow) {
  Flow inner = flow;
  inner.top = false;
  inner.depth = flow.depth + 1;
  Expr cond = bool_expr(options_.max_expression_depth);
  std::vector<Stmt> then_body = block(inner, options_.max_block_statements);
  std::vector<Stmt> else_body;
  if (choices_.coin(40)) else_body = block(inner, options_.max_block_statements);
  out.push_back(if_(std::move(cond), std::move(then_body), std::move(else_body)));
}

void ProgramGenerator::long_loop_statement(std::vector<Stmt>& out, const Flow& flow) {
  Flow inner = flow;
  inner.loops = flow.loops + 1;
  const bool pair = flow.long_loops_left == 2 && choices_.coin(50);
  const uint32_t count = flow.long_loops_left == 2 && !pair ? 30'000 + choices_.below(70'000) : 150 + choices_.below(300);
  inner.long_loops_left = pair ? 1 : 0;
  const std::string name = fresh_local_name();
  push_scope();
  declare({name, ScalarType::U32, {}, false, std::pair<int64_t, int64_t>{0, int64_t{count} - 1}});
  std::vector<Stmt> body = block(inner, options_.max_block_statements);
  pop_scope();
  out.push_back(loop(name, u32(0), u32(count), std::move(body)));
}

Stmt ProgramGenerator::extreme_index_load() {
  static const Expr kIndices[] = {u32(0xffffffffu), u32(0x80000000u), i32(INT32_MAX), i32(-1), i32(INT32_MIN)};
  const BufferInfo& b = buffers_[choices_.below(static_cast<uint32_t>(buffers_.size()))];
  return eval(load(b.decl.name, kIndices[choices_.below(5)]));
}

void ProgramGenerator::loop_statement(std::vector<Stmt>& out, const Flow& flow) {
  // Rarely, and only in small dispatches (the reference runs every iteration).
  if (flow.long_loops_left > 0 && invocations_ <= 16 && (flow.long_loops_left == 1 || choices_.below(24) == 0)) {
    long_loop_statement(out, flow);
    return;
  }
  Flow inner = flow;
  inner.loops = flow.loops + 1;
  const std::string name = fresh_local_name();
  const bool signed_loop = choices_.coin(30);
  Expr from, to;
  std::optional<Expr> step;
  int64_t first = 0, last = 0;
  if (!signed_loop) {
    int64_t from_hi = 0, to_hi = 0;
    switch (choices_.below(3)) {
      case 0: from = u32(0); break;
      case 1: {
        const uint32_t v = choices_.below(3);
        from = u32(v);
        first = from_hi = v;
        break;
      }
      default: from = rem(int_expr(ScalarType::U32, 1), u32(3)); from_hi = 2; break;
    }
    switch (choices_.below(3)) {
      case 0: {
        const uint32_t v = choices_.below(7);
        to = u32(v);
        to_hi = v;
        break;
      }
      case 1: to = add(rem(int_expr(ScalarType::U32, 1), u32(4)), u32(1)); to_hi = 4; break;
      default: to = min(int_expr(ScalarType::U32, 1), u32(5)); to_hi = 5; break;
    }
    (void)from_hi;
    last = std::max(first, to_hi - 1);
  } else if (choices_.coin(12)) {
    // Format version 4: down from a literal start by a negative step to a
    // literal end; the variable stays within [end + 1, start].
    const int32_t start = static_cast<int32_t>(choices_.below(8)) - 2;
    const int32_t end = static_cast<int32_t>(choices_.below(6)) - 4;
    from = i32(start);
    to = i32(end);
    step = i32(-1 - static_cast<int32_t>(choices_.below(3)));
    first = std::min<int64_t>(end + 1, start);
    last = start;
  } else {
    const int32_t f = static_cast<int32_t>(choices_.below(6)) - 3;
    from = i32(f);
    first = f;
    int64_t to_hi = 0;
    switch (choices_.below(3)) {
      case 0: {
        const int32_t v = static_cast<int32_t>(choices_.below(8)) - 2;
        to = i32(v);
        to_hi = v;
        break;
      }
      case 1: to = cast(ScalarType::I32, rem(int_expr(ScalarType::U32, 1), u32(5))); to_hi = 4; break;
      default: to = sub(cast(ScalarType::I32, rem(int_expr(ScalarType::U32, 1), u32(4))), i32(1)); to_hi = 2; break;
    }
    last = std::max(first, to_hi - 1);
  }
  // Format version 4: now and then up by 2 or 3 (within the same range).
  if (!step && choices_.coin(15)) {
    const uint32_t s = 2 + choices_.below(2);
    step = signed_loop ? i32(static_cast<int32_t>(s)) : u32(s);
  }
  push_scope();
  declare({name, signed_loop ? ScalarType::I32 : ScalarType::U32, {}, false, std::pair<int64_t, int64_t>{first, last}});
  std::vector<Stmt> body = block(inner, options_.max_block_statements);
  pop_scope();
  out.push_back(step ? loop(name, std::move(from), std::move(to), std::move(*step), std::move(body))
                     : loop(name, std::move(from), std::move(to), std::move(body)));
}

void ProgramGenerator::while_statement(std::vector<Stmt>& out, const Flow& flow) {
  Flow inner = flow;
  inner.loops = flow.loops + 1;
  // A counter bounds every while: it is incremented first in the body, so
  // that `continue` cannot skip it, and nothing else assigns it.
  const std::string counter = "s_c" + std::to_string(local_counter_++);
  used_local_names_.insert(counter);
  const uint32_t limit = choices_.range(0, 4);
  out.push_back(let(counter, u32(0)));
  declare({counter, ScalarType::U32, {}, false, std::pair<int64_t, int64_t>{0, limit}});
  Expr bounded = lt(var(counter), u32(limit));
  Expr other = bool_expr(2);
  Expr cond = choices_.coin(50) ? land(std::move(bounded), std::move(other)) : land(std::move(other), std::move(bounded));
  std::vector<Stmt> body{assign(counter, add(var(counter), u32(1)))};
  for (auto& s : block(inner, options_.max_block_statements)) body.push_back(std::move(s));
  out.push_back(while_(std::move(cond), std::move(body)));
}

void ProgramGenerator::final_stores(std::vector<Stmt>& out) {
  const int depth = options_.max_expression_depth;
  for (auto& b : buffers_) {
    if (!b.decl.output) continue;
    if (b.role == Role::counter) {
      if (choices_.coin(60)) {
        Expr update = counter_update(depth);
        if (!(update == Expr{})) out.push_back(eval(std::move(update)));
      }
      continue;
    }
    // Group-shared outputs take their own slots only in a phase that writes them.
    if (phased(b) && !in_mode(b, WorkgroupMode::owned)) continue;
    for (uint32_t j = 0; j < b.per_owner; ++j) {
      if (!choices_.coin(85)) continue;
      Expr value = value_for_buffer(b, depth);
      Stmt s = store(b.decl.name, own_index(b, j), std::move(value));
      if (b.role == Role::guarded) out.push_back(if_(lt(own_index(b, j), len(b.decl.name)), {std::move(s)}));
      else out.push_back(std::move(s));
    }
  }
}

}  // namespace vyre::differential::detail
