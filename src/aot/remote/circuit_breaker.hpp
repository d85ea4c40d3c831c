// A circuit breaker for the remote tier: after `threshold` failures in a row
// the remote is not asked for `cooldown` (lookups go on without it, at no
// cost); then one request is let through, and its success closes the
// breaker again. So a dead or paused Redis costs each dispatch at most one
// timeout, a few times, and then nothing until it is back.
#pragma once

#include <chrono>
#include <mutex>

namespace vyre::aot {

class CircuitBreaker {
 public:
  enum class Change { none, opened, closed };

  CircuitBreaker(unsigned threshold, std::chrono::milliseconds cooldown) : threshold_(threshold), cooldown_(cooldown) {}

  // Whether to ask the remote now: closed, or open with the cooldown over
  // (one trial at a time).
  bool allow();
  // What the request's outcome changed, so that the caller logs each change
  // once.
  Change success();
  Change failure();
  bool open() const;

 private:
  using Clock = std::chrono::steady_clock;
  const unsigned threshold_;
  const std::chrono::milliseconds cooldown_;
  mutable std::mutex mutex_;
  unsigned failures_ = 0;
  bool open_ = false;
  bool trial_ = false;
  Clock::time_point opened_at_{};
};

}  // namespace vyre::aot
