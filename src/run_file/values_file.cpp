// Files of one buffer's values: NPY, CSV, JSON and raw bytes (values.hpp).
#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>

#include "ir/json_document.hpp"
#include "run_file/values_json.hpp"
#include "run_file/values_text.hpp"
#include "vyre/error.hpp"
#include "vyre/values.hpp"

namespace vyre {
namespace {

constexpr std::string_view kNpyMagic = "\x93NUMPY";
// NumPy itself refuses headers over 10,000 bytes unless told otherwise.
constexpr size_t kNpyMaxHeader = 1 << 16;

Error npy_error(const std::string& what, const std::string& why) {
  return Error(ErrorKind::invalid_input, what + ": " + why);
}

// Text of an NPY header as a message shows it, quoted: its first 200 bytes,
// each byte that is no printable ASCII as \xNN.
std::string npy_shown(std::string_view text) {
  constexpr size_t kShown = 200;
  std::string out = "'";
  for (const char c : text.substr(0, kShown)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      out += c;
    } else {
      constexpr std::string_view kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  return out + (text.size() > kShown ? "'..." : "'");
}

// The NPY header's dictionary, a Python literal: {'descr': '<f4',
// 'fortran_order': False, 'shape': (3,), }.
struct NpyHeader {
  std::optional<std::string> descr;
  bool structured = false;  // descr is a list of fields
  std::optional<bool> fortran_order;
  std::optional<std::vector<uint64_t>> shape;
};

class NpyHeaderReader {
 public:
  NpyHeaderReader(std::string_view text, const std::string& what) : text_(text), what_(what) {}

  NpyHeader read() {
    NpyHeader h;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = quoted();
      skip_space();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (peek() == '[') {
          h.structured = true;
          skip_bracketed();
        } else {
          h.descr = quoted();
        }
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
      } else if (key == "shape") {
        h.shape = tuple();
      } else {
        throw bad("an unknown key " + npy_shown(key) + " (NPY headers hold descr, fortran_order and shape)");
      }
      skip_space();
      if (peek() == ',') {
        ++at_;
        continue;
      }
      if (peek() != '}') throw bad("',' or '}' expected");
    }
    ++at_;
    skip_space();
    if (at_ != text_.size()) throw bad("text after the dictionary");
    if (!h.descr && !h.structured) throw bad("no 'descr'");
    if (!h.fortran_order) throw bad("no 'fortran_order'");
    if (!h.shape) throw bad("no 'shape'");
    return h;
  }

 private:
  Error bad(const std::string& why) const {
    return npy_error(what_, "the NPY header is malformed: " + why + " at byte " + std::to_string(at_) + " of " +
                                npy_shown(text_));
  }
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  void skip_space() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n')) ++at_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) throw bad(std::string("'") + c + "' expected");
    ++at_;
  }
  std::string quoted() {
    const char q = peek();
    if (q != '\'' && q != '"') throw bad("a quoted string expected");
    const size_t end = text_.find(q, at_ + 1);
    if (end == std::string_view::npos) throw bad("an unterminated string");
    std::string s(text_.substr(at_ + 1, end - at_ - 1));
    at_ = end + 1;
    return s;
  }
  bool boolean() {
    if (text_.substr(at_, 4) == "True") {
      at_ += 4;
      return true;
    }
    if (text_.substr(at_, 5) == "False") {
      at_ += 5;
      return false;
    }
    throw bad("True or False expected");
  }
  std::vector<uint64_t> tuple() {
    expect('(');
    std::vector<uint64_t> dims;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      if (std::isdigit(static_cast<unsigned char>(peek())) == 0) throw bad("a dimension expected");
      uint64_t d = 0;
      while (std::isdigit(static_cast<unsigned char>(peek())) != 0) {
        const auto digit = static_cast<uint64_t>(peek() - '0');
        if (d > (std::numeric_limits<uint64_t>::max() - digit) / 10) throw bad("a dimension too large");
        d = d * 10 + digit;
        ++at_;
      }
      dims.push_back(d);
      skip_space();
      if (peek() == ',') ++at_;
      else if (peek() != ')') throw bad("',' or ')' expected");
    }
    ++at_;
    return dims;
  }
  // A structured type's list of fields, passed over to be refused by name.
  void skip_bracketed() {
    int depth = 0;
    for (; at_ < text_.size(); ++at_) {
      if (text_[at_] == '[' || text_[at_] == '(') ++depth;
      if (text_[at_] == ']' || text_[at_] == ')') --depth;
      if (depth == 0) {
        ++at_;
        return;
      }
    }
    throw bad("an unterminated list");
  }

  std::string_view text_;
  const std::string& what_;
  size_t at_ = 0;
};

