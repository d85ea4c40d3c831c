#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace vyre::cli {

ProgressBar::ProgressBar(size_t total) : total_(total), enabled_(::isatty(STDERR_FILENO) == 1) {}

ProgressBar::~ProgressBar() { clear(); }

void ProgressBar::update(size_t done, const std::string& label) {
  if (!enabled_ || total_ == 0) return;
  constexpr size_t kWidth = 30;
  const size_t filled = done * kWidth / total_;
  std::string bar(filled, '#');
  bar.append(kWidth - filled, '.');
  std::string shown = label.size() > 40 ? label.substr(0, 37) + "..." : label;
  // A progress bar on a terminal: if stderr cannot take it, nothing else depends on it.
  (void)std::fprintf(stderr, "\r\033[2K[%s] %zu/%zu %s", bar.c_str(), done, total_, shown.c_str());
  (void)std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::clear() {
  if (!drawn_) return;
  (void)std::fprintf(stderr, "\r\033[2K");
  (void)std::fflush(stderr);
  drawn_ = false;
}

}  // namespace vyre::cli
