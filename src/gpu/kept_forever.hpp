// What must outlive every owner because wgpu-native may still write to it or
// wait on it: the state a map callback still to come writes to (a dispatch
// that failed or ran past its wait limit), and a device given up to a wait
// limit with its queue and callback state (releasing the device would wait
// for its work). Kept here for the rest of the process, reachable, rather
// than leaked, so that a leak checker (LeakSanitizer, docs/ci.md) tells them
// from real leaks. Each is a few hundred bytes, kept once per failed dispatch.
#pragma once

#include <memory>

namespace vyre::gpu {

void keep_forever(void* object);

template <class T>
void keep_forever(std::unique_ptr<T> object) {
  keep_forever(static_cast<void*>(object.release()));
}

}  // namespace vyre::gpu
