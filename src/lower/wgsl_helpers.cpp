#include "lower/wgsl_helpers.hpp"

#include <array>
#include <stdexcept>
#include <string_view>

namespace vyre::wgsl {
namespace {

struct FixedHelper {
  std::string_view name;
  std::string_view text;
};

// In emission order.
constexpr std::array kFixedHelpers{
    FixedHelper{"vyre_opaque_u32", "fn vyre_opaque_u32(x: u32) -> u32 { return x; }\n"},
    FixedHelper{"vyre_opaque_i32", "fn vyre_opaque_i32(x: i32) -> i32 { return x; }\n"},
    FixedHelper{"vyre_opaque_f32", "fn vyre_opaque_f32(x: f32) -> f32 { return x; }\n"},
    FixedHelper{"vyre_opaque_bool", "fn vyre_opaque_bool(x: bool) -> bool { return x; }\n"},
    FixedHelper{"vyre_opaque_f16", "fn vyre_opaque_f16(x: f16) -> f16 { return x; }\n"},
    FixedHelper{"vyre_opaque_f64", "fn vyre_opaque_f64(x: f64) -> f64 { return x; }\n"},
    FixedHelper{"vyre_f32_bits", "fn vyre_f32_bits(bits: u32) -> f32 { return bitcast<f32>(bits); }\n"},
    // The f16 of these bits (in the low half of the word): unpacked to the
    // f32 of the same value, which converts back exactly (naga has no
    // bitcast to f16).
    FixedHelper{"vyre_f16_bits", "fn vyre_f16_bits(bits: u32) -> f16 { return f16(unpack2x16float(bits).x); }\n"},
    // Arguments are evaluated left to right: condition, true value, false value.
    FixedHelper{"vyre_select_u32", "fn vyre_select_u32(c: bool, t: u32, f: u32) -> u32 { return select(f, t, c); }\n"},
    FixedHelper{"vyre_select_i32", "fn vyre_select_i32(c: bool, t: i32, f: i32) -> i32 { return select(f, t, c); }\n"},
    FixedHelper{"vyre_select_f32", "fn vyre_select_f32(c: bool, t: f32, f: f32) -> f32 { return select(f, t, c); }\n"},
    FixedHelper{"vyre_select_bool",
                "fn vyre_select_bool(c: bool, t: bool, f: bool) -> bool { return select(f, t, c); }\n"},
    FixedHelper{"vyre_select_f16", "fn vyre_select_f16(c: bool, t: f16, f: f16) -> f16 { return select(f, t, c); }\n"},
    FixedHelper{"vyre_select_f64", "fn vyre_select_f64(c: bool, t: f64, f: f64) -> f64 { return select(f, t, c); }\n"},
    FixedHelper{"vyre_div_u32",
                "fn vyre_div_u32(a: u32, b: u32) -> u32 {\n"
                "  if (b == 0u) { return a; }\n"
                "  return a / b;\n"
                "}\n"},
    FixedHelper{"vyre_rem_u32",
                "fn vyre_rem_u32(a: u32, b: u32) -> u32 {\n"
                "  if (b == 0u) { return 0u; }\n"
                "  return a % b;\n"
                "}\n"},
    FixedHelper{"vyre_div_i32",
                "fn vyre_div_i32(a: i32, b: i32) -> i32 {\n"
                "  if (b == 0i || (a == i32(-2147483648) && b == -1i)) { return a; }\n"
                "  return a / b;\n"
                "}\n"},
    // Not `a % b`: naga emits OpSRem for it, whose result Vulkan leaves
    // undefined for negative operands (NVIDIA returns the unsigned remainder).
    // Truncating division is defined for them, and the product wraps.
    FixedHelper{"vyre_rem_i32",
                "fn vyre_rem_i32(a: i32, b: i32) -> i32 {\n"
                "  if (b == 0i || (a == i32(-2147483648) && b == -1i)) { return 0i; }\n"
                "  return a - (a / b) * b;\n"
                "}\n"},
    // Decided on the bits, not with float comparisons: WGSL lets a compiler
    // assume no NaN or infinity occurs, and the format defines both here.
    FixedHelper{"vyre_f32_to_u32",
                "fn vyre_f32_to_u32(x: f32) -> u32 {\n"
                "  let bits = bitcast<u32>(x);\n"
                "  if ((bits & 0x7fffffffu) > 0x7f800000u) { return 0u; }\n"
                "  if (bits >= 0x80000000u) { return 0u; }\n"
                "  if (bits >= 0x4f800000u) { return 4294967295u; }\n"
                "  return u32(x);\n"
                "}\n"},
    FixedHelper{"vyre_f32_to_i32",
                "fn vyre_f32_to_i32(x: f32) -> i32 {\n"
                "  let bits = bitcast<u32>(x);\n"
                "  let magnitude = bits & 0x7fffffffu;\n"
                "  if (magnitude > 0x7f800000u) { return 0i; }\n"
                "  if (magnitude >= 0x4f000000u) {\n"
                "    if (bits >= 0x80000000u) { return i32(-2147483648); }\n"
                "    return 2147483647i;\n"
                "  }\n"
                "  return i32(x);\n"
                "}\n"},
    // f32 to f16, rounded to nearest even on the bits (wgsl_lowering.cpp
    // says why): overflow to infinity, NaN to the quiet NaN, subnormals
    // rounded, the sign kept.
    FixedHelper{"vyre_f16_from_f32",
                "fn vyre_f16_from_f32(x: f32) -> f16 {\n"
                "  let b = bitcast<u32>(x);\n"
                "  let sign = (b >> 16u) & 0x8000u;\n"
                "  let e = (b >> 23u) & 0xffu;\n"
                "  let m = b & 0x7fffffu;\n"
                "  var h = 0u;\n"
                "  if (e == 255u) {\n"
                "    h = select(0x7c00u, 0x7e00u, m != 0u);\n"
                "  } else if (e > 142u) {\n"
                "    h = 0x7c00u;\n"
                "  } else if (e >= 113u) {\n"
                "    let v = ((e - 112u) << 10u) | (m >> 13u);\n"
                "    let rest = m & 0x1fffu;\n"
                "    h = v + select(0u, 1u, rest > 0x1000u || (rest == 0x1000u && (v & 1u) == 1u));\n"
                "  } else if (e >= 102u) {\n"
                "    let full = m | 0x800000u;\n"
                "    let shift = 126u - e;\n"
                "    let v = full >> shift;\n"
                "    let rest = full & ((1u << shift) - 1u);\n"
                "    let half = 1u << (shift - 1u);\n"
                "    h = v + select(0u, 1u, rest > half || (rest == half && (v & 1u) == 1u));\n"
                "  }\n"
                "  return f16(unpack2x16float(sign | h).x);\n"
                "}\n"},
    // naga bitcasts no f64, so NaN, infinities and the sign are read off the
    // f32 nearest to x (which keeps all three; beyond f32's range it is an
    // infinity of x's sign), and only finite values are compared as f64.
    FixedHelper{"vyre_f64_to_u32",
                "fn vyre_f64_to_u32(x: f64) -> u32 {\n"
                "  let bits = bitcast<u32>(f32(x));\n"
                "  if ((bits & 0x7fffffffu) > 0x7f800000u) { return 0u; }\n"
                "  if (bits >= 0x80000000u) { return 0u; }\n"
                "  if (bits == 0x7f800000u || x >= 4294967295.0lf) { return 4294967295u; }\n"
                "  return u32(x);\n"
                "}\n"},
    // round, trunc and ceil of an f64 from floor alone, which every device
    // seen gets right: lavapipe (Mesa 22.3.6, LLVM 15) on an AMD EPYC host
    // gave x itself for round and trunc of values past 2^24 (16777217.5) and
    // +0 for -0. The magnitude is rounded, then given x's sign (read off
    // f32(x), as above), so that round(-0.3) is -0; a - floor(a) is exact
    // below 2^52, from where every f64 is an integer.
    FixedHelper{"vyre_f64_trunc",
                "fn vyre_f64_trunc(x: f64) -> f64 {\n"
                "  let m = floor(abs(x));\n"
                "  return select(m, -m, bitcast<u32>(f32(x)) >= 0x80000000u);\n"
                "}\n"},
    FixedHelper{"vyre_f64_round",
                "fn vyre_f64_round(x: f64) -> f64 {\n"
                "  let a = abs(x);\n"
                "  var m = a;\n"
                "  if (a < 4503599627370496.0lf) {\n"
                "    let f = floor(a);\n"
                "    let d = a - f;\n"
                "    m = f;\n"
                "    if (d > 0.5lf || (d == 0.5lf && f - 2.0lf * floor(f * 0.5lf) != 0.0lf)) { m = f + 1.0lf; }\n"
                "  }\n"
                "  return select(m, -m, bitcast<u32>(f32(x)) >= 0x80000000u);\n"
                "}\n"},
    FixedHelper{"vyre_f64_ceil", "fn vyre_f64_ceil(x: f64) -> f64 {\n  return -floor(-x);\n}\n"},
    FixedHelper{"vyre_f64_to_i32",
                "fn vyre_f64_to_i32(x: f64) -> i32 {\n"
                "  let bits = bitcast<u32>(f32(x));\n"
                "  let magnitude = bits & 0x7fffffffu;\n"
                "  if (magnitude > 0x7f800000u) { return 0i; }\n"
                "  if (bits == 0x7f800000u || (magnitude < 0x7f800000u && x >= 2147483647.0lf)) { return 2147483647i; }\n"
                "  if (bits == 0xff800000u || x <= -2147483648.0lf) { return i32(-2147483648); }\n"
                "  return i32(x);\n"
                "}\n"},
};

}  // namespace

std::string wgsl_type(ScalarType t) {
  switch (t) {
    case ScalarType::U32: return "u32";
    case ScalarType::I32: return "i32";
    case ScalarType::F32: return "f32";
    case ScalarType::Bool: return "bool";
    case ScalarType::F16: return "f16";
    case ScalarType::F64: return "f64";
    // Storage types live in words (packed_elements.hpp); no value has one.
    case ScalarType::U8: case ScalarType::I8: case ScalarType::U16: case ScalarType::I16: break;
  }
  return "u32";
}

const std::string& HelperSet::use(const std::string& name) {
  for (const auto& h : kFixedHelpers)
    if (h.name == name) return *fixed_.insert(name).first;
  throw std::logic_error("unknown WGSL helper " + name);
}

std::string HelperSet::use_uniform_loader(const std::string& wgsl_buffer, ScalarType type) {
  std::string name = "vyre_load_" + wgsl_buffer;
  const std::string t = wgsl_type(type);
  generated_.emplace(name, "fn " + name + "(i: u32) -> " + t + " {\n  return " + wgsl_buffer + "[i / 4u][i % 4u];\n}\n");
  return name;
}

std::string HelperSet::use_compare_exchange(const std::string& wgsl_buffer, ScalarType type) {
  std::string name = "vyre_compare_exchange_" + wgsl_buffer;
  const std::string t = wgsl_type(type);
  // WGSL only has a weak compare-exchange, which may fail spuriously; retry
  // until it either succeeds or sees a different value.
  generated_.emplace(name, "fn " + name + "(i: u32, expected: " + t + ", value: " + t + ") -> " + t +
                                " {\n"
                                "  var old: " + t + ";\n"
                                "  loop {\n"
                                "    let r = atomicCompareExchangeWeak(&" + wgsl_buffer + "[i], expected, value);\n"
                                "    old = r.old_value;\n"
                                "    if (r.exchanged || r.old_value != expected) { break; }\n"
                                "  }\n"
                                "  return old;\n"
                                "}\n");
  return name;
}

void HelperSet::define(const std::string& name, std::string definition) {
  generated_.emplace(name, std::move(definition));
}

std::string HelperSet::definitions() const {
  std::string out;
  for (const auto& h : kFixedHelpers)
    if (fixed_.count(std::string(h.name))) out += std::string(h.text);
  for (const auto& [name, text] : generated_) out += text;
  return out;
}

}  // namespace vyre::wgsl
