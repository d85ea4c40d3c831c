#include "vyre/lower.hpp"

namespace vyre {

std::string shaping_signature(const CheckedProgram& program, const ShaderOptions& options) {
  std::string out;
  // The override shapes the text only when it differs from the program's own size.
  const Dim3 wg = effective_workgroup_size(program, options);
  if (wg != program.program().workgroup_size)
    out += "workgroup=" + std::to_string(wg[0]) + "," + std::to_string(wg[1]) + "," + std::to_string(wg[2]);
  // ulp_budget: this lowering has no approximate forms yet, so a budget never
  // changes the text and is left out (docs/lowering.md).
  if (options.loop_guard && program.has_loop()) out += std::string(out.empty() ? "" : ";") + "loop_guard";
  if (options.vector_width != 1)
    out += std::string(out.empty() ? "" : ";") + "vector_width=" + std::to_string(options.vector_width);
  return out;
}

}  // namespace vyre
