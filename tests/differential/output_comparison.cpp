#include "differential/output_comparison.hpp"

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "differential/element_values.hpp"
#include "util/f32_text.hpp"

namespace vyre::differential {
namespace {

bool is_nan(uint32_t bits) { return (bits & 0x7fffffffu) > 0x7f800000u; }
bool is_zero(uint32_t bits) { return (bits & 0x7fffffffu) == 0; }
bool is_subnormal(uint32_t bits) { return (bits & 0x7f800000u) == 0 && (bits & 0x007fffffu) != 0; }

// The spacing of f32 values at |x| (WGSL's ULP for a finite x).
double ulp_of(float x) {
  const float a = std::fabs(x);
  if (!std::isfinite(a)) return std::ldexp(1.0, 104);  // the spacing at the largest finite values
  if (a < std::ldexp(1.0f, -126)) return std::ldexp(1.0, -149);
  int exponent = 0;
  std::frexp(a, &exponent);  // a = m * 2^exponent, 0.5 <= m < 1
  return std::ldexp(1.0, exponent - 24);
}

}  // namespace

bool element_agrees(ScalarType type, const CompareRule& rule, uint32_t reference, uint32_t gpu) {
  if (reference == gpu) return true;
  if (type != ScalarType::F32 || rule.kind == CompareRule::Kind::exact) return false;
  if (is_nan(reference) || is_nan(gpu)) return is_nan(reference) && is_nan(gpu);
  // WGSL: an implementation may ignore the sign of a zero, and may flush a
  // subnormal to zero.
  if (is_zero(gpu) && (is_zero(reference) || is_subnormal(reference))) return true;
  if (rule.kind == CompareRule::Kind::f32_bits) return false;
  const float r = std::bit_cast<float>(reference), g = std::bit_cast<float>(gpu);
  if (std::isinf(r) || std::isinf(g)) return false;  // the bounded operations never overflow
  return std::fabs(static_cast<double>(g) - static_cast<double>(r)) <= rule.abs + rule.ulps * ulp_of(r);
}

std::string format_element(ScalarType type, uint32_t bits) {
  switch (value_type(type)) {
    case ScalarType::I32: return std::to_string(static_cast<int32_t>(bits));
    case ScalarType::F32: {
      char hex[16];
      std::snprintf(hex, sizeof hex, "0x%08x", bits);
      return format_f32(std::bit_cast<float>(bits)) + " (" + hex + ")";
    }
    default: return std::to_string(bits);
  }
}

std::vector<Difference> compare_outputs(const Program& program, const std::map<std::string, CompareRule>& rules,
                                        const Outputs& reference, const Outputs& gpu) {
  std::vector<Difference> out;
  for (const Buffer& b : program.buffers) {
    if (!b.output) continue;
    if (!reference.has(b.name) || !gpu.has(b.name)) {
      out.push_back({b.name, 0, 0, 0, "output '" + b.name + "' is missing from the " +
                                          (reference.has(b.name) ? "GPU's" : "reference's") + " outputs"});
      continue;
    }
    const auto want = element_values_of(b.type, reference.bytes(b.name));
    const auto got = element_values_of(b.type, gpu.bytes(b.name));
    if (want.size() != got.size()) {
      out.push_back({b.name, 0, 0, 0, "output '" + b.name + "' has " + std::to_string(want.size()) +
                                          " elements on the reference and " + std::to_string(got.size()) + " on the GPU"});
      continue;
    }
    auto rule = rules.find(b.name);
    const CompareRule r = rule == rules.end() ? CompareRule{} : rule->second;
    for (size_t i = 0; i < want.size(); ++i) {
      if (element_agrees(b.type, r, want[i], got[i])) continue;
      out.push_back({b.name, i, want[i], got[i],
                     b.name + "[" + std::to_string(i) + "]: reference " + format_element(b.type, want[i]) + ", GPU " +
                         format_element(b.type, got[i]) +
                         (r.kind == CompareRule::Kind::f32_bounded ? " (bound: " + r.why + ")" : "")});
    }
  }
  return out;
}

}  // namespace vyre::differential
