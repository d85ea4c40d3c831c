// What the remote tier's and the signatures' tests share: a "machine" (a
// cache directory of its own and a remote), a lookup of a synthetic program
// that checks the text it gets, and the Redis key of a program's entry.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "support/aot_fixtures.hpp"
#include "vyre/aot.hpp"

namespace vyre::test {

// Short timeouts and cooldown, so that fault tests stay quick.
inline aot::CacheOptions remote_machine(const std::filesystem::path& dir, const std::string& url) {
  using namespace std::chrono_literals;
  aot::CacheOptions options;
  options.directory = dir;
  options.remote.emplace();
  options.remote->url = url;
  options.remote->connect_timeout = 200ms;
  options.remote->operation_timeout = 200ms;
  options.remote->breaker_cooldown = 300ms;
  return options;
}

// Looks a synthetic program up; counts lowerings; a test failure on a wrong text.
inline aot::Artifact checked_lookup(aot::Cache& cache, const std::string& name, int* lowered = nullptr) {
  const std::string expected = synthetic_wgsl(name);
  auto artifact = cache.load_or_compile(
      synthetic_parts(name),
      [&] {
        if (lowered) ++*lowered;
        return expected;
      },
      name);
  EXPECT_EQ(artifact.text, expected) << name;
  return artifact;
}

inline std::string remote_entry_key(const std::string& name) { return "vyre:aot:wgsl:" + synthetic_parts(name).key(); }

}  // namespace vyre::test
