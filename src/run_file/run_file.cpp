#include "vyre/run_file.hpp"

#include <charconv>
#include <variant>

#include "ir/json_document.hpp"
#include "run_file/values_json.hpp"
#include "util/bounded_read.hpp"
#include "vyre/error.hpp"
#include "vyre/values.hpp"

namespace vyre {
namespace {

using json_detail::Value;

const Buffer& buffer_named(const Program& program, const std::string& name, const std::string& what) {
  if (const Buffer* b = program.find_buffer(name)) return *b;
  std::string names;
  for (const auto& b : program.buffers) names += (names.empty() ? "" : ", ") + b.name;
  throw Error(ErrorKind::invalid_input, what + ": the program has no buffer named '" + name + "' (it has: " + names + ")");
}

std::pair<std::string, std::string> split_assignment(const std::string& option, const std::string& flag) {
  const size_t eq = option.find('=');
  if (eq == std::string::npos || eq == 0)
    throw Error(ErrorKind::invalid_input, flag + " '" + option + "' is not of the form NAME=VALUE");
  return {option.substr(0, eq), option.substr(eq + 1)};
}

// The bytes of --input NAME=@FILE: at most the buffer's fixed size, else
// kMaxInputFileBytes, refused as soon as the file holds more.
std::vector<uint8_t> read_input_file(const Buffer& b, const std::string& path) {
  ReadBound bound{kMaxInputFileBytes, "--input " + b.name + " (@" + path + ")",
                  "the limit of an @FILE input (vyre::kMaxInputFileBytes)"};
  if (b.count != 0) {
    bound.max_bytes = uint64_t{b.count} * element_bytes(b.type);
    bound.limit = "the size of '" + b.name + "' (the program fixes it at " + std::to_string(b.count) + " elements)";
  }
  return read_file_bounded(path, bound);
}

// --input NAME=@FILE.npy, .csv or .json: the file read within its format's
// bound (an NPY file: the raw bound and its header; text: the limit of an
// @FILE input, or of a JSON document) and decoded into the buffer's values.
std::vector<uint8_t> read_values_file(const Buffer& b, const std::string& path, ValuesFormat format) {
  const std::string what = "--input " + b.name + " (@" + path + ")";
  ReadBound bound{kMaxInputFileBytes, what, "the limit of an @FILE input (vyre::kMaxInputFileBytes)"};
  if (format == ValuesFormat::npy) {
    constexpr uint64_t kHeaderRoom = (1 << 16) + 12;  // the largest NPY header vyre reads, and its preamble
    if (b.count != 0) {
      bound.max_bytes = uint64_t{b.count} * element_bytes(b.type);
      bound.limit = "the size of '" + b.name + "' (the program fixes it at " + std::to_string(b.count) +
                    " elements) and an NPY header";
    } else {
      bound.limit = "the limit of an @FILE input (vyre::kMaxInputFileBytes) and an NPY header";
    }
    bound.max_bytes += kHeaderRoom;
  } else if (format == ValuesFormat::json) {
    bound.max_bytes = JsonLimits{}.max_bytes;
    bound.limit = "the limit of a JSON document (vyre::JsonLimits::max_bytes)";
  }
  const std::vector<uint8_t> contents = read_file_bounded(path, bound);
  std::vector<uint8_t> values = values_from_file(b.type, as_text(contents), format, b.name, what);
  if (values.size() > kMaxInputFileBytes)
    throw Error(ErrorKind::invalid_input, what + " holds more than 1 GiB of values, the limit of an @FILE input "
                                                 "(vyre::kMaxInputFileBytes)");
  return values;
}

// Each buffer is given once: a second --input or --size (or one that repeats
// the run file) would silently replace the first.
void refuse_given_twice(const Inputs& inputs, const std::string& name, const std::string& what) {
  for (const auto& e : inputs.entries())
    if (const auto* given = std::get_if<std::string>(&e.buffer); given != nullptr && *given == name)
      throw Error(ErrorKind::invalid_input, what + ": '" + name + "' is already given (by an earlier --input or --size, "
                                                  "or the run file's inputs or sizes): give each buffer once");
}

uint32_t parse_count(const std::string& text, const std::string& what) {
  uint32_t n = 0;
  auto res = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || res.ec != std::errc() || res.ptr != text.data() + text.size())
    throw Error(ErrorKind::invalid_input, what + ": '" + text + "' is not an element count");
  return n;
}

}  // namespace

