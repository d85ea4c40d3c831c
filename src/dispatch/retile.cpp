#include "dispatch/retile.hpp"

#include <algorithm>

namespace vyre {
namespace {

// Finds the first expression or statement that ties the program to its
// workgroup. Programs are bounded in depth by validation, so recursion is safe.
struct WorkgroupUse {
  std::optional<std::string> found;

  void block(const std::vector<Stmt>& body) {
    for (const Stmt& s : body) {
      if (found) return;
      if (s.op == StmtOp::Barrier) {
        found = "it has a barrier";
        return;
      }
      for (const Expr& e : s.exprs) expr(e);
      block(s.body);
      block(s.else_body);
    }
  }

  void expr(const Expr& e) {
    if (found) return;
    if (e.op == Op::Lid || e.op == Op::Wid || e.op == Op::Nwg) {
      found = "it reads the built-in " + std::string(op_info(e.op).json);
      return;
    }
    for (const Expr& a : e.args) expr(a);
  }
};

// The device's own limit on workgroups per axis is checked when the
// dispatch is planned on it; this only keeps the count a u32.
constexpr uint64_t kMaxGroupsPerAxis = 0xffffffffull;

}  // namespace

std::optional<std::string> workgroup_dependence(const CheckedProgram& program) {
  for (const Buffer& b : program.program().buffers)
    if (b.access == Access::Workgroup) return "it declares the workgroup buffer '" + b.name + "'";
  WorkgroupUse use;
  use.block(program.program().body);
  return use.found;
}

std::optional<Dim3> retiled_grid(const Program& program, const DispatchPlan& plan, const Dim3& shape,
                                 const std::optional<Widening>& widening) {
  for (const uint32_t size : shape)
    if (size == 0) return std::nullopt;
  uint64_t invocations[3];
  for (size_t a = 0; a < 3; ++a) invocations[a] = uint64_t{plan.grid[a]} * plan.workgroup_size[a];

  // An element-wise program on one row: the invocations below L are the ones
  // with an effect, so any grid covering min(invocations, L) exactly, or
  // past L, runs the same work.
  if (widening && widening->index == FlatIndex::GidX && invocations[1] == 1 && invocations[2] == 1 &&
      shape[1] == 1 && shape[2] == 1) {
    const BufferPlan* guard = plan.plan_of(&program.buffers[widening->guard]);
    if (guard != nullptr && invocations[0] >= guard->elements) {
      const uint64_t length = std::max<uint64_t>(guard->elements, 1);
      const uint64_t groups = (length + shape[0] - 1) / shape[0];
      if (groups > kMaxGroupsPerAxis) return std::nullopt;
      return Dim3{static_cast<uint32_t>(groups), 1, 1};
    }
  }

  Dim3 grid{};
  for (size_t a = 0; a < 3; ++a) {
    if (invocations[a] % shape[a] != 0) return std::nullopt;
    const uint64_t groups = invocations[a] / shape[a];
    if (groups > kMaxGroupsPerAxis) return std::nullopt;
    grid[a] = static_cast<uint32_t>(groups);
  }
  return grid;
}

}  // namespace vyre
