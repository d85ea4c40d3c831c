#include "reference/workgroup_fibers.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

// The sanitized builds (docs/ci.md) are told of every switch of stacks:
// AddressSanitizer must know which stack is live (else it reports false
// positives on the fibers' stacks, and loses its fake stacks), and
// ThreadSanitizer keeps a context of its own per fiber.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VYRE_FIBERS_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define VYRE_FIBERS_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(VYRE_FIBERS_ASAN)
#define VYRE_FIBERS_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(VYRE_FIBERS_TSAN)
#define VYRE_FIBERS_TSAN 1
#endif
#ifdef VYRE_FIBERS_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef VYRE_FIBERS_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace vyre::reference {
namespace {
// makecontext passes only ints; the running scheduler is found through this.
thread_local WorkgroupFibers* t_running = nullptr;

// Before a switch to the stack [bottom, bottom + size) (the target's `tsan`
// context): `fake_stack` receives the leaving stack's fake frames, null when
// the leaving fiber has ended.
[[maybe_unused]] void leaving(void** fake_stack, const void* bottom, size_t size, void* tsan) {
#ifdef VYRE_FIBERS_ASAN
  __sanitizer_start_switch_fiber(fake_stack, bottom, size);
#endif
#ifdef VYRE_FIBERS_TSAN
  __tsan_switch_to_fiber(tsan, 0);
#endif
  (void)fake_stack, (void)bottom, (void)size, (void)tsan;
}

// After a switch, on the stack switched to: what `leaving` saved on it, and
// where the stack switched from is.
[[maybe_unused]] void arrived(void* fake_stack, const void** from_bottom, size_t* from_size) {
#ifdef VYRE_FIBERS_ASAN
  __sanitizer_finish_switch_fiber(fake_stack, from_bottom, from_size);
#endif
  (void)fake_stack, (void)from_bottom, (void)from_size;
}
}  // namespace

WorkgroupFibers::WorkgroupFibers(size_t stack_bytes) : stack_bytes_(stack_bytes) {}

WorkgroupFibers::~WorkgroupFibers() {
#ifdef VYRE_FIBERS_TSAN
  for (Fiber& f : fibers_)
    if (f.tsan) __tsan_destroy_fiber(f.tsan);
#endif
}

void WorkgroupFibers::entry() {
  WorkgroupFibers* self = t_running;
  arrived(nullptr, &self->scheduler_bottom_, &self->scheduler_size_);
  try {
    (*self->body_)(self->current_);
  } catch (...) {
    if (!self->error_) self->error_ = std::current_exception();
  }
  self->fibers_[self->current_].done = true;
  // Back to the scheduler for good (what returning to uc_link would do, but
  // without this function's exit, which a sanitizer would count on the
  // scheduler's stack after the switch).
  leaving(nullptr, self->scheduler_bottom_, self->scheduler_size_, self->scheduler_tsan_);
  setcontext(&self->scheduler_);
}

void WorkgroupFibers::run(size_t count, const std::function<void(size_t)>& body, std::mt19937_64* shuffle) {
  if (fibers_.size() < count) fibers_.resize(count);
  body_ = &body;
  error_ = nullptr;
  WorkgroupFibers* outer = t_running;
  t_running = this;
#ifdef VYRE_FIBERS_TSAN
  scheduler_tsan_ = __tsan_get_current_fiber();
#endif
  for (size_t i = 0; i < count; ++i) {
    Fiber& f = fibers_[i];
    if (!f.stack) f.stack.reset(new char[stack_bytes_]);  // not zeroed: pages are touched only as used
#ifdef VYRE_FIBERS_TSAN
    // A fresh context each run: an ended fiber's keeps the frame of entry(),
    // which never returns.
    if (f.tsan) __tsan_destroy_fiber(f.tsan);
    f.tsan = __tsan_create_fiber(0);
#endif
    f.done = false;
    if (getcontext(&f.context) != 0) throw std::runtime_error("getcontext failed");
    f.context.uc_stack.ss_sp = f.stack.get();
    f.context.uc_stack.ss_size = stack_bytes_;
    f.context.uc_link = &scheduler_;
    makecontext(&f.context, &WorkgroupFibers::entry, 0);
  }
  // Rounds: resume every live fiber once; each runs to its next barrier or to
  // its end. After a round, every live fiber is waiting at a barrier, so all
  // of them may pass it.
  size_t live = count;
  order_.resize(count);
  while (live > 0 && !error_) {
    live = 0;
    std::iota(order_.begin(), order_.end(), size_t{0});
    if (shuffle) std::shuffle(order_.begin(), order_.end(), *shuffle);
    for (size_t i : order_) {
      if (error_) break;
      if (fibers_[i].done) continue;
      current_ = i;
      void* fake_stack = nullptr;
      leaving(&fake_stack, fibers_[i].stack.get(), stack_bytes_, fibers_[i].tsan);
      swapcontext(&scheduler_, &fibers_[i].context);
      arrived(fake_stack, nullptr, nullptr);
      if (!fibers_[i].done) ++live;
    }
  }
  t_running = outer;
  if (error_) std::rethrow_exception(error_);
}

void WorkgroupFibers::barrier() {
  void* fake_stack = nullptr;
  leaving(&fake_stack, scheduler_bottom_, scheduler_size_, scheduler_tsan_);
  swapcontext(&fibers_[current_].context, &scheduler_);
  arrived(fake_stack, &scheduler_bottom_, &scheduler_size_);
}

}  // namespace vyre::reference
