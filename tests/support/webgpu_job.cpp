#include "support/webgpu_job.hpp"

#include <algorithm>
#include <cstring>

#include "dispatch/plan.hpp"
#include "vyre/lower.hpp"

namespace vyre::test {

WebGpuJob make_webgpu_job(const std::string& name, const CheckedProgram& program, const Inputs& inputs,
                          const ShaderOptions& options, const std::optional<Dim3>& grid) {
  WebGpuJob job;
  job.name = name;
  ShaderSpec spec = lower(program, options);
  job.wgsl = std::move(spec.wgsl);
  const ShaderInterface& iface = spec.interface;
  const DispatchPlan plan = plan_dispatch(program, options, inputs, grid);
  job.workgroup_size = iface.workgroup_size;
  job.grid = plan.grid;
  for (const ShaderBinding& sb : iface.bindings) {
    auto it = std::find_if(plan.buffers.begin(), plan.buffers.end(),
                           [&](const BufferPlan& bp) { return bp.buffer->name == sb.buffer; });
    WebGpuBinding b;
    b.group = sb.group;
    b.binding = sb.binding;
    b.type = sb.kind == BindingKind::StorageRead ? "read-only-storage" : sb.kind == BindingKind::Uniform ? "uniform" : "storage";
    const uint64_t bytes = std::max<uint64_t>(sb.binding_bytes(it->elements), 4);
    b.words.assign(bytes / 4, 0);
    if (!it->initial.empty()) std::memcpy(b.words.data(), it->initial.data(), it->initial.size());
    if (sb.output) {
      b.output = sb.buffer;
      // Narrow elements travel packed: the page reads back whole words.
      b.output_bytes = uint64_t{it->elements} * element_bytes(it->buffer->type);
      b.output_words = static_cast<uint32_t>((b.output_bytes + 3) / 4);
    }
    job.bindings.push_back(std::move(b));
  }
  if (!iface.length_slots.empty()) {
    WebGpuBinding lengths;
    lengths.group = ShaderInterface::kLengthsGroup;
    lengths.binding = ShaderInterface::kLengthsBinding;
    lengths.type = "uniform";
    lengths.words.assign(iface.lengths_bytes() / 4, 0);
    for (size_t slot = 0; slot < iface.length_slots.size(); ++slot)
      for (const auto& bp : plan.buffers)
        if (bp.buffer->name == iface.length_slots[slot]) lengths.words[slot] = bp.elements;
    job.bindings.push_back(std::move(lengths));
  }
  return job;
}

nlohmann::json to_json(const std::vector<WebGpuJob>& jobs) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& j : jobs) {
    nlohmann::json bindings = nlohmann::json::array();
    for (const auto& b : j.bindings)
      bindings.push_back({{"group", b.group},
                          {"binding", b.binding},
                          {"type", b.type},
                          {"words", b.words},
                          {"output", b.output},
                          {"output_words", b.output_words}});
    out.push_back({{"name", j.name},
                   {"wgsl", j.wgsl},
                   {"workgroup_size", j.workgroup_size},
                   {"grid", j.grid},
                   {"bindings", bindings}});
  }
  return out;
}

}  // namespace vyre::test
