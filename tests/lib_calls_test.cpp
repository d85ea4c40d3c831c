// What a warm call of the standard kernels makes, and what calls share: each
// primitive's Pipelines are kept by the Backend (src/gpu/kept_pipeline.*),
// so a call like the last one creates no GPU buffer (its outputs come from
// the pool, its host inputs and lengths from the kept Pipelines' frames),
// and threads that call at once take turns on those Pipelines with every
// result right.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "gpu/backend_state.hpp"
#include "gpu/device_buffer.hpp"
#include "support/gpu_test_support.hpp"
#include "support/lib_inputs.hpp"
#include "support/test_support.hpp"
#include "vyre/lib/compact.hpp"
#include "vyre/lib/find.hpp"
#include "vyre/lib/histogram.hpp"
#include "vyre/lib/matmul.hpp"
#include "vyre/lib/reduce.hpp"
#include "vyre/lib/scan.hpp"
#include "vyre/lib/softmax.hpp"
#include "vyre/lib/sort.hpp"
#include "vyre/lib/transpose.hpp"

using namespace vyre;
using test::contains;
using test::error_of;
using test::random_values;

namespace {

const lib::Options kDefaultShape{};  // no tuning, whatever VYRE_TUNE says

size_t kept_pipelines(gpu::Backend& backend) {
  const auto& state = gpu::state_of(backend);
  std::lock_guard lock(state->kept_mutex);
  return state->kept.size();
}

}  // namespace

// Every primitive, called three times with its result dropped each time: the
// third call creates no GPU buffer and compiles no Pipeline. (Before the
// Pipelines were kept, a warm sort of these keys created 96 buffers, a
// scan 8, a reduce 4.)
TEST(LibCalls, AWarmCallCreatesNoBufferAndCompilesNothing) {
  gpu::Backend backend;
  const uint32_t n = 70000;
  const auto values = backend.upload(random_values<uint32_t>(n, 1));
  const auto floats = backend.upload(random_values<float>(n, 2));
  std::vector<uint8_t> mask_bytes(n);
  for (uint32_t i = 0; i < n; ++i) mask_bytes[i] = static_cast<uint8_t>(i % 3 == 0);
  const auto mask = backend.upload(mask_bytes);
  std::string text(50000, 'x');
  text.replace(1234, 6, "secret");
  const auto haystack = backend.upload(std::vector<uint8_t>(text.begin(), text.end()));
  const auto square = backend.upload(random_values<float>(96 * 96, 3));
  const std::vector<std::pair<std::string, std::function<void()>>> calls = {
      {"reduce", [&] { (void)lib::reduce(backend, values, lib::ReduceOp::Sum, std::nullopt, kDefaultShape); }},
      {"scan",
       [&] {
         (void)lib::scan(backend, values, lib::ReduceOp::Sum, lib::ScanKind::Inclusive, std::nullopt, kDefaultShape);
       }},
      {"sort", [&] { (void)lib::sort(backend, values, nullptr, lib::SortOrder::Ascending, std::nullopt, kDefaultShape); }},
      {"sort pairs",
       [&] { (void)lib::sort(backend, values, values, lib::SortOrder::Descending, std::nullopt, kDefaultShape); }},
      {"histogram", [&] { (void)lib::histogram(backend, floats, 64, -1000.0, 1000.0, std::nullopt, kDefaultShape); }},
      {"compact", [&] { (void)lib::compact(backend, values, mask, std::nullopt, kDefaultShape); }},
      {"find", [&] { (void)lib::find(backend, haystack, {"secret", "xy"}, std::nullopt, kDefaultShape); }},
      {"matmul", [&] { (void)lib::matmul(backend, square, square, 96, 96, 96, std::nullopt, kDefaultShape); }},
      {"transpose", [&] { (void)lib::transpose(backend, square, 96, 96, std::nullopt, kDefaultShape); }},
      {"softmax", [&] { (void)lib::softmax(backend, square, 96, 96, std::nullopt, kDefaultShape); }},
  };
  for (const auto& [name, call] : calls) {
    call();
    call();
    const uint64_t buffers = backend.counters().buffers_created;
    const size_t pipelines = kept_pipelines(backend);
    call();
    EXPECT_EQ(backend.counters().buffers_created - buffers, 0u) << name;
    EXPECT_EQ(kept_pipelines(backend), pipelines) << name;
  }
}

