#include "gpu/kept_forever.hpp"

#include <mutex>
#include <vector>

namespace vyre::gpu {

void keep_forever(void* object) {
  if (object == nullptr) return;
  static std::mutex mutex;
  static auto* kept = new std::vector<void*>();  // never destroyed, as what it holds
  std::lock_guard lock(mutex);
  kept->push_back(object);
}

}  // namespace vyre::gpu
