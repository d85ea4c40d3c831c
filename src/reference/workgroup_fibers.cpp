#include "reference/workgroup_fibers.hpp"

#include <stdexcept>

namespace vyre::reference {
namespace {
// makecontext passes only ints; the running scheduler is found through this.
thread_local WorkgroupFibers* t_running = nullptr;
}  // namespace

WorkgroupFibers::WorkgroupFibers(size_t stack_bytes) : stack_bytes_(stack_bytes) {}
WorkgroupFibers::~WorkgroupFibers() = default;

void WorkgroupFibers::entry() {
  WorkgroupFibers* self = t_running;
  try {
    (*self->body_)(self->current_);
  } catch (...) {
    if (!self->error_) self->error_ = std::current_exception();
  }
  self->fibers_[self->current_].done = true;
  // Returning resumes uc_link, the scheduler.
}

void WorkgroupFibers::run(size_t count, const std::function<void(size_t)>& body) {
  if (fibers_.size() < count) fibers_.resize(count);
  body_ = &body;
  error_ = nullptr;
  WorkgroupFibers* outer = t_running;
  t_running = this;
  for (size_t i = 0; i < count; ++i) {
    Fiber& f = fibers_[i];
    if (!f.stack) f.stack.reset(new char[stack_bytes_]);  // not zeroed: pages are touched only as used
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
  while (live > 0 && !error_) {
    live = 0;
    for (size_t i = 0; i < count && !error_; ++i) {
      if (fibers_[i].done) continue;
      current_ = i;
      swapcontext(&scheduler_, &fibers_[i].context);
      if (!fibers_[i].done) ++live;
    }
  }
  t_running = outer;
  if (error_) std::rethrow_exception(error_);
}

void WorkgroupFibers::barrier() { swapcontext(&fibers_[current_].context, &scheduler_); }

}  // namespace vyre::reference
