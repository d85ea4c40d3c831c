#include "lower/widening.hpp"
#include "vyre/error.hpp"
#include "vyre/lower.hpp"

namespace vyre {

uint64_t ShaderBinding::binding_bytes(uint64_t elements) const {
  if (kind == BindingKind::Uniform) return (elements + 3) / 4 * 16;
  // Narrow and bool elements are packed into the words of an array<u32>.
  return (elements * element_bytes(type) + 3) / 4 * 4;
}

uint64_t ShaderInterface::lengths_bytes() const { return (uniform_slots() + 3) / 4 * 16; }

ShaderInterface shader_interface(const CheckedProgram& program, const ShaderOptions& options) {
  ShaderInterface iface;
  iface.workgroup_size = effective_workgroup_size(program, options);
  iface.loop_guard = options.loop_guard && program.has_loop();
  iface.domain_guard = options.domain_guard;
  if (options.domain_guard && options.vector_width != 1)
    throw Error(ErrorKind::invalid_input, "a shader with the launch-domain guard is not widened: vector width 1");
  std::optional<Widening> widening;
  if (options.vector_width != 1) {
    if (options.vector_width != kWideWidth)
      throw Error(ErrorKind::invalid_input, "vector width " + std::to_string(options.vector_width) +
                                                " is not supported: it is 1 or " + std::to_string(kWideWidth));
    std::string why;
    widening = find_widening(program, options, &why);
    if (!widening)
      throw Error(ErrorKind::invalid_input, "program '" + program.name() + "' cannot be widened: " + why);
    iface.vector_width = kWideWidth;
  }
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
    sb.wide = widening && widening->find(static_cast<uint32_t>(b - program.program().buffers.data())) != nullptr;
    iface.bindings.push_back(std::move(sb));
  }
  for (const Buffer* b : program.length_buffers()) {
    iface.length_slots.push_back(b->name);
    for (uint32_t i = 0; i < bound.size(); ++i)
      if (bound[i] == b) iface.length_bindings.push_back(i);
  }
  return iface;
}

bool widenable(const CheckedProgram& program, const ShaderOptions& options, std::string* why) {
  ShaderOptions scalar = options;
  scalar.vector_width = 1;
  return find_widening(program, scalar, why).has_value();
}

}  // namespace vyre
