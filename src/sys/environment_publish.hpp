// Changing the process environment while other threads may read it.
//
// setenv is unsafe in a process with threads: glibc's setenv may realloc
// the environment array (and free the old one) while another thread's
// getenv walks it. A Python process has threads before vyre loads (NumPy's
// BLAS pool starts at `import numpy`), so the driver-cache placement writes
// its variables through this instead: it builds a new array, publishes it
// with one atomic pointer store, and frees neither the old array nor any
// string, so a concurrent reader sees the old environment or the new one,
// both valid for the life of the process.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace vyre::sys {

struct EnvironmentChange {
  std::string name;
  std::optional<std::string> value;  // nullopt: unset
};

// Applies every change in one publication; of two changes to one name, the
// later wins. Concurrent readers are safe; a
// concurrent writer (setenv in another thread at the same instant) is not
// (POSIX makes that undefined in any case), so call it where writers are
// serialized: the `vyre` command's start, or holding Python's GIL, under
// which every Python-level environment write happens.
void publish_environment(const std::vector<EnvironmentChange>& changes);

}  // namespace vyre::sys
