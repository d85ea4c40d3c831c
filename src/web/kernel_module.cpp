// kernel.js: the program's facts and shaders as one constant, KERNEL,
// followed by the runtime (kernel_runtime.js) that plans and runs each
// dispatch with them.
#include "dispatch/default_grid.hpp"
#include "lower/widening.hpp"
#include "vyre/version.hpp"
#include "vyre/wire.hpp"
#include "web/web_files.hpp"

namespace vyre::web {
namespace {

const char* binding_kind(BindingKind kind) {
  switch (kind) {
    case BindingKind::StorageRead: return "read-only-storage";
    case BindingKind::StorageReadWrite: return "storage";
    case BindingKind::Uniform: return "uniform";
  }
  return "storage";
}

nlohmann::json shader_json(const LoweredShader& s) {
  nlohmann::json bindings = nlohmann::json::array();
  for (const ShaderBinding& b : s.interface.bindings)
    bindings.push_back({{"group", b.group}, {"binding", b.binding}, {"kind", binding_kind(b.kind)}, {"wide", b.wide}});
  const bool lengths = s.interface.uniform_slots() > 0;
  return {{"role", s.shader.role},
          {"key", s.shader.parts.key()},
          {"bindings", bindings},
          {"lengthSlots", s.interface.length_slots},
          {"domainGuard", s.interface.domain_guard},
          {"lengthsBytes", lengths ? s.interface.lengths_bytes() : 0},
          {"wgsl", s.wgsl}};
}

}  // namespace

std::string typed_array(ScalarType type) {
  switch (type) {
    case ScalarType::U32: return "Uint32Array";
    case ScalarType::I32: return "Int32Array";
    case ScalarType::F32: return "Float32Array";
    case ScalarType::Bool: case ScalarType::U8: return "Uint8Array";
    case ScalarType::I8: return "Int8Array";
    case ScalarType::U16: case ScalarType::F16: return "Uint16Array";
    case ScalarType::I16: return "Int16Array";
    case ScalarType::F64: return "Float64Array";
  }
  return "Uint32Array";
}

std::string kernel_module(const CheckedProgram& program, const std::vector<LoweredShader>& shaders) {
  const Program& p = program.program();
  const ShaderOptions& base = shaders.front().shader.options;
  nlohmann::json buffers = nlohmann::json::array();
  for (const Buffer* b : program.bound_buffers())
    buffers.push_back({{"name", b->name},
                       {"binding", *b->binding},
                       {"access", std::string(to_string(b->access))},
                       {"type", std::string(to_string(b->type))},
                       {"count", b->count},
                       {"output", b->output}});
  nlohmann::json workgroup_buffers = nlohmann::json::array();
  uint64_t workgroup_bytes = 0;
  for (const Buffer& b : p.buffers)
    if (b.access == Access::Workgroup) {
      workgroup_buffers.push_back(b.name);
      workgroup_bytes += uint64_t{b.count} * element_bytes(b.type);  // at least: the shader may pad them
    }
  const DefaultGridProof proof = prove_default_grid(program, base);
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& store : proof.store_checks) {
    nlohmann::json names = nlohmann::json::array();
    for (uint32_t index : store) names.push_back(p.buffers[index].name);
    checks.push_back(names);
  }
  nlohmann::json widening = nullptr;
  nlohmann::json shader_list = nlohmann::json::array();
  for (const LoweredShader& s : shaders) {
    shader_list.push_back(shader_json(s));
    if (s.shader.role != "wide") continue;
    const std::optional<Widening> w = find_widening(program, s.shader.options);
    if (!w) continue;
    nlohmann::json names = nlohmann::json::array();
    for (const Widening::Access& a : w->buffers) names.push_back(p.buffers[a.buffer].name);
    widening = {{"index", w->index == FlatIndex::GidX ? "x" : "xy"},
                {"guard", p.buffers[w->guard].name},
                {"buffers", names}};
  }
  const Dim3 workgroup = effective_workgroup_size(p, base);
  const nlohmann::json kernel = {
      {"name", p.name},
      {"digest", digest(p).hex()},
      {"target", kTargetName},
      {"vyre", kVersion},
      {"workgroup", workgroup},
      {"buffers", buffers},
      {"workgroupBuffers", workgroup_buffers},
      {"workgroupBytes", workgroup_bytes},
      {"f16", uses_f16(p)},
      {"domain", p.domain.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.domain)},
      {"domainShape", p.domain_shape},
      {"fixedLengths", checked_fixed_lengths(p, base)},
      {"defaultGrid", {{"proven", proof.proven}, {"whyNot", proof.why_not}, {"storeChecks", checks}}},
      {"widening", widening},
      {"shaders", shader_list},
  };
  std::string out;
  out += "// The vyre kernel '" + p.name + "' for WebGPU: an ES module written by `vyre export web` (vyre " +
         kVersion + ", target " + kTargetName + ").\n";
  out += "//\n//   import { createKernel } from \"./kernel.js\";\n";
  out += "//   const kernel = await createKernel(device);          // a GPUDevice\n";
  out += "//   const outputs = await kernel.dispatch({ /* typed arrays by buffer name */ }, { sizes, dim, grid });\n";
  out += "//   kernel.dispose();\n//\n// Types: kernel.d.ts. Rules and errors: vyre's docs/web.md.\n\n";
  out += "const KERNEL = " + kernel.dump(1) + ";\n\n";
  out += kKernelRuntime;
  return out;
}

}  // namespace vyre::web
