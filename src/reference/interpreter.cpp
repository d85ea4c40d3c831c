// The CPU reference interpreter. It copies the checked program's facts
// (local slots, buffer indices, types) onto a compact tree once, then runs every workgroup in order and every
// invocation of a workgroup as a fiber, so that barriers and workgroup
// memory behave as on a GPU. Programs without barriers run each invocation
// straight through.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <map>
#include <optional>

#include "dispatch/plan.hpp"
#include "ir/scalar_ops.hpp"
#include "reference/element_memory.hpp"
#include "reference/race_check.hpp"
#include "reference/source_path.hpp"
#include "reference/workgroup_fibers.hpp"
#include "vyre/error.hpp"
#include "vyre/reference.hpp"

namespace vyre::reference {
using namespace vyre::scalar;  // the format's operators (ir/scalar_ops.hpp)
namespace {

// ---- the resolved program ------------------------------------------------------

struct RExpr {
  Op op = Op::LitU32;
  ScalarType type = ScalarType::U32;     // result type
  ScalarType operand = ScalarType::U32;  // type of args[0] (operators, conversions)
  uint64_t imm = 0;
  size_t index = 0;  // local slot (Var; Load of an array) or buffer index (Load, Len, Atomic)
  bool array = false;  // Load: of a private array's element
  std::vector<RExpr> args;
  const Expr* source = nullptr;  // for the checks' reports (source_path)
};

struct RStmt {
  StmtOp op = StmtOp::Return;
  size_t index = 0;  // local slot (Let, Assign, Loop, Array; Store to an array) or buffer index (Store)
  ScalarType type = ScalarType::U32;  // loop variable type
  bool array = false;  // Store: to a private array's element
  std::vector<RExpr> exprs;
  std::vector<RStmt> body, else_body;
  const Stmt* source = nullptr;
};

// The loop variable after one step. A step past the end of the type stops at
// the end, where the loop's test fails whatever the bound: the loop runs the
// trips of the mathematical sequence from, from+step, ... and never wraps.
uint32_t loop_next(ScalarType t, uint32_t v, uint32_t step) {
  if (t == ScalarType::I32) {
    const int64_t next = int64_t{static_cast<int32_t>(v)} + static_cast<int32_t>(step);
    return static_cast<uint32_t>(static_cast<int32_t>(std::clamp<int64_t>(next, INT32_MIN, INT32_MAX)));
  }
  return static_cast<uint32_t>(std::min<uint64_t>(uint64_t{v} + step, UINT32_MAX));
}

class Resolver {
 public:
  explicit Resolver(const CheckedProgram& c) : checked_(c) {}

  std::vector<RStmt> block(const std::vector<Stmt>& stmts) const {
    std::vector<RStmt> out;
    out.reserve(stmts.size());
    for (const auto& s : stmts) out.push_back(stmt(s));
    return out;
  }

 private:
  RStmt stmt(const Stmt& s) const {
    RStmt r;
    r.op = s.op;
    r.source = &s;
    for (const auto& e : s.exprs) r.exprs.push_back(expr(e));
    switch (s.op) {
      case StmtOp::Let:
      case StmtOp::Assign: r.index = checked_.slot(s); break;
      case StmtOp::Loop:
        r.index = checked_.slot(s);
        r.type = r.exprs[0].type;
        break;
      case StmtOp::Store:
        r.array = checked_.array_slot(s).has_value();
        r.index = r.array ? *checked_.array_slot(s) : checked_.buffer_index(s);
        break;
      case StmtOp::Array: r.index = checked_.slot(s); break;
      default: break;
    }
    r.body = block(s.body);
    r.else_body = block(s.else_body);
    return r;
  }

  RExpr expr(const Expr& e) const {
    RExpr r;
    r.op = e.op;
    r.source = &e;
    r.imm = e.imm;
    r.type = checked_.type(e);
    for (const auto& a : e.args) r.args.push_back(expr(a));
    if (!r.args.empty()) r.operand = r.args[0].type;
    switch (op_info(e.op).cls) {
      case OpClass::Var: r.index = checked_.slot(e); break;
      case OpClass::Load:
        if (auto a = checked_.array_slot(e)) {
          r.array = true;
          r.index = *a;
          break;
        }
        r.index = checked_.buffer_index(e);
        break;
      case OpClass::Atomic:
      case OpClass::Len: r.index = checked_.buffer_index(e); break;
      default: break;
    }
    return r;
  }