uint32_t npy_le(std::string_view bytes, size_t at, size_t width) {
  uint32_t v = 0;
  for (size_t i = 0; i < width; ++i) v |= uint32_t{static_cast<uint8_t>(bytes[at + i])} << (8 * i);
  return v;
}

// NumPy's name of a type code, for messages: "<f8" -> "float64".
std::string npy_type_name(const std::string& descr) {
  static const std::pair<std::string_view, std::string_view> kNames[] = {
      {"b1", "bool"},     {"i1", "int8"},      {"u1", "uint8"},       {"i2", "int16"},     {"u2", "uint16"},
      {"i4", "int32"},    {"u4", "uint32"},    {"i8", "int64"},       {"u8", "uint64"},    {"f2", "float16"},
      {"f4", "float32"},  {"f8", "float64"},   {"f16", "longdouble"}, {"c8", "complex64"}, {"c16", "complex128"}};
  const std::string_view code = descr.size() > 1 ? std::string_view(descr).substr(1) : std::string_view(descr);
  for (const auto& [c, name] : kNames)
    if (code == c) return std::string(name);
  if (!code.empty() && (code[0] == 'U' || code[0] == 'S')) return "a string type";
  if (!code.empty() && (code[0] == 'M' || code[0] == 'm')) return "a date or time type";
  return "";
}

// A shape as Python writes the tuple: (3,), (2, 3), ().
std::string npy_shape_text(const std::vector<uint64_t>& dims) {
  std::string text = "(";
  for (size_t k = 0; k < dims.size(); ++k) text += (k ? ", " : "") + std::to_string(dims[k]);
  return text + (dims.size() == 1 ? ",)" : ")");
}

