// The web target's rules: which programs a browser's WebGPU takes, and the
// shaders (with their cache keys) an exported module carries.
#include "gpu/fingerprint.hpp"
#include "vyre/error.hpp"
#include "vyre/lower.hpp"
#include "vyre/web.hpp"

namespace vyre::web {
namespace {

std::string label(const CheckedProgram& program) {
  return program.name().empty() ? std::string("the program") : "program '" + program.name() + "'";
}

}  // namespace

void check_web_program(const CheckedProgram& program, const ShaderOptions& requested) {
  if (uses_f64(program.program()))
    throw Error(ErrorKind::invalid_input,
                label(program) + " computes in f64, which the web target cannot run: WebGPU in browsers has no "
                                 "shader-f64 feature. Convert the f64 data to f32 and compute in f32 to take it to a "
                                 "page, or run it natively");
  if (requested.domain_guard)
    throw Error(ErrorKind::invalid_input,
                in_caller_terms("ShaderOptions::domain_guard", "--domain-guard", "domain_guard=True") +
                    " is not for the web target: the module carries the guarded shader and uses it for every "
                    "dispatch given a launch domain (dim); leave it out");
  if (requested.loop_guard)
    throw Error(ErrorKind::invalid_input,
                "ShaderOptions::loop_guard is a native driver's workaround (lavapipe's loop limit); the web target "
                "has none: leave it out");
  // Workgroup sizes, buffer counts and f16 depend on the device the page
  // opens; the module checks them against it (createKernel).
}

std::vector<WebShader> web_shaders(const CheckedProgram& program, const ShaderOptions& requested) {
  check_web_program(program, requested);
  // The key's fingerprint: the one every adapter's WGSL entries carry
  // (gpu::shaping_fingerprint), since the text depends on a device only
  // through ShaderOptions fields. The web target adds none, so its keys are
  // a native build's with the same options.
  const std::string fingerprint = gpu::shaping_fingerprint(gpu::AdapterInfo{});
  ShaderOptions base = requested;
  base.vector_width = 1;
  base.domain_guard = false;
  std::vector<WebShader> shaders;
  auto add = [&](std::string role, const ShaderOptions& options) {
    (void)effective_workgroup_size(program, options);  // refused here, before anything is written
    shaders.push_back({std::move(role), options, aot::key_parts(program, fingerprint, options)});
  };
  // The first: what a first dispatch without a domain uses, as a native
  // Pipeline compiles it (gpu::compiled_options with widening on).
  const ShaderOptions first = gpu::compiled_options(program, base, true);
  if (first.vector_width != 1) add("wide", first);
  add("base", base);
  ShaderOptions guard = base;
  guard.domain_guard = true;
  add("guard", guard);
  return shaders;
}

}  // namespace vyre::web
