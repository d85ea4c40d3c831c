// The process's one set of fork handlers and the objects they guard.
#include "aot/fork_guard.hpp"

#include <pthread.h>

#include <algorithm>
#include <mutex>
#include <vector>

namespace vyre::aot {
namespace {

struct Registry {
  std::mutex mutex;  // held from before fork() until after it, in both processes
  std::vector<ForkGuarded*> objects;
};

// Never destroyed: a fork() during static destruction still finds it.
Registry& registry() {
  static auto* r = new Registry;
  return *r;
}

void prepare() {
  Registry& r = registry();
  r.mutex.lock();
  for (ForkGuarded* object : r.objects) object->before_fork();
}

void resume(bool in_child) {
  Registry& r = registry();
  // Reverse order: each object's locks were taken after those of the one before it.
  for (auto it = r.objects.rbegin(); it != r.objects.rend(); ++it) (*it)->after_fork(in_child);
  r.mutex.unlock();
}

void resume_parent() { resume(false); }
void resume_child() { resume(true); }

}  // namespace

void register_for_fork(ForkGuarded* object) {
  static std::once_flag installed;
  std::call_once(installed, [] { pthread_atfork(prepare, resume_parent, resume_child); });
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.objects.push_back(object);
}

void unregister_for_fork(ForkGuarded* object) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.objects.erase(std::remove(r.objects.begin(), r.objects.end(), object), r.objects.end());
}

}  // namespace vyre::aot
