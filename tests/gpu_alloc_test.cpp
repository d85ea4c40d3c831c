// A warm dispatch into caller memory allocates nothing on the host heap. This
// program replaces the global operator new, so every C++ allocation of the
// process (libvyre's included) is counted while counting is on.
// (wgpu-native is Rust and allocates through its own allocator, unseen here:
// those are the engine's, below vyre.)
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "support/programs.hpp"
#include "support/test_support.hpp"
#include "support/gpu_test_support.hpp"
#include "vyre/gpu.hpp"

namespace {

std::atomic<bool> counting{false};
std::atomic<uint64_t> allocations{0};

void* counted(std::size_t size) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}

// Allocations made while `f` runs.
template <class F>
uint64_t allocations_during(F&& f) {
  allocations = 0;
  counting = true;
  f();
  counting = false;
  return allocations.load();
}

}  // namespace

void* operator new(std::size_t size) { return counted(size); }
void* operator new[](std::size_t size) { return counted(size); }
// The nothrow forms too (std::stable_sort's buffer, for one): a sanitizer's
// runtime defines them itself, so they would not reach the ones above, and
// their memory would come back to the free() below from another allocator.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted(size);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace vyre::gpu {
namespace {

using vyre::test::no_disk_cache;

TEST(GpuAllocations, TheCounterSeesAllocationsInsideTheLibrary) {
  Backend backend(no_disk_cache());
  Pipeline pipeline = backend.compile(test::xor_program());
  Inputs in;
  in.set<uint32_t>("a", {1, 2}).set<uint32_t>("b", {3, 4}).size("out", 2);
  pipeline.dispatch(in);
  // dispatch() returns new vectors: the counter must see them.
  EXPECT_GT(allocations_during([&] { pipeline.dispatch(in); }), 0u);
}

TEST(GpuAllocations, AWarmDispatchIntoCallerMemoryAllocatesNothing) {
  Backend backend(no_disk_cache());
  Pipeline pipeline = backend.compile(test::xor_program());
  std::vector<uint32_t> a(4096), b(4096), out(4096);
  for (uint32_t i = 0; i < 4096; ++i) {
    a[i] = i;
    b[i] = i * 3;
  }
  Inputs in;
  in.view<uint32_t>("a", a).view<uint32_t>("b", b).size("out", 4096);
  OutputViews views;
  views.view<uint32_t>("out", out);
  for (int k = 0; k < 3; ++k) pipeline.dispatch_into(in, views);

  const uint64_t during = allocations_during([&] {
    for (int k = 0; k < 1000; ++k) {
      a[k] = k * 7u;  // new inputs each time, in the same memory
      pipeline.dispatch_into(in, views);
    }
  });
  EXPECT_EQ(during, 0u);
  EXPECT_EQ(out[999], 999u * 7u ^ 999u * 3u);

  // Re-pointing the views at the same buffers (as a loop over many arrays would) allocates nothing either.
  EXPECT_EQ(allocations_during([&] {
              for (int k = 0; k < 100; ++k) {
                in.view<uint32_t>("a", a).view<uint32_t>("b", b);
                views.view<uint32_t>("out", out);
                pipeline.dispatch_into(in, views);
              }
            }),
            0u);
}

TEST(GpuAllocations, AWarmBatchIntoCallerMemoryAllocatesNothing) {
  Backend backend(no_disk_cache());
  Pipeline pipeline = backend.compile(test::xor_program());
  constexpr int kDispatches = 8;
  std::vector<std::vector<uint32_t>> a(kDispatches, std::vector<uint32_t>(512, 1)), out(kDispatches,
                                                                                        std::vector<uint32_t>(512));
  std::vector<Inputs> in(kDispatches);
  std::vector<OutputViews> views(kDispatches);
  for (int k = 0; k < kDispatches; ++k) {
    a[k].assign(512, k);
    in[k].view<uint32_t>("a", a[k]).view<uint32_t>("b", a[0]).size("out", 512);
    views[k].view<uint32_t>("out", out[k]);
  }
  Batch batch(backend);
  auto fill_and_run = [&] {
    for (int k = 0; k < kDispatches; ++k) batch.dispatch_into(pipeline, in[k], views[k]);
    batch.run();
  };
  for (int k = 0; k < 3; ++k) fill_and_run();
  EXPECT_EQ(allocations_during([&] {
              for (int k = 0; k < 100; ++k) fill_and_run();
            }),
            0u);
  for (int k = 0; k < kDispatches; ++k) EXPECT_EQ(out[k], std::vector<uint32_t>(512, static_cast<uint32_t>(k))) << k;
}

}  // namespace
}  // namespace vyre::gpu