std::vector<uint8_t> npy_values(ScalarType type, std::string_view file, const std::string& what) {
  if (file.size() < kNpyMagic.size() || file.substr(0, kNpyMagic.size()) != kNpyMagic)
    throw npy_error(what, "not an NPY file (it does not begin with NumPy's magic \\x93NUMPY)");
  if (file.size() < 10) throw npy_error(what, "the NPY file ends inside its preamble (" + std::to_string(file.size()) + " bytes)");
  const auto major = static_cast<uint8_t>(file[6]), minor = static_cast<uint8_t>(file[7]);
  if (major < 1 || major > 3 || minor != 0)
    throw npy_error(what, "NPY version " + std::to_string(major) + "." + std::to_string(minor) +
                              ", which vyre does not read (1.0, 2.0 and 3.0)");
  const size_t length_bytes = major == 1 ? 2 : 4;
  if (file.size() < 8 + length_bytes) throw npy_error(what, "the NPY file ends inside its preamble");
  const uint32_t header_length = npy_le(file, 8, length_bytes);
  const size_t data_at = 8 + length_bytes + header_length;
  if (header_length > kNpyMaxHeader)
    throw npy_error(what, "the NPY header says it is " + std::to_string(header_length) + " bytes, more than the " +
                              std::to_string(kNpyMaxHeader) + " vyre reads");
  if (file.size() < data_at)
    throw npy_error(what, "the NPY header is truncated: it says " + std::to_string(header_length) + " bytes, the file has " +
                              std::to_string(file.size() - 8 - length_bytes) + " after the preamble");
  std::string_view text = file.substr(8 + length_bytes, header_length);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\0')) text.remove_suffix(1);
  const NpyHeader h = NpyHeaderReader(text, what).read();

  const std::string want(npy_descr(type));
  const std::string want_text = std::string(to_string(type)) + " ('" + want + "', numpy." +
                                npy_type_name(want) + ")";
  if (h.structured)
    throw npy_error(what, "the NPY file holds a structured type (fields); the buffer is " + want_text);
  const std::string& descr = *h.descr;
  if (descr.empty()) throw npy_error(what, "the NPY header's 'descr' is empty; the buffer is " + want_text);
  const std::string got_name = npy_type_name(descr);
  const std::string got_text = npy_shown(descr) + (got_name.empty() ? "" : " (" + got_name + ")");
  if (descr.find('O') != std::string::npos)
    throw npy_error(what, "the NPY file holds Python objects (" + npy_shown(descr) + "), not values; the buffer is " +
                              want_text);
  const bool one_byte = element_bytes(type) == 1;
  const bool same_code = descr.size() == want.size() && descr.substr(1) == want.substr(1);
  if (same_code && descr[0] == '>' && !one_byte)
    throw npy_error(what, "the NPY file is big-endian (" + got_text + "); vyre reads little-endian: save a.astype('" +
                              want + "')");
  const bool order_ok = one_byte ? std::strchr("<>|=", descr[0]) != nullptr : descr[0] == '<';
  if (!same_code || !order_ok)
    throw npy_error(what, "the NPY file holds " + got_text + ", the buffer is " + want_text + ": save a.astype('" +
                              want + "')");

  const size_t size = element_bytes(type);
  uint64_t count = 1;
  for (const uint64_t d : *h.shape) {
    if (d != 0 && count > std::numeric_limits<uint64_t>::max() / size / d)
      throw npy_error(what, "the NPY header's shape is too large");
    count *= d;
  }
  const std::string shape_text = npy_shape_text(*h.shape);
  const uint64_t data_bytes = count * size;
  const uint64_t present = file.size() - data_at;
  if (present < data_bytes)
    throw npy_error(what, "the NPY data is truncated: shape " + shape_text + " needs " + std::to_string(data_bytes) +
                              " bytes, the file has " + std::to_string(present));
  if (present > data_bytes)
    throw npy_error(what, "the NPY file has " + std::to_string(present - data_bytes) + " bytes after the " +
                              std::to_string(data_bytes) + " of shape " + shape_text);
  const auto* data = reinterpret_cast<const uint8_t*>(file.data() + data_at);
  std::vector<uint8_t> out(data, data + data_bytes);
  // Fortran order with more than one dimension: the elements reordered so
  // that the last index varies fastest, as numpy's ravel() gives them.
  const std::vector<uint64_t>& dims = *h.shape;
  const auto extents = std::count_if(dims.begin(), dims.end(), [](uint64_t d) { return d > 1; });
  if (*h.fortran_order && extents > 1 && count > 0) {
    std::vector<uint64_t> index(dims.size(), 0);
    std::vector<uint64_t> f_stride(dims.size(), 1);
    for (size_t k = 1; k < dims.size(); ++k) f_stride[k] = f_stride[k - 1] * dims[k - 1];
    for (uint64_t c = 0; c < count; ++c) {  // c: the C-order index; index: its subscripts
      uint64_t f = 0;
      for (size_t k = 0; k < dims.size(); ++k) f += index[k] * f_stride[k];
      std::memcpy(out.data() + c * size, data + f * size, size);
      for (size_t k = dims.size(); k-- > 0;) {
        if (++index[k] < dims[k]) break;
        index[k] = 0;
      }
    }
  }
  return out;
}

std::string npy_file(ScalarType type, const std::vector<uint8_t>& bytes) {
  const size_t count = bytes.size() / element_bytes(type);
  std::string header = "{'descr': '" + std::string(npy_descr(type)) + "', 'fortran_order': False, 'shape': (" +
                       std::to_string(count) + ",), }";
  // Preamble and header a multiple of 64 bytes, the header ending in '\n'.
  const size_t preamble = 10;
  const size_t total = (preamble + header.size() + 1 + 63) / 64 * 64;
  header.append(total - preamble - header.size() - 1, ' ');
  header += '\n';
  std::string out(kNpyMagic);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return out;
}

