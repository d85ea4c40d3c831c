// Runs the invocations of one workgroup so that barriers behave as on a GPU:
// each invocation is a fiber (its own stack, switched with swapcontext), runs
// until it reaches a barrier or ends, and no invocation passes a barrier
// before every invocation still running has reached it.
#pragma once

#include <ucontext.h>

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <random>
#include <vector>

namespace vyre::reference {

class WorkgroupFibers {
 public:
  explicit WorkgroupFibers(size_t stack_bytes = size_t{256} * 1024);
  ~WorkgroupFibers();
  WorkgroupFibers(const WorkgroupFibers&) = delete;
  WorkgroupFibers& operator=(const WorkgroupFibers&) = delete;

  // Runs body(i) for i in [0, count) as fibers until all end; rethrows the
  // first exception a fiber threw. With `shuffle`, the fibers are resumed
  // in an order drawn anew for every stretch between barriers; else in
  // index order.
  void run(size_t count, const std::function<void(size_t)>& body, std::mt19937_64* shuffle = nullptr);

  // Called from inside body(): waits at a barrier.
  void barrier();

 private:
  struct Fiber {
    ucontext_t context{};
    std::unique_ptr<char[]> stack;
    bool done = false;
    void* tsan = nullptr;  // its ThreadSanitizer context, in that build
  };
  static void entry();

  size_t stack_bytes_;
  std::vector<Fiber> fibers_;
  ucontext_t scheduler_{};
  // The scheduler's stack and ThreadSanitizer context, for the sanitized
  // builds (workgroup_fibers.cpp).
  const void* scheduler_bottom_ = nullptr;
  size_t scheduler_size_ = 0;
  void* scheduler_tsan_ = nullptr;
  size_t current_ = 0;
  std::vector<size_t> order_;
  const std::function<void(size_t)>* body_ = nullptr;
  std::exception_ptr error_;
};

}  // namespace vyre::reference
