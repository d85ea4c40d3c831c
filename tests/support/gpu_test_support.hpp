// Helpers shared by the GPU backend's tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "vyre/aot.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"

namespace vyre::test {

// Runs `f` and returns the message of the vyre::Error of `kind` it throws
// (a test failure when it throws another kind or nothing).
template <class F>
std::string error_of(ErrorKind kind, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected Error(" << to_string(kind) << ")";
  return {};
}

// A Backend's options with an in-memory cache only, so a test leaves
// nothing on disk and never depends on what an earlier run left there.
inline gpu::BackendOptions no_disk_cache() {
  gpu::BackendOptions options;
  options.cache = std::make_shared<aot::Cache>(aot::CacheOptions{});
  // The one-element shader whose text, grid and key these tests pin;
  // gpu_widening_test sets widening on and checks the default.
  options.widen = false;
  return options;
}

}  // namespace vyre::test
