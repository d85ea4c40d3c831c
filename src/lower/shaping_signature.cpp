#include "lower/approximate_forms.hpp"
#include "vyre/lower.hpp"

namespace vyre {

std::string shaping_signature(const CheckedProgram& program, const ShaderOptions& options) {
  std::string out;
  auto add = [&out](const std::string& part) { out += (out.empty() ? "" : ";") + part; };
  const auto& fixed = checked_fixed_lengths(program, options);
  // The override shapes the text only when it differs from the program's own size.
  const Dim3 wg = effective_workgroup_size(program, options);
  if (wg != program.program().workgroup_size)
    add("workgroup=" + std::to_string(wg[0]) + "," + std::to_string(wg[1]) + "," + std::to_string(wg[2]));
  // A ULP budget shapes the text through the forms it chooses for the
  // program's operators: named are those forms, not the budget, so budgets
  // that choose the same forms share the entry, and one choosing none
  // leaves the key as without a budget.
  if (const std::string forms = lowering::chosen_forms_text(program, options); !forms.empty())
    add("approximate=" + forms);
  // The device feature an f16 or f64 program needs (format version 4);
  // every other program's signature, and key, is as before. Each carries
  // the revision of how its type is written (f16's 2: conversions to f16
  // rounded on the bits; f64's 2: round, trunc and ceil keep a zero's
  // sign), so that a change reaches that type's programs' keys alone.
  if (uses_f16(program.program())) add("shader-f16=2");
  if (uses_f64(program.program())) add("shader-f64=2");
  if (options.loop_guard && program.has_loop()) add("loop_guard");
  if (options.domain_guard) add("domain_guard");
  if (options.vector_width != 1) {
    add("vector_width=" + std::to_string(options.vector_width));
    return out;  // a widened shader is written without the passes (lower())
  }
  // With the passes on (the default) the signature says nothing of them;
  // off, it does even where they would have changed nothing.
  if (!options.passes) add("passes=off");
  // A fixed length changes the text exactly when the program reads that len.
  for (const Buffer* b : program.length_buffers())
    if (auto it = fixed.find(b->name); it != fixed.end()) add("len(" + b->name + ")=" + std::to_string(it->second));
  return out;
}

}  // namespace vyre