  const CheckedProgram& checked_;
};

// ---- execution -------------------------------------------------------------------

struct Memory {
  std::vector<Slot> data;
  uint32_t length = 0;  // what `len` reads
};

enum class Flow { Next, Break, Continue, Return };

struct Invocation {
  Dim3 gid{}, lid{}, wid{};
  uint32_t lid_flat = 0;
  // In the dispatch's launch domain (always, without one). Outside it, as on
  // the GPU, stores are skipped and atomics only read.
  bool in_domain = true;
  // For the race check: flat indices, and the barriers of each kind passed.
  uint64_t flat = 0, group = 0;
  uint32_t workgroup_barriers = 0, storage_barriers = 0;
  std::vector<uint64_t> locals;  // every value in the low bits of 64 (scalar_ops.hpp)
  std::map<size_t, std::vector<uint64_t>> arrays;  // private arrays by slot, as declared
};

class Machine {
 public:
  Machine(const Program& p, std::vector<Memory>& memory, const Dim3& grid, WorkgroupFibers* fibers, uint64_t budget,
          const RunChecks& checks, RaceCheck* races)
      : program_(p), memory_(memory), grid_(grid), fibers_(fibers), steps_left_(budget), budget_(budget),
        checks_(checks), races_(races) {}

  Flow block(const std::vector<RStmt>& stmts, Invocation& inv) {
    for (const auto& s : stmts) {
      const Flow f = stmt(s, inv);
      if (f != Flow::Next) return f;
    }
    return Flow::Next;
  }

 private:
  static int64_t index_value(const RExpr& e, uint64_t v) {
    return e.type == ScalarType::I32 ? int64_t{static_cast<int32_t>(v)} : static_cast<int64_t>(v);
  }

  // Out-of-bounds accesses are safe: loads give 0, stores are dropped.
  // The element an access reaches; nullptr out of range (a load reads 0, a
  // store is dropped), or with RunChecks::bounds, for an invocation in the
  // domain, a ProgramError at the access's path.
  Slot* element(size_t buffer, const RExpr& index_expr, uint64_t index_bits, const Invocation& inv,
                    const char* access, const void* source) {
    Memory& m = memory_[buffer];
    const int64_t i = index_value(index_expr, index_bits);
    if (i >= 0 && i < static_cast<int64_t>(m.data.size())) return &m.data[static_cast<size_t>(i)];
    if (checks_.bounds && inv.in_domain) out_of_range(buffer, i, inv, access, source);
    return nullptr;
  }

  // An element of a private array. Out of range, the last one, as the
  // lowering clamps (arrays have no robust access of their own), so both
  // agree; with RunChecks::bounds, a ProgramError at the access's path.
  uint64_t& array_element(size_t slot, const RExpr& index_expr, uint64_t index_bits, Invocation& inv,
                          const char* access, const void* source, const std::string& name) {
    std::vector<uint64_t>& a = inv.arrays.at(slot);
    const int64_t i = index_value(index_expr, index_bits);
    if (i >= 0 && i < static_cast<int64_t>(a.size())) return a[static_cast<size_t>(i)];
    if (checks_.bounds && inv.in_domain) {
      throw ProgramError({{source_path(program_, source),
                           std::string(access) + " private array '" + name + "' at index " +
                               std::to_string(i) + ", out of its " + std::to_string(a.size()) +
                               " elements, by the invocation with gid (" + std::to_string(inv.gid[0]) + ", " +
                               std::to_string(inv.gid[1]) + ", " + std::to_string(inv.gid[2]) +
                               ") (the GPU would have used its last element)"}});
    }
    return a.back();
  }

  [[noreturn]] void out_of_range(size_t buffer, int64_t i, const Invocation& inv, const char* access,
                                 const void* source) const {
    const Memory& m = memory_[buffer];
    throw ProgramError({{source_path(program_, source),
                         std::string(access) + " '" + program_.buffers[buffer].name + "' at index " +
                             std::to_string(i) + ", out of its " + std::to_string(m.data.size()) +
                             " elements, by the invocation with gid (" + std::to_string(inv.gid[0]) + ", " +
                             std::to_string(inv.gid[1]) + ", " + std::to_string(inv.gid[2]) +
                             ") (the GPU would have clamped or dropped it silently)"}});
  }

