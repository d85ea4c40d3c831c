// Helpers shared by the tests: temporary folders, running the CLI as a
// separate process, file I/O.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

// Defined in a build under ThreadSanitizer or AddressSanitizer: GCC says so
// by __SANITIZE_THREAD__ and __SANITIZE_ADDRESS__, clang (14) only through
// __has_feature.
#if defined(__SANITIZE_THREAD__)
#define VYRE_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define VYRE_TEST_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define VYRE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VYRE_TEST_ASAN 1
#endif
#endif

namespace vyre::test {

// In the sanitized builds the longest sweeps are cut: there they check the
// host code's memory and threads, which the shorter runs reach too, and the
// unsanitized suite runs them in full (docs/ci.md, "Sanitizers").
#if defined(VYRE_TEST_ASAN) || defined(VYRE_TEST_TSAN)
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif

// A fresh folder under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Sets (or, with nullptr, unsets) an environment variable and restores it
// when it goes out of scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value == nullptr)
      unsetenv(name);
    else
      setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

struct ProcessResult {
  int exit_code = -1;  // -1: did not exit normally (signal), see term_signal
  int term_signal = 0;
  std::string out;
  std::string err;
};

// Runs a program with arguments and extra environment (NAME -> value; an
// empty value unsets NAME), capturing stdout and stderr.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env = {},
                          const std::string& stdin_text = {});

// Runs the built `vyre` CLI.
ProcessResult run_vyre(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {});

std::string read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, const std::string& contents);

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A path inside the source tree, e.g. source_path("examples/xor.json").
std::filesystem::path source_path(const std::string& relative);

}  // namespace vyre::test
