// gpu::KeyTarget: the one rule for which device's cache entries the cache's
// tools (`vyre cache explain`, `warm`; vyre.cache.explain) name.
#include "gpu/adapter_selection.hpp"
#include "vyre/gpu.hpp"

namespace vyre::gpu {

KeyTarget KeyTarget::resolve(std::string_view fingerprint, const BackendOptions& local_options) {
  const BackendOptions settings = BackendOptions::from_environment();
  KeyTarget t;
  t.widen_ = settings.widen.value_or(kWidenByDefault);
  if (!fingerprint.empty()) {
    t.fingerprint_ = std::string(fingerprint);
  } else if (settings.fingerprint_override) {
    t.fingerprint_ = *settings.fingerprint_override;  // as a Backend takes it: whole
    t.is_override_ = true;
  } else {
    // The adapter's own fingerprint, read without opening a device: the same
    // keys as a Backend there (wgsl_target), and the driver writes nothing.
    t.fingerprint_ = chosen_adapter(local_options).fingerprint;
    t.widen_ = local_options.widen.value_or(t.widen_);  // as the Backend would take it
  }
  return t;
}

KeyTarget KeyTarget::of_backend(std::shared_ptr<const Backend> backend) {
  KeyTarget t;
  t.backend_ = std::move(backend);
  return t;
}

WgslTarget KeyTarget::of(const CheckedProgram& program, const ShaderOptions& requested) const {
  // The shader a first dispatch uses, as Backend::compile picks it
  // (docs/lowering.md, "Vector widening").
  const ShaderOptions options = compiled_options(program, requested, backend_ ? backend_->widens() : widen_);
  if (backend_) return backend_->wgsl_target(program, options);
  if (is_override_) return {options, aot::key_parts(program, fingerprint_, options)};
  return wgsl_target(program, fingerprint_, options);
}

std::optional<std::string> KeyTarget::device_fingerprint() const {
  if (backend_) return backend_->adapter().fingerprint;
  if (!is_override_ && is_adapter_fingerprint(fingerprint_)) return fingerprint_;
  return std::nullopt;
}

}  // namespace vyre::gpu