  Flow stmt(const RStmt& s, Invocation& inv) {
    if (steps_left_-- == 0)
      throw Error(ErrorKind::limit_exceeded,
                  "the reference interpreter stopped after " + std::to_string(budget_) +
                      " statements: the program loops without end, or runs far longer than a check should");
    switch (s.op) {
      case StmtOp::Let:
      case StmtOp::Assign: inv.locals[s.index] = eval(s.exprs[0], inv); return Flow::Next;
      case StmtOp::Array: inv.arrays[s.index].assign(s.source->count, 0u); return Flow::Next;
      case StmtOp::Store: {
        const uint64_t i = eval(s.exprs[0], inv);
        const uint64_t v = eval(s.exprs[1], inv);
        if (s.array) {
          array_element(s.index, s.exprs[0], i, inv, "a store to", s.source, s.source->name) = v;
          return Flow::Next;
        }
        if (Slot* slot = element(s.index, s.exprs[0], i, inv, "a store to", s.source); slot && inv.in_domain) {
          if (races_) races_->store(s.index, static_cast<size_t>(slot - memory_[s.index].data.data()), who(s.index, inv, s.source));
          *slot = stored_bits(program_.buffers[s.index].type, v);
        }
        return Flow::Next;
      }
      case StmtOp::If: return eval(s.exprs[0], inv) ? block(s.body, inv) : block(s.else_body, inv);
      case StmtOp::Loop: {
        const ScalarType t = s.type;
        const auto step = static_cast<uint32_t>(s.exprs.size() == 3 ? eval(s.exprs[2], inv) : 1u);
        const Op test = t == ScalarType::I32 && static_cast<int32_t>(step) < 0 ? Op::Gt : Op::Lt;
        for (inv.locals[s.index] = eval(s.exprs[0], inv);
             apply_binary(test, t, inv.locals[s.index], eval(s.exprs[1], inv));
             inv.locals[s.index] = loop_next(t, static_cast<uint32_t>(inv.locals[s.index]), step)) {
          const Flow f = block(s.body, inv);
          if (f == Flow::Break) break;
          if (f == Flow::Return) return f;
        }
        return Flow::Next;
      }
      case StmtOp::While:
        while (eval(s.exprs[0], inv)) {
          const Flow f = block(s.body, inv);
          if (f == Flow::Break) break;
          if (f == Flow::Return) return f;
        }
        return Flow::Next;
      case StmtOp::Break: return Flow::Break;
      case StmtOp::Continue: return Flow::Continue;
      case StmtOp::Return: return Flow::Return;
      case StmtOp::Barrier:
        if (fibers_) fibers_->barrier();
        ++(s.source->barrier == BarrierKind::Workgroup ? inv.workgroup_barriers : inv.storage_barriers);
        return Flow::Next;
      case StmtOp::Eval: eval(s.exprs[0], inv); return Flow::Next;
    }
    return Flow::Next;
  }

  uint32_t builtin(const RExpr& e, const Invocation& inv) const {
    const auto axis = static_cast<Axis>(e.imm);
    if (axis == Axis::Flat) return inv.lid_flat;
    const size_t a = static_cast<size_t>(axis);
    switch (e.op) {
      case Op::Gid: return inv.gid[a];
      case Op::Lid: return inv.lid[a];
      case Op::Wid: return inv.wid[a];
      default: return grid_[a];
    }
  }

