// wgpu-native calls a callback (a buffer map's, for one) on whichever thread
// polls the device, after a hand-over through its own locks, which are Rust
// (parking_lot, atomics) and invisible to ThreadSanitizer. These tell it of
// the hand-over (docs/ci.md): what the requesting thread wrote before
// `handed_to_callback(p)` happens before what the callback does after
// `received_in_callback(p)`. Nothing in other builds.
#pragma once

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define VYRE_GPU_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) && !defined(VYRE_GPU_TSAN)
#define VYRE_GPU_TSAN 1
#endif
#ifdef VYRE_GPU_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace vyre::gpu {

inline void handed_to_callback([[maybe_unused]] void* userdata) {
#ifdef VYRE_GPU_TSAN
  __tsan_release(userdata);
#endif
}

inline void received_in_callback([[maybe_unused]] void* userdata) {
#ifdef VYRE_GPU_TSAN
  __tsan_acquire(userdata);
#endif
}

}  // namespace vyre::gpu
