// Keeps fork() from copying a lock that a cache's background thread holds.
//
// A child of fork() has only the thread that forked: a lock another thread
// held at that moment stays held in the child with nobody to release it.
// Each live Cache registers here; around every fork() (pthread_atfork) the
// forking thread waits until each cache's background thread is at rest and
// keeps it there, so that the child inherits no lock of the cache's, of
// SQLite's or of the logger's held by that thread.
#pragma once

namespace vyre::aot {

class __attribute__((visibility("hidden"))) ForkGuarded {
 public:
  // In the forking thread, before fork(): leave nothing of this object's
  // locked by another thread of this process, and keep it so.
  virtual void before_fork() = 0;
  // In the forking thread, after fork(), in the parent and in the child
  // (which has no other thread).
  virtual void after_fork(bool in_child) = 0;

  ForkGuarded() = default;
  virtual ~ForkGuarded() = default;
  ForkGuarded(const ForkGuarded&) = delete;
  ForkGuarded& operator=(const ForkGuarded&) = delete;
  ForkGuarded(ForkGuarded&&) = delete;
  ForkGuarded& operator=(ForkGuarded&&) = delete;
};

// From construction until destruction: an object is never called after
// unregister_for_fork() returns.
void register_for_fork(ForkGuarded* object);
void unregister_for_fork(ForkGuarded* object);

}  // namespace vyre::aot
