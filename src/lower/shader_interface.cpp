#include <algorithm>
#include <functional>

#include "ir/limits.hpp"
#include "lower/effective_config.hpp"
#include "vyre/error.hpp"
#include "vyre/lower.hpp"
#include "vyre/validate.hpp"

namespace vyre {

namespace lower {

Dim3 effective_workgroup_size(const Program& program, const DispatchConfig& config) {
  if (!config.workgroup_override) return program.workgroup_size;
  const Dim3& wg = *config.workgroup_override;
  const uint64_t product = uint64_t{wg[0]} * wg[1] * wg[2];
  if (product == 0 || product > kMaxWorkgroupInvocations)
    throw Error(ErrorKind::invalid_input, "workgroup override " + std::to_string(wg[0]) + "," + std::to_string(wg[1]) +
                                              "," + std::to_string(wg[2]) + " is invalid: each size must be positive and " +
                                              "the product at most " + std::to_string(kMaxWorkgroupInvocations));
  return wg;
}

namespace {
void collect_len(const Expr& e, std::vector<std::string>& names) {
  if (e.op == Op::Len) names.push_back(e.name);
  for (const auto& a : e.args) collect_len(a, names);
}
void collect_len(const std::vector<Stmt>& body, std::vector<std::string>& names) {
  for (const auto& s : body) {
    for (const auto& e : s.exprs) collect_len(e, names);
    collect_len(s.body, names);
    collect_len(s.else_body, names);
  }
}
}  // namespace

std::vector<const Buffer*> length_slot_buffers(const Program& program) {
  std::vector<std::string> used;
  collect_len(program.body, used);
  std::vector<const Buffer*> out;
  for (const Buffer* b : canonical_buffer_order(program)) {
    if (b->access == Access::Workgroup || !b->runtime_sized()) continue;
    if (std::find(used.begin(), used.end(), b->name) != used.end()) out.push_back(b);
  }
  return out;
}

}  // namespace lower

uint64_t ShaderBinding::binding_bytes(uint64_t elements) const {
  if (kind == BindingKind::Uniform) return (elements + 3) / 4 * 16;
  return elements * 4;
}

uint64_t ShaderInterface::lengths_bytes() const { return (length_slots.size() + 3) / 4 * 16; }

ShaderInterface shader_interface(const Program& program, const DispatchConfig& config) {
  require_valid(program);
  ShaderInterface iface;
  iface.workgroup_size = lower::effective_workgroup_size(program, config);
  for (const Buffer* b : canonical_buffer_order(program)) {
    if (b->access == Access::Workgroup) continue;
    ShaderBinding sb;
    sb.buffer = b->name;
    sb.group = 0;
    sb.binding = *b->binding;
    sb.kind = b->access == Access::Read      ? BindingKind::StorageRead
              : b->access == Access::Uniform ? BindingKind::Uniform
                                             : BindingKind::StorageReadWrite;
    sb.type = b->type;
    sb.count = b->count;
    sb.output = b->output;
    sb.atomic = buffer_is_atomic(program, b->name);
    iface.bindings.push_back(std::move(sb));
  }
  for (const Buffer* b : lower::length_slot_buffers(program)) iface.length_slots.push_back(b->name);
  return iface;
}

}  // namespace vyre
