// Keeps libwayland quiet on a headless machine: with no XDG_RUNTIME_DIR,
// Vulkan's adapter enumeration makes it print an error line on stderr. The
// command sets the variable, when unset, to an empty private directory of
// its own for its lifetime (children such as `vyre demo`'s inherit it), so
// that nothing, not even the library, redirects the process's stderr.
#pragma once

#include <string>

namespace vyre::cli {

class HeadlessRuntimeDir {
 public:
  HeadlessRuntimeDir();   // before any Backend is made
  ~HeadlessRuntimeDir();  // removes the directory it made, if any
  HeadlessRuntimeDir(const HeadlessRuntimeDir&) = delete;
  HeadlessRuntimeDir& operator=(const HeadlessRuntimeDir&) = delete;

 private:
  std::string made_;
};

}  // namespace vyre::cli
