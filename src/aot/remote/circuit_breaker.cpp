#include "aot/remote/circuit_breaker.hpp"

namespace vyre::aot {

bool CircuitBreaker::allow() {
  std::lock_guard lock(mutex_);
  if (!open_) return true;
  if (trial_ || Clock::now() - opened_at_ < cooldown_) return false;
  trial_ = true;
  return true;
}

CircuitBreaker::Change CircuitBreaker::success() {
  std::lock_guard lock(mutex_);
  failures_ = 0;
  trial_ = false;
  if (!open_) return Change::none;
  open_ = false;
  return Change::closed;
}

CircuitBreaker::Change CircuitBreaker::failure() {
  std::lock_guard lock(mutex_);
  ++failures_;
  if (open_) {
    // The trial failed: another cooldown.
    trial_ = false;
    opened_at_ = Clock::now();
    return Change::none;
  }
  if (failures_ < threshold_) return Change::none;
  open_ = true;
  trial_ = false;
  opened_at_ = Clock::now();
  return Change::opened;
}

bool CircuitBreaker::open() const {
  std::lock_guard lock(mutex_);
  return open_;
}

}  // namespace vyre::aot
