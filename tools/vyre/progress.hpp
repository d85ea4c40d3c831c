// A one-line progress bar on stderr, drawn only when stderr is a terminal
// (logs and pipes get no control characters).
#pragma once

#include <cstddef>
#include <string>

namespace vyre::cli {

class ProgressBar {
 public:
  explicit ProgressBar(size_t total);
  ~ProgressBar();
  // Shows `done` of `total`, with a label for the item at hand.
  void update(size_t done, const std::string& label);
  // Clears the line, so that what is printed next starts clean.
  void clear();
  bool enabled() const { return enabled_; }

 private:
  size_t total_;
  bool enabled_;
  bool drawn_ = false;
};

}  // namespace vyre::cli
