// naga, the WGSL front end of wgpu-native, as a checker: one device for the
// process (opening one costs far more than an input), and shader module
// creation only, no pipeline, so that lavapipe's code generation stays out
// of the fuzzing loop.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace vyre::fuzz {

// naga's complaint about `wgsl`, or nothing when it accepts the text.
std::optional<std::string> shader_module_error(std::string_view wgsl);

}  // namespace vyre::fuzz