  uint64_t eval(const RExpr& e, Invocation& inv) {
    switch (op_info(e.op).cls) {
      case OpClass::Literal: return e.imm;
      case OpClass::Var: return inv.locals[e.index];
      case OpClass::Len: return memory_[e.index].length;
      case OpClass::Builtin: return builtin(e, inv);
      case OpClass::Load: {
        const uint64_t i = eval(e.args[0], inv);
        if (e.array) return array_element(e.index, e.args[0], i, inv, "a load of", e.source, e.source->name);
        const Slot* slot = element(e.index, e.args[0], i, inv, "a load of", e.source);
        if (races_ && slot && inv.in_domain)
          races_->load(e.index, static_cast<size_t>(slot - memory_[e.index].data.data()), who(e.index, inv, e.source));
        return slot ? loaded_value(program_.buffers[e.index].type, *slot) : 0;
      }
      case OpClass::Binary: {
        const uint64_t a = eval(e.args[0], inv);
        // land and lor short-circuit, as WGSL's && and || do.
        if (e.op == Op::LAnd && !a) return 0;
        if (e.op == Op::LOr && a) return 1;
        return apply_binary(e.op, e.operand, a, eval(e.args[1], inv));
      }
      case OpClass::Unary: return apply_unary(e.op, e.operand, eval(e.args[0], inv));
      case OpClass::Ternary: {
        const uint64_t a = eval(e.args[0], inv);
        const uint64_t b = eval(e.args[1], inv);
        const uint64_t c = eval(e.args[2], inv);
        if (e.op == Op::Select) return a ? b : c;  // both evaluated
        return apply_ternary(e.op, e.operand, a, b, c);
      }
      case OpClass::Conversion: {
        const uint64_t a = eval(e.args[0], inv);
        return e.op == Op::Bitcast ? a : apply_cast(e.operand, e.type, a);
      }
      case OpClass::Atomic: return atomic(e, inv);
    }
    return 0;
  }

  // On u32 and i32 buffers only (validation).
  uint32_t atomic(const RExpr& e, Invocation& inv) {
    const auto op = static_cast<AtomicOp>(e.imm);
    const uint64_t i = eval(e.args[0], inv);
    std::optional<uint64_t> expected;
    if (op == AtomicOp::CompareExchange) expected = eval(e.args[1], inv);
    const auto operand = static_cast<uint32_t>(op == AtomicOp::Load ? 0 : eval(e.args.back(), inv));
    Slot* slot = element(e.index, e.args[0], i, inv, "an atomic on", e.source);
    if (!slot) return 0;
    const auto old = static_cast<uint32_t>(*slot);
    if (op == AtomicOp::Load || !inv.in_domain) return old;
    if (op == AtomicOp::CompareExchange) {
      if (old == *expected) *slot = operand;
      return old;
    }
    *slot = apply_atomic(op, program_.buffers[e.index].type, old, operand);
    return old;
  }

  const Program& program_;
  std::vector<Memory>& memory_;
  Dim3 grid_;
  WorkgroupFibers* fibers_;
  uint64_t steps_left_;
  uint64_t budget_;
  const RunChecks& checks_;
  RaceCheck* races_;

