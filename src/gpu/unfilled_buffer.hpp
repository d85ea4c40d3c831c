// A buffer for an output that its pass writes whole: from the Backend's
// pool, with whatever an earlier use left in it. An output that Batch or
// Pipeline makes is cleared to zeros first, as the IR promises of every
// output; bound in place (Inputs::device) this one is not, which saves a
// pass as large as the output (sort's eight passes over 2^26 keys cleared
// 2 GiB, in the same submission as the sort).
#pragma once

#include <memory>
#include <string>

#include "vyre/gpu.hpp"

namespace vyre::gpu::detail {

// `elements` of `type`, for an output every element of which the pass it is
// given to writes; `origin` names it in messages ("sort's keys").
std::shared_ptr<DeviceBuffer> unfilled_buffer(Backend& backend, uint64_t elements, ScalarType type,
                                              std::string origin);

}  // namespace vyre::gpu::detail
