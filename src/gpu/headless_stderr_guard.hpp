// While wgpu-native's Vulkan backend enumerates adapters it asks libwayland
// for a display, and on a headless machine (no XDG_RUNTIME_DIR) libwayland
// prints "error: XDG_RUNTIME_DIR is invalid or not set in the environment."
// straight to stderr, twice per enumeration. For a compute library on a
// server that is noise on every run, so on such a machine stderr points at
// /dev/null for the length of the enumeration and is then restored.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

namespace vyre::gpu {

class HeadlessStderrGuard {
 public:
  HeadlessStderrGuard() {
    if (std::getenv("XDG_RUNTIME_DIR") != nullptr) return;
    const int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null_fd < 0) return;
    saved_ = dup(STDERR_FILENO);
    if (saved_ >= 0) dup2(null_fd, STDERR_FILENO);
    close(null_fd);
  }
  ~HeadlessStderrGuard() {
    if (saved_ < 0) return;
    dup2(saved_, STDERR_FILENO);
    close(saved_);
  }
  HeadlessStderrGuard(const HeadlessStderrGuard&) = delete;
  HeadlessStderrGuard& operator=(const HeadlessStderrGuard&) = delete;

 private:
  int saved_ = -1;
};

}  // namespace vyre::gpu