void apply_input_option(const Program& program, const std::string& option, Inputs& inputs) {
  auto [name, value] = split_assignment(option, "--input");
  const Buffer& b = buffer_named(program, name, "--input " + name);
  refuse_given_twice(inputs, name, "--input " + name);
  if (!value.empty() && value[0] == '@') {
    // .npy, .csv and .json are read as what they hold; any other file as raw bytes.
    const std::string path = value.substr(1);
    const std::optional<ValuesFormat> format = values_format_of(path);
    if (format && *format != ValuesFormat::raw)
      inputs.bytes(name, read_values_file(b, path, *format));
    else
      inputs.bytes(name, read_input_file(b, path));
  } else {
    inputs.bytes(name, parse_values(b.type, value, "--input " + name));
  }
}

void apply_size_option(const Program& program, const std::string& option, Inputs& inputs) {
  auto [name, value] = split_assignment(option, "--size");
  buffer_named(program, name, "--size " + name);
  refuse_given_twice(inputs, name, "--size " + name);
  inputs.size(name, parse_count(value, "--size " + name));
}

RunInputs read_run_file(const Program& program, const std::string& path) {
  RunInputs run;
  Value doc;
  try {
    const JsonLimits limits;
    const std::vector<uint8_t> text = read_file_bounded(
        path, ReadBound{limits.max_bytes, "--inputs " + path, "the limit of a run file (vyre::JsonLimits::max_bytes)"});
    doc = json_detail::parse_document(as_text(text), limits);
  } catch (const ProgramError& e) {
    throw Error(ErrorKind::invalid_input, path + ": " + e.what());
  }
  if (doc.kind != Value::Kind::Object) throw Error(ErrorKind::invalid_input, path + ": expected a JSON object");
  for (const auto& [key, value] : doc.members) {
    const std::string at = path + ": " + key;
    if (key == "inputs" || key == "expect") {
      if (value.kind != Value::Kind::Object) throw Error(ErrorKind::invalid_input, at + " must be an object");
      for (const auto& [name, values] : value.members) {
        const Buffer& b = buffer_named(program, name, at);
        auto bytes = values_from_json(b.type, values, at + "." + name);
        if (key == "inputs") {
          refuse_given_twice(run.inputs, name, at);
          run.inputs.bytes(name, std::move(bytes));
        } else {
          run.expect[name] = std::move(bytes);
        }
      }
    } else if (key == "sizes") {
      if (value.kind != Value::Kind::Object) throw Error(ErrorKind::invalid_input, at + " must be an object");
      for (const auto& [name, n] : value.members) {
        buffer_named(program, name, at);
        refuse_given_twice(run.inputs, name, at);
        run.inputs.size(name, parse_count(n.text, at + "." + name));
      }
    } else if (key == "grid") {
      if (value.kind != Value::Kind::Array || value.items.size() != 3)
        throw Error(ErrorKind::invalid_input, at + " must be an array of three integers");
      Dim3 g{};
      for (size_t i = 0; i < 3; ++i) g[i] = parse_count(value.items[i].text, at);
      run.grid = g;
    } else if (key == "dim") {
      // The launch domain: n, or [x], [x, y] or [x, y, z] invocations.
      Dim3 d{1, 1, 1};
      if (value.kind == Value::Kind::Number) {
        d[0] = parse_count(value.text, at);
      } else if (value.kind == Value::Kind::Array && !value.items.empty() && value.items.size() <= 3) {
        for (size_t i = 0; i < value.items.size(); ++i) d[i] = parse_count(value.items[i].text, at);
      } else {
        throw Error(ErrorKind::invalid_input, at + " must be an integer or an array of one to three integers");
      }
      run.inputs.dim(d);
    } else if (key == "tolerance") {
      if (value.kind != Value::Kind::Object) throw Error(ErrorKind::invalid_input, at + " must be an object");
      for (const auto& [name, t] : value.members) {
        buffer_named(program, name, at);
        Tolerance tol;
        for (const auto& [field, number] : t.members) {
          double v = 0;
          auto res = std::from_chars(number.text.data(), number.text.data() + number.text.size(), v);
          if (number.kind != Value::Kind::Number || res.ec != std::errc() || v < 0 || (field != "abs" && field != "rel"))
            throw Error(ErrorKind::invalid_input, at + "." + name + ": expected {\"abs\": N, \"rel\": N} with N >= 0");
          (field == "abs" ? tol.abs : tol.rel) = v;
        }
        run.tolerance[name] = tol;
      }
    } else if (key != "description") {
      throw Error(ErrorKind::invalid_input, at + ": unknown key (inputs, sizes, dim, grid, expect, tolerance, description)");
    }
  }
  return run;
}

}  // namespace vyre
