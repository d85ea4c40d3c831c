#include "vyre/lower.hpp"

namespace vyre {

uint64_t ShaderBinding::binding_bytes(uint64_t elements) const {
  if (kind == BindingKind::Uniform) return (elements + 3) / 4 * 16;
  return elements * 4;
}

uint64_t ShaderInterface::lengths_bytes() const { return (length_slots.size() + 3) / 4 * 16; }

ShaderInterface shader_interface(const CheckedProgram& program, const ShaderOptions& options) {
  ShaderInterface iface;
  iface.workgroup_size = effective_workgroup_size(program, options);
  iface.loop_guard = options.loop_guard && program.has_loop();
  const auto& bound = program.bound_buffers();
  for (const Buffer* b : bound) {
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
    sb.atomic = program.atomic(*b);
    iface.bindings.push_back(std::move(sb));
  }
  for (const Buffer* b : program.length_buffers()) {
    iface.length_slots.push_back(b->name);
    for (uint32_t i = 0; i < bound.size(); ++i)
      if (bound[i] == b) iface.length_bindings.push_back(i);
  }
  return iface;
}

}  // namespace vyre
