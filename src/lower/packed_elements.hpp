// Narrow elements (u8, i8, u16, i16) and bool elements in storage buffers.
// WGSL has no 8- or 16-bit storage type, so such a buffer is an array of
// 32-bit words, four bytes or two halves to a word in little-endian order:
// exactly the host's bytes, so NumPy arrays go in and out with no copy.
//
// A load takes the word and extracts the element (zero- or sign-extended).
// A store must leave the word's other elements alone although another
// invocation may be storing one of them at the same moment, so a writable
// packed buffer is an array of atomic words and a store replaces its
// element's bits with a compare-exchange loop: each attempt writes the word
// it read with only the element's bits changed, and fails if the word
// changed meanwhile. Stores of neighbouring elements by different
// invocations never lose each other's bits, and racing stores to one
// element leave one of the stored values, as with 4-byte elements
// (docs/lowering.md, "Packed elements").
#pragma once

#include <cstdint>
#include <string>

#include "vyre/program.hpp"

namespace vyre::lowering {

// True for the element types a storage buffer packs into words.
inline bool is_packed(ScalarType t) { return is_narrow(t) || t == ScalarType::Bool; }

// The 32-bit words that hold `elements` elements of type `t`.
uint64_t packed_words(ScalarType t, uint64_t elements);

// The WGSL function that loads element `i: u32` of the packed buffer
// `wgsl_buffer` (its name: `name`), as the element's value type.
std::string packed_loader(const std::string& name, const std::string& wgsl_buffer, ScalarType t, bool atomic_words);

// The WGSL function that stores `value` (the value type) into element
// `i: u32` of the packed, atomic-word buffer `wgsl_buffer`.
std::string packed_storer(const std::string& name, const std::string& wgsl_buffer, ScalarType t);

}  // namespace vyre::lowering