// Threads sorting and scanning their own data on one Backend, at once, share
// the kept Pipelines (and their frames): every result is the host's.
TEST(LibCalls, ThreadsCallingAtOnceShareTheKeptPipelinesAndGetTheirOwnResults) {
  gpu::Backend backend;
  constexpr int kThreads = 4;
  constexpr int kCalls = 12;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int call = 0; call < kCalls && failures[t].empty(); ++call) {
        // Lengths differ between threads and calls, so that frames are
        // re-sized and re-bound under each other.
        const uint32_t n = 3000 + 997 * static_cast<uint32_t>(t) + 131 * static_cast<uint32_t>(call);
        const std::vector<uint32_t> keys = random_values<uint32_t>(n, static_cast<uint32_t>(100 * t + call));
        const auto buffer = backend.upload(keys);
        std::vector<uint32_t> sorted = keys;
        std::sort(sorted.begin(), sorted.end());
        const lib::SortedBuffers got =
            lib::sort(backend, buffer, nullptr, lib::SortOrder::Ascending, std::nullopt, kDefaultShape);
        if (got.keys->read_as<uint32_t>() != sorted) failures[t] = "sort, call " + std::to_string(call);
        std::vector<uint32_t> prefix(n);
        std::inclusive_scan(keys.begin(), keys.end(), prefix.begin());
        const auto scanned =
            lib::scan(backend, buffer, lib::ReduceOp::Sum, lib::ScanKind::Inclusive, std::nullopt, kDefaultShape);
        if (scanned->read_as<uint32_t>() != prefix) failures[t] = "scan, call " + std::to_string(call);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

// After a lost device, the call that meets the loss reports it, and the next
// call runs: the kept Pipelines are compiled again on the new device, not
// each made to report the loss once more, call after call.
TEST(LibCalls, AfterALostDeviceTheNextCallCompilesItsPipelinesAgain) {
  gpu::Backend backend;
  const std::vector<uint32_t> keys = random_values<uint32_t>(5000, 7);
  std::vector<uint32_t> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  const auto sort = [&] {
    const auto buffer = backend.upload(keys);
    return lib::sort(backend, buffer, nullptr, lib::SortOrder::Ascending, std::nullopt, kDefaultShape)
        .keys->read_as<uint32_t>();
  };
  ASSERT_EQ(sort(), sorted);
  const size_t kept = kept_pipelines(backend);
  wgpuDeviceDestroy(gpu::state_of(backend)->live().device->device());
  EXPECT_TRUE(contains(error_of(ErrorKind::device_lost, sort), "was lost"));
  EXPECT_EQ(sort(), sorted);
  EXPECT_EQ(backend.counters().devices_opened, 2u);
  EXPECT_EQ(kept_pipelines(backend), kept);  // the same programs, now on the new device
  EXPECT_EQ(sort(), sorted);
}

namespace {

// The pool's id of the GPU buffer behind `buffer`.
uint64_t buffer_id(const std::shared_ptr<gpu::DeviceBuffer>& buffer) {
  return buffer->state(gpu::kStateKey).buffer.id;
}

}  // namespace

// sort's, scan's and compact's outputs are not cleared before their passes
// (each pass writes every element): a result given a pooled buffer that
// still holds another call's words is right all the same.
TEST(LibCalls, AResultInAPooledBufferHoldingOldWordsIsWrittenWhole) {
  gpu::Backend backend;
  for (const uint32_t n : {1u, 33u, 1000u}) {
    const std::vector<uint32_t> keys = random_values<uint32_t>(n, n);
    const auto input = backend.upload(keys);
    // Buffers of exactly the outputs' size, full of ones, given back.
    std::vector<uint64_t> junk_ids;
    {
      std::vector<std::shared_ptr<gpu::DeviceBuffer>> junk;
      for (int i = 0; i < 2; ++i) junk.push_back(backend.upload(std::vector<uint32_t>(n, 0xffffffffu)));
      for (const auto& b : junk) junk_ids.push_back(buffer_id(b));
    }
    std::vector<uint32_t> sorted = keys;
    std::sort(sorted.begin(), sorted.end());
    const auto got = lib::sort(backend, input, nullptr, lib::SortOrder::Ascending, std::nullopt, kDefaultShape).keys;
    EXPECT_EQ(got->read_as<uint32_t>(), sorted) << n;
    EXPECT_NE(std::find(junk_ids.begin(), junk_ids.end(), buffer_id(got)), junk_ids.end()) << "not reused, " << n;

    {
      const auto junk = backend.upload(std::vector<uint32_t>(n, 0xffffffffu));
      junk_ids = {buffer_id(junk)};
    }
    std::vector<uint32_t> prefix(n);
    std::inclusive_scan(keys.begin(), keys.end(), prefix.begin());
    const auto scanned =
        lib::scan(backend, input, lib::ReduceOp::Sum, lib::ScanKind::Inclusive, std::nullopt, kDefaultShape);
    EXPECT_EQ(scanned->read_as<uint32_t>(), prefix) << n;
    EXPECT_EQ(buffer_id(scanned), junk_ids[0]) << "not reused, " << n;

    // compact on a Backend of its own, whose pool holds only the buffers of
    // ones: its smaller buffers (counts, offsets, total) do not fit them.
    if (n == 1) continue;  // the one-word total would take the one-word buffer
    gpu::Backend fresh;
    std::vector<uint8_t> mask(n);
    std::vector<uint32_t> kept;
    for (uint32_t i = 0; i < n; ++i) {
      mask[i] = static_cast<uint8_t>(keys[i] & 1);
      if (mask[i]) kept.push_back(keys[i]);
    }
    const auto values = fresh.upload(keys);
    const auto mask_buffer = fresh.upload(mask);
    {
      const auto junk = fresh.upload(std::vector<uint32_t>(kept.size(), 0xffffffffu));
      junk_ids = {buffer_id(junk)};
    }
    const lib::Compacted compacted = lib::compact(fresh, values, mask_buffer, std::nullopt, kDefaultShape);
    EXPECT_EQ(compacted.buffer->read_as<uint32_t>(), kept) << n;
    EXPECT_EQ(buffer_id(compacted.buffer), junk_ids[0])
        << "not reused, " << n;
  }
}
