// Reading one environment variable. Each layer reads its settings in one
// place (aot::CacheOptions::from_environment,
// gpu::BackendOptions::from_environment), through this.
#pragma once

#include <optional>
#include <string>

namespace vyre::sys {

// The variable's value; nullopt when it is unset or empty (an empty setting
// means "the default", as a shell's `VAR= cmd` intends).
std::optional<std::string> environment_value(const char* name);

}  // namespace vyre::sys
