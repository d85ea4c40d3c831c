#include "sys/environment_publish.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string_view>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it in no header

namespace vyre::sys {
namespace {

std::string_view name_of(const char* entry) {
  const char* eq = std::strchr(entry, '=');
  return eq ? std::string_view(entry, static_cast<size_t>(eq - entry)) : std::string_view(entry);
}

bool changed(std::string_view name, const std::vector<EnvironmentChange>& changes) {
  for (const auto& c : changes)
    if (c.name == name) return true;
  return false;
}

// Every array and string ever published, kept reachable for the life of
// the process: a reader may hold any of them, and a later setenv (which
// copies the array) leaves nothing else pointing at ours, so a leak checker
// (LeakSanitizer) must still find them here rather than report them.
struct Published {
  std::vector<std::unique_ptr<char*[]>> arrays;
  std::vector<std::unique_ptr<char[]>> strings;
};

Published& published() {
  static auto* kept = new Published();  // never destroyed, on purpose
  return *kept;
}

char* lasting(const std::string& text) {
  auto copy = std::make_unique<char[]>(text.size() + 1);
  std::memcpy(copy.get(), text.c_str(), text.size() + 1);
  published().strings.push_back(std::move(copy));
  return published().strings.back().get();
}

}  // namespace

void publish_environment(const std::vector<EnvironmentChange>& changes) {
  static std::mutex mutex;  // vyre's own writers, one at a time
  std::lock_guard lock(mutex);
  char** current = __atomic_load_n(&environ, __ATOMIC_ACQUIRE);
  size_t kept = 0;
  for (char** e = current; e != nullptr && *e != nullptr; ++e) ++kept;
  // Never freed: a reader may hold the old array or this one at any time.
  published().arrays.push_back(std::make_unique<char*[]>(kept + changes.size() + 1));
  char** next = published().arrays.back().get();
  size_t n = 0;
  for (char** e = current; e != nullptr && *e != nullptr; ++e)
    if (!changed(name_of(*e), changes)) next[n++] = *e;
  for (size_t i = 0; i < changes.size(); ++i) {
    const auto& c = changes[i];
    const bool overridden = std::any_of(changes.begin() + static_cast<std::ptrdiff_t>(i) + 1, changes.end(),
                                        [&c](const EnvironmentChange& later) { return later.name == c.name; });
    if (c.value && !overridden) next[n++] = lasting(c.name + "=" + *c.value);
  }
  next[n] = nullptr;
  __atomic_store_n(&environ, next, __ATOMIC_RELEASE);
}

}  // namespace vyre::sys