  Accessor who(size_t buffer, const Invocation& inv, const void* source) const {
    const bool workgroup = program_.buffers[buffer].access == Access::Workgroup;
    return Accessor{inv.flat, inv.group, workgroup ? inv.workgroup_barriers : inv.storage_barriers, inv.gid, source,
                    true};
  }
};

// The plan's memory before any of it is allocated: a --size of 2^32 - 1
// must be refused at once, not after zeroing 16 GiB.
void refuse_beyond_memory_bound(const Program& program, const DispatchPlan& plan) {
  uint64_t bytes = 0;
  // One slot per element, narrow ones included (element_memory.hpp).
  for (const auto& bp : plan.buffers) bytes += uint64_t{bp.elements} * sizeof(Slot);
  for (const auto& b : program.buffers)
    if (b.access == Access::Workgroup) bytes += uint64_t{b.count} * sizeof(Slot);
  if (bytes <= kMaxMemoryBytes) return;
  throw Error(ErrorKind::limit_exceeded,
              "the dispatch needs " + std::to_string(bytes) + " bytes of buffers; the reference interpreter holds at "
              "most " + std::to_string(kMaxMemoryBytes) + " (vyre::reference::kMaxMemoryBytes): give smaller sizes");
}

}  // namespace

Outputs run(const CheckedProgram& checked, const Inputs& inputs, const ShaderOptions& options,
            const std::optional<Dim3>& grid_launch, uint64_t step_budget) {
  return run(checked, inputs, options, grid_launch, RunChecks{}, step_budget);
}

Outputs run(const CheckedProgram& checked, const Inputs& inputs, const ShaderOptions& options,
            const std::optional<Dim3>& grid_launch, const RunChecks& checks, uint64_t step_budget) {
  const Program& program = checked.program();
  const DispatchPlan plan = plan_dispatch(checked, options, inputs, grid_launch);
  refuse_beyond_memory_bound(program, plan);

  // Memory, indexed like program.buffers.
  std::vector<Memory> memory(program.buffers.size());
  for (const auto& bp : plan.buffers) {
    const size_t i = static_cast<size_t>(bp.buffer - program.buffers.data());
    memory[i].length = bp.elements;
    memory[i].data.assign(bp.elements, 0);
    fill_slots(bp.buffer->type, bp.initial, memory[i].data);
    if (bp.device != nullptr)  // contents kept on a GPU: the interpreter works on a host copy
      fill_slots(bp.buffer->type, bp.device->read(), memory[i].data);
  }
  std::vector<size_t> workgroup_buffers;
  for (size_t i = 0; i < program.buffers.size(); ++i)
    if (program.buffers[i].access == Access::Workgroup) {
      workgroup_buffers.push_back(i);
      memory[i].length = program.buffers[i].count;
    }

  const std::vector<RStmt> body = Resolver(checked).block(program.body);
  const Dim3 wg = plan.workgroup_size;
  const Dim3 grid = plan.grid;
  const size_t per_group = size_t{wg[0]} * wg[1] * wg[2];

  std::optional<WorkgroupFibers> fibers;
  if (checked.has_barrier()) fibers.emplace();
  std::optional<RaceCheck> races;
  if (checks.races) {
    std::vector<uint32_t> lengths(program.buffers.size());
    std::vector<bool> atomic(program.buffers.size());
    for (size_t i = 0; i < program.buffers.size(); ++i) {
      lengths[i] = static_cast<uint32_t>(memory[i].data.size());
      atomic[i] = checked.atomic(static_cast<uint32_t>(i));
    }
    for (size_t i : workgroup_buffers) lengths[i] = program.buffers[i].count;
    races.emplace(program, lengths, atomic);
  }
  std::optional<std::mt19937_64> shuffle;
  if (checks.shuffle_seed) shuffle.emplace(*checks.shuffle_seed);
  std::vector<size_t> order(per_group);
  Machine machine(program, memory, grid, fibers ? &*fibers : nullptr, step_budget, checks, races ? &*races : nullptr);
  std::vector<Invocation> invocations(per_group);
  for (auto& inv : invocations) inv.locals.assign(checked.local_count(), 0);

  for (uint32_t gz = 0; gz < grid[2]; ++gz)
    for (uint32_t gy = 0; gy < grid[1]; ++gy)
      for (uint32_t gx = 0; gx < grid[0]; ++gx) {
        // Workgroup memory starts zeroed in every workgroup, as WebGPU guarantees.
        for (size_t i : workgroup_buffers) memory[i].data.assign(program.buffers[i].count, 0);
        if (races) races->start_workgroup();
        const uint64_t group = (uint64_t{gz} * grid[1] + gy) * grid[0] + gx;
        for (size_t flat = 0; flat < per_group; ++flat) {
          Invocation& inv = invocations[flat];
          inv.lid = {static_cast<uint32_t>(flat % wg[0]), static_cast<uint32_t>(flat / wg[0] % wg[1]),
                     static_cast<uint32_t>(flat / (size_t{wg[0]} * wg[1]))};
          inv.lid_flat = static_cast<uint32_t>(flat);
          inv.wid = {gx, gy, gz};
          for (size_t a = 0; a < 3; ++a) inv.gid[a] = inv.wid[a] * wg[a] + inv.lid[a];
          inv.in_domain = !plan.domain || (inv.gid[0] < (*plan.domain)[0] && inv.gid[1] < (*plan.domain)[1] &&
                                           inv.gid[2] < (*plan.domain)[2]);
          inv.group = group;
          inv.flat = group * per_group + flat;
          inv.workgroup_barriers = inv.storage_barriers = 0;
        }
        auto one = [&](size_t flat) { machine.block(body, invocations[flat]); };
        if (fibers) {
          fibers->run(per_group, one, shuffle ? &*shuffle : nullptr);
        } else {
          std::iota(order.begin(), order.end(), size_t{0});
          if (shuffle) std::shuffle(order.begin(), order.end(), *shuffle);
          for (size_t flat : order) one(flat);
        }
      }

  std::map<std::string, std::vector<uint8_t>> out;
  for (size_t i = 0; i < program.buffers.size(); ++i) {
    const Buffer& b = program.buffers[i];
    if (!b.output) continue;
    out[b.name] = slot_bytes(b.type, memory[i].data);
  }
  return Outputs(std::move(out));
}

}  // namespace vyre::reference
