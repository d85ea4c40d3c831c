// Comparing f32 results of a GPU with the reference interpreter's, within
// the accuracy WGSL promises (docs/conformance.md lists the rules).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace vyre::test {

// Distance in units in the last place between two finite floats of the
// same sign, or across zero; INT64_MAX when either is NaN.
int64_t ulp_distance(uint32_t a, uint32_t b);

bool is_nan_bits(uint32_t bits);
bool is_subnormal_bits(uint32_t bits);
// The value with subnormals flushed to a zero of the same sign.
uint32_t flush_subnormal(uint32_t bits);

// True when two f32 values are the same, NaNs matching NaNs.
bool same_f32(uint32_t a, uint32_t b);

}  // namespace vyre::test
