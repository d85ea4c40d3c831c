#include "ir/limits.hpp"
#include "vyre/error.hpp"
#include "vyre/shader_options.hpp"

namespace vyre {

Dim3 effective_workgroup_size(const Program& program, const ShaderOptions& options) {
  if (!options.workgroup_override) return program.workgroup_size;  // validated with the program
  const Dim3& wg = *options.workgroup_override;
  const std::string text = std::to_string(wg[0]) + "," + std::to_string(wg[1]) + "," + std::to_string(wg[2]);
  if (wg[0] == 0 || wg[1] == 0 || wg[2] == 0)
    throw Error(ErrorKind::invalid_input,
                "workgroup override " + text + " is invalid: it has a zero component; each size must be at least 1");
  const uint64_t product = uint64_t{wg[0]} * wg[1] * wg[2];
  if (product > kMaxWorkgroupInvocations)
    throw Error(ErrorKind::invalid_input, "workgroup override " + text + " is invalid: " + std::to_string(product) +
                                              " invocations; the product of the sizes is at most " +
                                              std::to_string(kMaxWorkgroupInvocations));
  return wg;
}

std::string dim3_text(const Dim3& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

const std::map<std::string, uint32_t>& checked_fixed_lengths(const Program& program, const ShaderOptions& options) {
  for (const auto& [name, length] : options.fixed_lengths) {
    const Buffer* b = program.find_buffer(name);
    if (b == nullptr || b->access == Access::Workgroup || !b->runtime_sized())
      throw Error(ErrorKind::invalid_input,
                  "fixed length for '" + name + "': " +
                      (b == nullptr                          ? std::string("the program has no buffer of that name")
                       : b->access == Access::Workgroup      ? std::string("it is a workgroup buffer")
                                                             : "it has a fixed size (" + std::to_string(b->count) +
                                                                   " elements) already") +
                      "; only runtime-sized bound buffers take a fixed length");
  }
  return options.fixed_lengths;
}

}  // namespace vyre
