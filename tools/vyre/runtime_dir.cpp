#include "runtime_dir.hpp"

#include <unistd.h>

#include <cstdlib>
#include <vector>

namespace vyre::cli {

HeadlessRuntimeDir::HeadlessRuntimeDir() {
  if (const char* v = std::getenv("XDG_RUNTIME_DIR"); v != nullptr && *v != '\0') return;
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp == '/' ? tmp : "/tmp") + "/vyre-runtime-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (::mkdtemp(name.data()) == nullptr) return;  // then the harmless line shows
  made_ = name.data();
  ::setenv("XDG_RUNTIME_DIR", made_.c_str(), 1);
}

HeadlessRuntimeDir::~HeadlessRuntimeDir() {
  if (made_.empty()) return;
  ::rmdir(made_.c_str());
}

}  // namespace vyre::cli
