// Defects of shader compilers that vyre works around, keyed by adapter
// (docs/conformance.md, "Driver defects"). Each one is a ShaderOptions field
// the Backend turns on, so it shapes the text, and the cache key, only where
// the defect is.
#pragma once

#include "vyre/gpu.hpp"
#include "vyre/shader_options.hpp"

namespace vyre::gpu {

// lavapipe (llvmpipe) ends an invocation's loops after 65,535 iterations in
// all, silently: its programs with loops run with the loop guard.
bool stops_long_loops(const AdapterInfo& adapter);

// `options` with what the adapter's defects need added.
ShaderOptions with_driver_workarounds(ShaderOptions options, const AdapterInfo& adapter);

}  // namespace vyre::gpu
