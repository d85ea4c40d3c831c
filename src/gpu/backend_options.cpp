// BackendOptions::from_environment: the one place the GPU layer reads its
// settings from the environment (docs/configuration.md).
#include "sys/environment.hpp"
#include "sys/units.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"

namespace vyre::gpu {

BackendOptions BackendOptions::from_environment() {
  BackendOptions options;
  options.backend = sys::environment_value("WGPU_BACKEND");
  options.adapter = sys::environment_value("VYRE_WGPU_ADAPTER");
  options.fingerprint_override = sys::environment_value("VYRE_BACKEND_FINGERPRINT_OVERRIDE");
  // "0" (like unset) means no timeout.
  if (const auto timeout = sys::environment_value("VYRE_DISPATCH_TIMEOUT"); timeout && *timeout != "0") {
    const sys::Result<std::chrono::seconds> parsed = sys::parse_duration(*timeout);
    if (!parsed.ok())
      throw Error(ErrorKind::invalid_input, "VYRE_DISPATCH_TIMEOUT='" + *timeout + "': " + parsed.failure().message);
    if (parsed->count() > 0) options.dispatch_timeout = *parsed;
  }
  if (const auto widen = sys::environment_value("VYRE_WIDEN")) {
    if (*widen != "0" && *widen != "1")
      throw Error(ErrorKind::invalid_input, "VYRE_WIDEN='" + *widen + "': 0 (off) or 1 (on)");
    options.widen = *widen == "1";
  }
  return options;
}

namespace {

unsigned tune_count(const char* name, unsigned fallback, unsigned least) {
  const auto text = sys::environment_value(name);
  if (!text) return fallback;
  const sys::Result<uint64_t> parsed = sys::parse_count(*text);
  if (!parsed.ok() || *parsed < least || *parsed > 10'000)
    throw Error(ErrorKind::invalid_input, std::string(name) + "='" + *text + "': a whole number from " +
                                              std::to_string(least) + " to 10000");
  return static_cast<unsigned>(*parsed);
}

}  // namespace

TuneOptions TuneOptions::from_environment() {
  TuneOptions options;
  options.warmup = tune_count("VYRE_TUNE_WARMUP", options.warmup, 0);
  options.repetitions = tune_count("VYRE_TUNE_REPETITIONS", options.repetitions, 1);
  return options;
}

}  // namespace vyre::gpu
