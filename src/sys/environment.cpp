#include "sys/environment.hpp"

#include <cstdlib>

namespace vyre::sys {

std::optional<std::string> environment_value(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

}  // namespace vyre::sys
