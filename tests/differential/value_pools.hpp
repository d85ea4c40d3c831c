// The values the generator puts in literals and input buffers, edge values
// first: 0, 1, -1, the extremes of each type, shift amounts at and past 32,
// and for f32 NaN, infinities, -0 and subnormals.
#pragma once

#include <cstdint>

#include "differential/choice_stream.hpp"
#include "differential/exact_range.hpp"
#include "vyre/program.hpp"

namespace vyre::differential {

// Bits of a u32 or i32 value; a zero decision gives 0.
uint32_t pick_integer_bits(ChoiceStream& choices, ScalarType type);

// What an f32 buffer or literal may hold besides the exact domain.
struct SpecialF32 {
  bool nan_inf = true;     // NaN (several payloads) and the infinities
  bool subnormal = true;   // subnormals of both signs
};

// Any f32 of that kind: specials, -0, the extremes of the normal range,
// random bit patterns; a zero decision gives 0.
uint32_t pick_special_f32_bits(ChoiceStream& choices, const SpecialF32& kind);

// A value of the exact domain `range`; a zero decision gives the value
// nearest zero in the range.
float pick_exact_f32(ChoiceStream& choices, const ExactRange& range);

// A value that is a finite, normal, nonzero f32 of any magnitude (for
// bitcasts to integers, which must not see a zero or a NaN).
uint32_t pick_normal_f32_bits(ChoiceStream& choices);

}  // namespace vyre::differential
