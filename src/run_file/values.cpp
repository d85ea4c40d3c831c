#include "vyre/values.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>

#include "run_file/values_json.hpp"
#include "run_file/values_text.hpp"
#include "util/f16_text.hpp"
#include "util/f32_text.hpp"
#include "util/f64_text.hpp"
#include "vyre/error.hpp"

namespace vyre {
namespace {

// One element's bytes, little-endian: element_bytes(type) of them.
void append_element(std::vector<uint8_t>& out, ScalarType type, uint64_t v) {
  for (uint32_t i = 0; i < element_bytes(type); ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// Element i's raw bits, zero-extended.
uint64_t read_element(ScalarType type, const std::vector<uint8_t>& bytes, size_t i) {
  const uint32_t size = element_bytes(type);
  uint64_t v = 0;
  for (uint32_t k = 0; k < size; ++k) v |= uint64_t{bytes[size * i + k]} << (8 * k);
  return v;
}

// A float element's value, exactly (f16, f32 and f64 all fit a double).
double float_value(ScalarType type, uint64_t bits) {
  switch (type) {
    case ScalarType::F16: return to_double(half{static_cast<uint16_t>(bits)});
    case ScalarType::F64: return std::bit_cast<double>(bits);
    default: return std::bit_cast<float>(static_cast<uint32_t>(bits));
  }
}

// A narrow value written as its value type must fit the element: 300 is no
// u8 (a store in a program keeps the low bits; an input is the caller's
// number and is never cut). Hex gives the element's bits: 0xff is i8 -1.
uint32_t narrow(ScalarType type, uint32_t v, bool hex, const std::function<Error(const std::string&)>& bad) {
  const int bits = static_cast<int>(element_bytes(type)) * 8;
  const uint32_t mask = (1u << bits) - 1;
  if (hex || value_type(type) == ScalarType::U32) {
    if (v > mask) throw bad("does not fit " + std::string(to_string(type)) + " (0 to " + std::to_string(mask) + ")");
    return v;
  }
  const auto s = static_cast<int32_t>(v);
  const int32_t lo = -(1 << (bits - 1)), hi = (1 << (bits - 1)) - 1;
  if (s < lo || s > hi)
    throw bad("does not fit " + std::string(to_string(type)) + " (" + std::to_string(lo) + " to " + std::to_string(hi) + ")");
  return v & mask;
}

uint64_t parse_one(ScalarType type, std::string_view s, const std::string& what) {
  auto bad = [&](const std::string& why) {
    return Error(ErrorKind::invalid_input, what + ": '" + std::string(s) + "' " + why);
  };
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (type == ScalarType::Bool) {
    if (s == "true" || s == "1") return 1;
    if (s == "false" || s == "0") return 0;
    throw bad("is not a bool (true, false, 1 or 0)");
  }
  if (is_narrow(type)) {
    const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    const std::string described = std::string(to_string(type));
    try {
      return narrow(type, static_cast<uint32_t>(parse_one(value_type(type), s, what)), hex, bad);
    } catch (const Error&) {
      if (hex) throw bad("is not " + described + " bits (0x hex)");
      throw bad("is not " + std::string(value_type(type) == ScalarType::I32 ? "an " : "a ") + described);
    }
  }
  if (type == ScalarType::F16) {
    half h;
    switch (parse_f16(s, h)) {
      case F32ParseError::none: return h.bits;
      case F32ParseError::overflow: throw bad("is beyond the f16 range, 65504");
      case F32ParseError::syntax: throw bad("is not an f16 (a decimal, nan, inf or -inf)");
    }
  }
  if (type == ScalarType::F64) {
    double d = 0;
    switch (parse_f64(s, d)) {
      case F32ParseError::none: return std::bit_cast<uint64_t>(d);
      case F32ParseError::overflow: throw bad("is beyond the f64 range");
      case F32ParseError::syntax: throw bad("is not an f64 (a decimal, nan, inf or -inf)");
    }
  }
  if (type == ScalarType::F32) {
    float f = 0;
    switch (parse_f32(s, f)) {
      case F32ParseError::none: return std::bit_cast<uint32_t>(f);
      case F32ParseError::overflow: throw bad("is beyond the f32 range");
      case F32ParseError::syntax: throw bad("is not an f32 (a decimal, nan, inf or -inf)");
    }
  }
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  if (type == ScalarType::U32 || hex) {
    uint32_t v = 0;
    const auto digits = hex ? s.substr(2) : s;
    auto res = std::from_chars(digits.data(), digits.data() + digits.size(), v, hex ? 16 : 10);
    if (res.ec == std::errc::result_out_of_range) throw bad("does not fit 32 bits");
    if (res.ec != std::errc() || res.ptr != digits.data() + digits.size())
      throw bad(type == ScalarType::U32 ? "is not a u32 (decimal or 0x hex)" : "is not an i32 (decimal, or 0x hex bits)");
    return v;
  }
  int32_t v = 0;
  auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  if (res.ec == std::errc::result_out_of_range) throw bad("does not fit i32");
  if (res.ec != std::errc() || res.ptr != s.data() + s.size()) throw bad("is not an i32");
  return static_cast<uint32_t>(v);
}

}  // namespace

std::vector<uint8_t> parse_values(ScalarType type, std::string_view csv, const std::string& what) {
  std::vector<uint8_t> out;
  if (csv.empty()) return out;
  size_t start = 0;
  while (true) {
    const size_t comma = csv.find(',', start);
    append_element(out, type,
                   parse_one(type, csv.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start), what));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<uint8_t> values_from_json(ScalarType type, const json_detail::Value& array, const std::string& what) {
  using Kind = json_detail::Value::Kind;
  if (array.kind != Kind::Array) throw Error(ErrorKind::invalid_input, what + " must be an array of values");
  std::vector<uint8_t> out;
  for (const auto& v : array.items) {
    if (type == ScalarType::Bool && v.kind == Kind::Bool) {
      append_element(out, type, v.boolean ? 1 : 0);
      continue;
    }
    if (v.kind != Kind::Number && v.kind != Kind::String)
      throw Error(ErrorKind::invalid_input, what + " holds " + std::string(json_detail::kind_name(v.kind)) + ", not a value");
    append_element(out, type, parse_one(type, v.text, what));
  }
  return out;
}

namespace {

// How one element is spelled: in a JSON array (words quoted, bool as true
// and false), or on a line of its own (words bare, bool as 1 and 0: what
// numpy.loadtxt reads).
enum class Spelling { json, line };

void append_value_text(std::string& out, ScalarType type, uint64_t v, Spelling spelling) {
  const auto word = [&](const std::string& text, bool is_word) {
    out += is_word && spelling == Spelling::json ? "\"" + text + "\"" : text;
  };
  switch (type) {
    case ScalarType::I32: out += std::to_string(static_cast<int32_t>(v)); break;
    case ScalarType::I8: out += std::to_string(static_cast<int8_t>(v)); break;
    case ScalarType::I16: out += std::to_string(static_cast<int16_t>(v)); break;
    case ScalarType::Bool:
      out += spelling == Spelling::json ? (v != 0 ? "true" : "false") : (v != 0 ? "1" : "0");
      break;
    case ScalarType::F64: {
      const double d = std::bit_cast<double>(v);
      word(format_f64(d), !std::isfinite(d));
      break;
    }
    case ScalarType::F32: {
      const float f = std::bit_cast<float>(static_cast<uint32_t>(v));
      word(format_f32(f), f32_needs_word(f));
      break;
    }
    case ScalarType::F16: {
      const half h{static_cast<uint16_t>(v)};
      word(format_f16(h), !std::isfinite(to_double(h)));
      break;
    }
    default: out += std::to_string(v); break;
  }
}

}  // namespace

std::string format_values(ScalarType type, const std::vector<uint8_t>& bytes) {
  std::string out = "[";
  const size_t n = bytes.size() / element_bytes(type);
  for (size_t i = 0; i < n; ++i) {
    if (i) out += ", ";
    append_value_text(out, type, read_element(type, bytes, i), Spelling::json);
  }
  return out + "]";
}

std::string format_values_lines(ScalarType type, const std::vector<uint8_t>& bytes) {
  std::string out;
  const size_t n = bytes.size() / element_bytes(type);
  for (size_t i = 0; i < n; ++i) {
    append_value_text(out, type, read_element(type, bytes, i), Spelling::line);
    out += '\n';
  }
  return out;
}

std::optional<size_t> first_difference(ScalarType type, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                                       double abs, double rel) {
  const size_t n = std::min(a.size(), b.size()) / element_bytes(type);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t x = read_element(type, a, i), y = read_element(type, b, i);
    if (x == y) continue;
    if (!is_float(type)) return i;
    const double fx = float_value(type, x), fy = float_value(type, y);
    if (std::isnan(fx) && std::isnan(fy)) continue;
    if (!(std::fabs(fx - fy) <= abs + rel * std::fabs(fy))) return i;
  }
  if (a.size() != b.size()) return n;
  return std::nullopt;
}

bool values_equal(ScalarType type, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, double abs,
                  double rel) {
  return !first_difference(type, a, b, abs, rel);
}

}  // namespace vyre
