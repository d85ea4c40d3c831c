// The key that opens the state behind the public handles of vyre/gpu.hpp:
// defined here, inside the library, so no user code can name one.
#pragma once

#include "vyre/gpu.hpp"

namespace vyre::gpu {

namespace detail {
class StateKey {};
}  // namespace detail

inline constexpr detail::StateKey kStateKey{};

}  // namespace vyre::gpu
