#include "lower/packed_elements.hpp"

#include "lower/wgsl_helpers.hpp"

namespace vyre::lowering {
namespace {

// Where element i lies: its word, and the bit offset of its low bit there.
std::string word_index(ScalarType t) { return element_bytes(t) == 1 ? "(i >> 2u)" : "(i >> 1u)"; }
std::string bit_offset(ScalarType t) { return element_bytes(t) == 1 ? "((i & 3u) * 8u)" : "((i & 1u) * 16u)"; }
std::string element_mask(ScalarType t) { return element_bytes(t) == 1 ? "0xffu" : "0xffffu"; }

}  // namespace

uint64_t packed_words(ScalarType t, uint64_t elements) { return (elements * element_bytes(t) + 3) / 4; }

std::string packed_loader(const std::string& name, const std::string& wgsl_buffer, ScalarType t, bool atomic_words) {
  const std::string word = wgsl_buffer + "[" + word_index(t) + "]";
  const std::string value_type = wgsl::wgsl_type(vyre::value_type(t));
  std::string out = "fn " + name + "(i: u32) -> " + value_type + " {\n";
  out += "  let w: u32 = " + (atomic_words ? "atomicLoad(&" + word + ")" : word) + ";\n";
  out += "  let s: u32 = " + bit_offset(t) + ";\n";
  switch (t) {
    case ScalarType::I8: out += "  return bitcast<i32>(w << (24u - s)) >> 24u;\n"; break;
    case ScalarType::I16: out += "  return bitcast<i32>(w << (16u - s)) >> 16u;\n"; break;
    case ScalarType::Bool: out += "  return ((w >> s) & 0xffu) != 0u;\n"; break;
    default: out += "  return (w >> s) & " + element_mask(t) + ";\n"; break;
  }
  return out + "}\n";
}

std::string packed_storer(const std::string& name, const std::string& wgsl_buffer, ScalarType t) {
  const std::string word = "&" + wgsl_buffer + "[" + word_index(t) + "]";
  const std::string value_type = wgsl::wgsl_type(vyre::value_type(t));
  const std::string bits = t == ScalarType::Bool                        ? "select(0u, 1u, value)"
                           : vyre::value_type(t) == ScalarType::I32 ? "bitcast<u32>(value)"
                                                                      : "value";
  std::string out = "fn " + name + "(i: u32, value: " + value_type + ") {\n";
  out += "  let s: u32 = " + bit_offset(t) + ";\n";
  out += "  let m: u32 = " + element_mask(t) + " << s;\n";
  out += "  let bits: u32 = (" + bits + " << s) & m;\n";
  out += "  var w: u32 = atomicLoad(" + word + ");\n";
  out += "  loop {\n";
  out += "    let r = atomicCompareExchangeWeak(" + word + ", w, (w & ~m) | bits);\n";
  out += "    if (r.exchanged) { break; }\n";
  out += "    w = r.old_value;\n";
  out += "  }\n";
  return out + "}\n";
}

}  // namespace vyre::lowering