std::vector<uint8_t> csv_values(ScalarType type, std::string_view text, const std::string& what) {
  std::vector<uint8_t> out;
  size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;
    std::string cleaned(line);
    std::replace(cleaned.begin(), cleaned.end(), '\t', ' ');
    if (cleaned.back() == ',') cleaned.pop_back();  // numpy.savetxt with a trailing delimiter
    const std::vector<uint8_t> values = parse_values(type, cleaned, what + " line " + std::to_string(line_number));
    out.insert(out.end(), values.begin(), values.end());
  }
  return out;
}

std::vector<uint8_t> json_values(ScalarType type, std::string_view text, const std::string& name, const std::string& what) {
  json_detail::Value doc;
  try {
    doc = json_detail::parse_document(text, JsonLimits{});
  } catch (const ProgramError& e) {
    throw Error(ErrorKind::invalid_input, what + ": " + e.what());
  }
  using Kind = json_detail::Value::Kind;
  if (doc.kind == Kind::Object) {
    const json_detail::Value* member = doc.find(name);
    if (member == nullptr) {
      std::string names;
      for (const auto& [key, value] : doc.members) names += (names.empty() ? "" : ", ") + key;
      throw Error(ErrorKind::invalid_input, what + ": the JSON object has no member '" + name + "' (it has: " +
                                                (names.empty() ? "none" : names) + ")");
    }
    return values_from_json(type, *member, what + ": " + name);
  }
  if (doc.kind != Kind::Array)
    throw Error(ErrorKind::invalid_input, what + ": expected a JSON array of values, or an object with a member '" +
                                              name + "'");
  return values_from_json(type, doc, what);
}

}  // namespace

std::string_view to_string(ValuesFormat format) {
  switch (format) {
    case ValuesFormat::raw: return "raw";
    case ValuesFormat::npy: return "npy";
    case ValuesFormat::csv: return "csv";
    case ValuesFormat::json: return "json";
  }
  return "raw";
}

std::optional<ValuesFormat> values_format_of(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const size_t dot = base.find_last_of('.');
  if (dot == std::string_view::npos || dot == 0) return std::nullopt;
  std::string ext(base.substr(dot + 1));
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == "npy") return ValuesFormat::npy;
  if (ext == "csv") return ValuesFormat::csv;
  if (ext == "json") return ValuesFormat::json;
  if (ext == "bin" || ext == "raw") return ValuesFormat::raw;
  return std::nullopt;
}

std::string_view npy_descr(ScalarType type) {
  switch (type) {
    case ScalarType::U32: return "<u4";
    case ScalarType::I32: return "<i4";
    case ScalarType::F32: return "<f4";
    case ScalarType::Bool: return "|b1";
    case ScalarType::U8: return "|u1";
    case ScalarType::I8: return "|i1";
    case ScalarType::U16: return "<u2";
    case ScalarType::I16: return "<i2";
    case ScalarType::F16: return "<f2";
    case ScalarType::F64: return "<f8";
  }
  return "<u4";
}

std::string values_file(ScalarType type, const std::vector<uint8_t>& bytes, ValuesFormat format) {
  switch (format) {
    case ValuesFormat::npy: return npy_file(type, bytes);
    case ValuesFormat::csv: return format_values_lines(type, bytes);
    case ValuesFormat::json: return format_values(type, bytes) + "\n";
    case ValuesFormat::raw: break;
  }
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

std::vector<uint8_t> values_from_file(ScalarType type, std::string_view contents, ValuesFormat format,
                                      const std::string& name, const std::string& what) {
  switch (format) {
    case ValuesFormat::npy: return npy_values(type, contents, what);
    case ValuesFormat::csv: return csv_values(type, contents, what);
    case ValuesFormat::json: return json_values(type, contents, name, what);
    case ValuesFormat::raw: break;
  }
  if (contents.size() % element_bytes(type) != 0)
    throw Error(ErrorKind::invalid_input, what + ": " + std::to_string(contents.size()) + " bytes are not whole " +
                                              std::string(to_string(type)) + " elements (" +
                                              std::to_string(element_bytes(type)) + " bytes each)");
  const auto* data = reinterpret_cast<const uint8_t*>(contents.data());
  return {data, data + contents.size()};
}

}  // namespace vyre
