// Saxpy on vec4<f32> elements, handwritten: for the diagnosis of where
// saxpy's time goes (WGSL that vyre's scalar IR cannot express).
#pragma once

namespace vyre::bench {

inline constexpr const char* kSaxpyVec4Wgsl = R"(
@group(0) @binding(0) var<uniform> alpha: vec4<f32>;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> y: array<vec4<f32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 256u;
  if (i < arrayLength(&y)) { y[i] = alpha.x * x[i] + y[i]; }
}
)";

}  // namespace vyre::bench
