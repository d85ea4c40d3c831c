// vyre lib NAME --input x=... --dtype T: runs one of vyre::lib's standard
// kernels on values from the command line or a file, for scripts and for
// checking a device. Prints the result as JSON, or writes its raw bytes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"
#include "vyre/lib/bincount.hpp"
#include "vyre/lib/compact.hpp"
#include "vyre/lib/find.hpp"
#include "vyre/lib/histogram.hpp"
#include "vyre/lib/matmul.hpp"
#include "vyre/lib/options.hpp"
#include "vyre/lib/reduce.hpp"
#include "vyre/lib/scan.hpp"
#include "vyre/lib/softmax.hpp"
#include "vyre/lib/sort.hpp"
#include "vyre/lib/transpose.hpp"
#include "vyre/values.hpp"

namespace vyre::cli {
namespace {

struct LibOptions {
  std::string input;  // x=V1,V2,... or x=@FILE
  std::string dtype;
  std::string op = "sum";
  bool exclusive = false;
  bool descending = false;
  std::optional<uint32_t> bins;
  std::string shape;  // WORKGROUP,ITEMS
  std::string output;
  bool json = false;
  bool verbose = false;
  bool tune = false;
  bool retune = false;
  std::vector<lib::ShapeChoice> choices;  // what the call ran with, for --verbose and --json

  // The library's options: tuning from the flags or VYRE_TUNE, the choices reported here.
  lib::Options library() {
    lib::Options options = lib::Options::from_environment();
    options.tune = options.tune || tune;
    options.retune = retune;
    options.report = &choices;
    return options;
  }
};

ScalarType parse_dtype(const std::string& text) {
  const std::optional<ScalarType> type = scalar_type_from_string(text);
  if (!type)
    throw Error(ErrorKind::invalid_input,
                "--dtype: '" + text + "' is not one of u32, i32, f32, f64, f16, u8, i8, u16, i16, bool");
  return *type;
}

lib::ReduceOp parse_op(const std::string& text) {
  const std::optional<lib::ReduceOp> op = lib::reduce_op_from_string(text);
  if (!op) throw Error(ErrorKind::invalid_input, "--op: '" + text + "' is not one of sum, min, max, and, or, xor");
  return *op;
}

// --shape WORKGROUP,ITEMS; none: chosen for the device (docs/lib.md).
std::optional<lib::ReduceShape> parse_shape(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const size_t comma = text.find(',');
  const auto number = [&](const std::string& part) {
    size_t used = 0;
    unsigned long v = 0;
    try {
      v = std::stoul(part, &used);
    } catch (const std::exception&) {
      used = std::string::npos;
    }
    if (part.empty() || used != part.size() || v > 4096 || part[0] == '-')
      throw Error(ErrorKind::invalid_input, "--shape: '" + text + "' is not WORKGROUP,ITEMS (two counts, as 256,4)");
    return static_cast<uint32_t>(v);
  };
  if (comma == std::string::npos)
    throw Error(ErrorKind::invalid_input, "--shape: '" + text + "' is not WORKGROUP,ITEMS (two counts, as 256,4)");
  return lib::ReduceShape{number(text.substr(0, comma)), number(text.substr(comma + 1))};
}

// sort's --shape WORKGROUP,ITEMS[,RADIX_BITS]; none: chosen for the device.
std::optional<lib::SortShape> parse_sort_shape(const std::string& text) {
  const size_t first = text.find(',');
  const size_t second = first == std::string::npos ? std::string::npos : text.find(',', first + 1);
  const std::optional<lib::ReduceShape> two = parse_shape(text.substr(0, second));
  if (!two) return std::nullopt;
  lib::SortShape shape{two->workgroup, two->items};
  if (second == std::string::npos) return shape;
  const std::string bits = text.substr(second + 1);
  if (bits.size() != 1 || bits[0] < '1' || bits[0] > '9')
    throw Error(ErrorKind::invalid_input,
                "--shape: '" + text + "' is not WORKGROUP,ITEMS[,RADIX_BITS] (as 128,16 or 32,32,6)");
  shape.radix_bits = static_cast<uint32_t>(bits[0] - '0');
  return shape;
}

std::vector<uint8_t> read_raw(const std::string& path, ScalarType type, const std::string& flag = "--input x=") {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(ErrorKind::invalid_input, flag + "@" + path + ": cannot open the file");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) throw Error(ErrorKind::invalid_input, flag + "@" + path + ": the read failed");
  if (bytes.size() % element_bytes(type) != 0)
    throw Error(ErrorKind::invalid_input, flag + "@" + path + ": " + std::to_string(bytes.size()) +
                                              " bytes are not whole " + std::string(to_string(type)) +
                                              " elements (raw little-endian, --dtype " +
                                              std::string(to_string(type)) + ")");
  return bytes;
}

// The values of --input x=...: a primitive's one input is named x.
std::vector<uint8_t> read_input(const std::string& option, ScalarType type) {
  if (option.rfind("x=", 0) != 0)
    throw Error(ErrorKind::invalid_input, "--input: '" + option + "' is not x=V1,V2,... or x=@FILE");
  const std::string value = option.substr(2);
  if (!value.empty() && value[0] == '@') return read_raw(value.substr(1), type);
  if (value.empty()) return {};
  return parse_values(type, value, "--input x");
}

nlohmann::json choices_json(const std::vector<lib::ShapeChoice>& choices) {
  nlohmann::json out = nlohmann::json::array();
  for (const lib::ShapeChoice& c : choices)
    out.push_back({{"family", c.family},
                   {"size_class", c.size_class},
                   {"shape", c.shape},
                   {"source", std::string(lib::to_string(c.source))},
                   {"ms", c.ms},
                   {"record_key", c.record_key}});
  return out;
}

std::string milliseconds(double ms) {
  char text[32];
  (void)std::snprintf(text, sizeof text, "%.1f", ms);
  return text;
}

// What --verbose says of a shape's origin.
std::string origin(const lib::ShapeChoice& c) {
  switch (c.source) {
    case lib::ShapeSource::Given: return "given by --shape";
    case lib::ShapeSource::Default: return "this device class's default (--tune to measure)";
    case lib::ShapeSource::Record: return "the cache's tuning record, nothing timed";
    case lib::ShapeSource::Tuned: return "tuned now and recorded";
  }
  return "";
}

int emit(const LibOptions& o, const std::string& primitive, ScalarType type, const std::vector<uint8_t>& result,
         double ms, const nlohmann::json& more = nlohmann::json::object()) {
  if (o.verbose) {
    for (const lib::ShapeChoice& c : o.choices)
      std::cerr << "vyre: " << c.family << ", " << c.size_class << ": " << c.shape << " (" << origin(c)
                << (c.source == lib::ShapeSource::Record || c.source == lib::ShapeSource::Tuned
                        ? ", " + milliseconds(c.ms) + " ms; record " + c.record_key.substr(0, 16)
                        : std::string())
                << ")\n";
    std::cerr << "vyre: lib " << primitive << " of " << to_string(type) << " on the GPU: " << ms
              << " ms, with compiling and the transfers\n";
  }
  if (!o.output.empty()) {
    write_output_file(o.output, std::string_view(reinterpret_cast<const char*>(result.data()), result.size()));
    return kOk;
  }
  std::string values = format_values(type, result);
  if (primitive == "reduce") values = values.substr(1, values.size() - 2);  // one value, not an array
  if (!o.json) {
    std::cout << values << "\n";
    return kOk;
  }
  nlohmann::json out = {{"primitive", primitive},
                        {"dtype", std::string(to_string(type))},
                        {"result", nlohmann::json::parse(values)},
                        {"ms", ms},
                        {"shapes", choices_json(o.choices)}};
  out.update(more);
  std::cout << out.dump() << "\n";
  return kOk;
}

using Body = std::vector<uint8_t> (*)(gpu::Backend&, LibOptions&, ScalarType, const std::vector<uint8_t>&);

void add_primitive(CLI::App* lib, Action& action, const std::string& name, const std::string& what, Body body) {
  auto* cmd = lib->add_subcommand(name, what);
  auto o = std::make_shared<LibOptions>();
  cmd->add_option("--input", o->input, "x=V1,V2,... or x=@FILE (raw little-endian elements of --dtype)")->required();
  cmd->add_option("--dtype", o->dtype,
                  name == "sort"       ? "The key type: u32, i32, f32, f16, u8, i8, u16 or i16"
                  : name == "bincount" ? "The value type: u32, i32, u8, i8, u16 or i16"
                                       : "The element type: u32, i32, f32, f64, f16, u8, i8, u16, i16 or bool (the "
                                         "result is its accumulator's: u32, i32, f32 or f64)")
      ->required();
  if (name == "bincount") {
    cmd->add_option("--bins", o->bins, "How many bins (default: the largest value + 1); a value outside exits 3");
    cmd->add_option("--shape", o->shape, "WORKGROUP,ITEMS: invocations per workgroup and values each (default: chosen for the device)");
  } else if (name == "sort") {
    cmd->add_flag("--descending", o->descending, "Largest first, NaN first (default: smallest first, NaN last)");
    cmd->add_option("--shape", o->shape,
                    "WORKGROUP,ITEMS[,RADIX_BITS]: invocations per workgroup, keys each, and bits a pass (4, 5, "
                    "6 or 8; default 4) (default: chosen for the device)");
  } else {
    cmd->add_option("--op", o->op, "sum (default), min, max, and, or, xor (the last three for integers)");
    cmd->add_option("--shape", o->shape, "WORKGROUP,ITEMS: invocations per workgroup and elements each (default: chosen for the device)");
  }
  if (name == "scan") cmd->add_flag("--exclusive", o->exclusive, "Each element's prefix before it (default: including it)");
  cmd->add_option("--output", o->output, "Write the result's raw little-endian bytes to this file instead of printing");
  cmd->add_flag("--json", o->json, "Print {\"primitive\", \"dtype\", \"result\", \"ms\"} as one JSON object");
  cmd->add_flag("--tune", o->tune,
                "Run the shape measured fastest on this device for this size, timing the candidates once and "
                "keeping the choice in the cache (as VYRE_TUNE=1)");
  cmd->add_flag("--retune", o->retune, "Time the candidate shapes again and replace the cache's record");
  cmd->add_flag("-v,--verbose", o->verbose, "Tell on stderr which shape ran, where it came from, and how long the call took");
  cmd->callback([&action, o, name, body] {
    action = [o, name, body] {
      const ScalarType type = parse_dtype(o->dtype);
      const std::vector<uint8_t> input = read_input(o->input, type);
      gpu::Backend backend;
      const auto start = std::chrono::steady_clock::now();
      const std::vector<uint8_t> result = body(backend, *o, type, input);
      const ScalarType result_type = name == "bincount" ? ScalarType::U32
                                     : name == "sort"   ? type
                                                        : lib::accumulator_type(type);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      return emit(*o, name, result_type, result, ms);
    };
  });
}

// vyre lib find: the haystack's bytes from --input x=@FILE (or x=TEXT), the
// patterns from each --pattern TEXT, then each line of --patterns @FILE.
struct FindOptions : LibOptions {
  std::vector<std::string> patterns;
  std::string patterns_file;  // @FILE
};

std::vector<uint8_t> read_haystack(const std::string& option) {
  if (option.rfind("x=", 0) != 0) throw Error(ErrorKind::invalid_input, "--input: '" + option + "' is not x=@FILE or x=TEXT");
  const std::string value = option.substr(2);
  if (!value.empty() && value[0] == '@') return read_raw(value.substr(1), ScalarType::U8);
  return {value.begin(), value.end()};
}

// A pattern a line: a line ends at "\n", a "\r" before it dropped; a last
// line may lack its "\n". An empty line is refused, as an empty pattern is.
std::vector<std::string> read_pattern_lines(const std::string& option) {
  if (option.empty() || option[0] != '@')
    throw Error(ErrorKind::invalid_input, "--patterns: '" + option + "' is not @FILE (a pattern a line)");
  const std::vector<uint8_t> bytes = read_raw(option.substr(1), ScalarType::U8);
  const std::string text(bytes.begin(), bytes.end());
  std::vector<std::string> out;
  for (size_t at = 0, line = 1; at < text.size(); ++line) {
    const size_t end = std::min(text.find('\n', at), text.size());
    std::string pattern = text.substr(at, end - at);
    if (!pattern.empty() && pattern.back() == '\r') pattern.pop_back();
    if (pattern.empty())
      throw Error(ErrorKind::invalid_input, "--patterns " + option + ": line " + std::to_string(line) +
                                                " is empty (every pattern needs at least one byte)");
    out.push_back(std::move(pattern));
    at = end + 1;
  }
  return out;
}

// --shape WORKGROUP,CHUNK; none: chosen for the device.
std::optional<lib::FindShape> parse_find_shape(const std::string& text) {
  try {
    const std::optional<lib::ReduceShape> two = parse_shape(text);
    if (!two) return std::nullopt;
    return lib::FindShape{two->workgroup, two->items};
  } catch (const Error&) {
    throw Error(ErrorKind::invalid_input,
                "--shape: '" + text + "' is not WORKGROUP,CHUNK (invocations a workgroup, bytes each: as 64,256)");
  }
}

// [[pattern, position], ...], or those pairs as raw little-endian u32 to --output.
int emit_matches(const FindOptions& o, const lib::Matches& found, double ms) {
  if (o.verbose) {
    for (const lib::ShapeChoice& c : o.choices)
      std::cerr << "vyre: " << c.family << ", " << c.size_class << ": " << c.shape << " (" << origin(c) << ")\n";
    std::cerr << "vyre: lib find: " << found.size() << " matches on the GPU in " << ms
              << " ms, with compiling and the transfers\n";
  }
  if (!o.output.empty()) {
    std::vector<uint32_t> pairs;
    pairs.reserve(2 * found.size());
    for (size_t k = 0; k < found.size(); ++k) {
      pairs.push_back(found.pattern[k]);
      pairs.push_back(found.position[k]);
    }
    write_output_file(o.output, std::string_view(reinterpret_cast<const char*>(pairs.data()), pairs.size() * 4));
    return kOk;
  }
  std::string pairs = "[";
  for (size_t k = 0; k < found.size(); ++k)
    pairs += (k ? ", [" : "[") + std::to_string(found.pattern[k]) + ", " + std::to_string(found.position[k]) + "]";
  pairs += "]";
  if (!o.json) {
    std::cout << pairs << "\n";
    return kOk;
  }
  const nlohmann::json out = {{"primitive", "find"},
                              {"matches", found.size()},
                              {"result", nlohmann::json::parse(pairs)},
                              {"ms", ms},
                              {"shapes", choices_json(o.choices)}};
  std::cout << out.dump() << "\n";
  return kOk;
}

void add_find(CLI::App* lib, Action& action) {
  auto* cmd = lib->add_subcommand("find", "Every occurrence of literal byte patterns in a file (secret scanning)");
  auto o = std::make_shared<FindOptions>();
  cmd->add_option("--input", o->input, "x=@FILE (the bytes searched) or x=TEXT")->required();
  cmd->add_option("--pattern", o->patterns, "A pattern: its text's bytes (repeatable; numbered in order from 0)");
  cmd->add_option("--patterns", o->patterns_file,
                  "@FILE: a pattern a line, numbered after the --pattern ones (a \\r before a \\n is dropped)");
  cmd->add_option("--shape", o->shape,
                  "WORKGROUP,CHUNK: invocations per workgroup and bytes each (default: chosen for the device)");
  cmd->add_option("--output", o->output,
                  "Write the matches as raw little-endian u32 pairs (pattern, position) to this file instead of printing");
  cmd->add_flag("--json", o->json, "Print {\"primitive\", \"matches\", \"result\", \"ms\", \"shapes\"} as one JSON object");
  cmd->add_flag("--tune", o->tune, "Run the shape measured fastest on this device for this size (as VYRE_TUNE=1)");
  cmd->add_flag("--retune", o->retune, "Time the candidate shapes again and replace the cache's record");
  cmd->add_flag("-v,--verbose", o->verbose, "Tell on stderr which shape ran and how long the call took");
  cmd->callback([&action, o] {
    action = [o] {
      const std::vector<uint8_t> haystack = read_haystack(o->input);
      std::vector<std::string> patterns = o->patterns;
      if (!o->patterns_file.empty())
        for (std::string& p : read_pattern_lines(o->patterns_file)) patterns.push_back(std::move(p));
      if (patterns.empty())
        throw Error(ErrorKind::invalid_input, "lib find: give --pattern TEXT (repeatable) or --patterns @FILE");
      const std::optional<lib::FindShape> shape = parse_find_shape(o->shape);
      gpu::Backend backend;
      const auto start = std::chrono::steady_clock::now();
      const lib::Matches found = lib::find(backend, std::span<const uint8_t>(haystack), patterns, shape, o->library());
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      return emit_matches(*o, found, ms);
    };
  });
}

// vyre lib compact, nonzero and histogram: elements of any --dtype (for a
// histogram u32, i32, f32, u8, u16, i8 or i16); compact's mask from --mask,
// a histogram's bins from --bins and --range, or from --edges.
struct SelectOptions : LibOptions {
  std::string mask;  // V1,V2,... or @FILE
  std::string mask_dtype = "u8";
  std::string range;  // LO,HI
  std::string edges;  // E0,E1,...
};

ScalarType parse_element_type(const std::string& text, const std::string& flag) {
  const std::optional<ScalarType> type = scalar_type_from_string(text);
  if (!type)
    throw Error(ErrorKind::invalid_input,
                flag + ": '" + text + "' is not one of u32, i32, f32, f64, f16, u8, i8, u16, i16, bool");
  return *type;
}

std::vector<double> parse_numbers(const std::string& text, const std::string& flag) {
  const std::vector<uint8_t> bytes = parse_values(ScalarType::F64, text, flag);
  std::vector<double> out(bytes.size() / sizeof(double));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

void add_select_options(CLI::App* cmd, const std::shared_ptr<SelectOptions>& o, const std::string& dtypes) {
  cmd->add_option("--input", o->input, "x=V1,V2,... or x=@FILE (raw little-endian elements of --dtype)")->required();
  cmd->add_option("--dtype", o->dtype, "The element type: " + dtypes)->required();
  cmd->add_option("--shape", o->shape,
                  "WORKGROUP,ITEMS: invocations per workgroup and elements each (default: chosen for the device)");
  cmd->add_option("--output", o->output, "Write the result's raw little-endian bytes to this file instead of printing");
  cmd->add_flag("--json", o->json, "Print {\"primitive\", \"dtype\", \"result\", \"ms\", \"shapes\", ...} as one JSON object");
  cmd->add_flag("--tune", o->tune, "Run the shape measured fastest on this device for this size (as VYRE_TUNE=1)");
  cmd->add_flag("--retune", o->retune, "Time the candidate shapes again and replace the cache's record");
  cmd->add_flag("-v,--verbose", o->verbose, "Tell on stderr which shape ran and how long the call took");
}

void add_compact(CLI::App* lib, Action& action) {
  auto* cmd = lib->add_subcommand("compact", "The elements whose mask element is nonzero, in order (x[mask != 0])");
  auto o = std::make_shared<SelectOptions>();
  add_select_options(cmd, o, "any of u32, i32, f32, f64, f16, u8, i8, u16, i16, bool");
  cmd->add_option("--mask", o->mask, "V1,V2,... or @FILE (raw elements of --mask-dtype), one per element")->required();
  cmd->add_option("--mask-dtype", o->mask_dtype, "The mask's type: u8 (default), bool, u32 or i32");
  cmd->callback([&action, o] {
    action = [o] {
      const ScalarType type = parse_element_type(o->dtype, "--dtype");
      const ScalarType mask_type = parse_element_type(o->mask_dtype, "--mask-dtype");
      const std::vector<uint8_t> values = read_input(o->input, type);
      const std::vector<uint8_t> mask = !o->mask.empty() && o->mask[0] == '@'
                                            ? read_raw(o->mask.substr(1), mask_type, "--mask ")
                                            : parse_values(mask_type, o->mask, "--mask");
      gpu::Backend backend;
      const auto start = std::chrono::steady_clock::now();
      const std::vector<uint8_t> kept =
          lib::compact_bytes(backend, values, type, mask, mask_type, parse_shape(o->shape), o->library());
      return emit(*o, "compact", type, kept, ms_since(start), {{"count", kept.size() / element_bytes(type)}});
    };
  });
}

void add_nonzero(CLI::App* lib, Action& action) {
  auto* cmd = lib->add_subcommand("nonzero", "The u32 indices of the nonzero elements (-0.0 is zero, NaN is not)");
  auto o = std::make_shared<SelectOptions>();
  add_select_options(cmd, o, "any of u32, i32, f32, f64, f16, u8, i8, u16, i16, bool");
  cmd->callback([&action, o] {
    action = [o] {
      const ScalarType type = parse_element_type(o->dtype, "--dtype");
      const std::vector<uint8_t> x = read_input(o->input, type);
      gpu::Backend backend;
      const auto start = std::chrono::steady_clock::now();
      const std::vector<uint32_t> where = lib::nonzero_bytes(backend, x, type, parse_shape(o->shape), o->library());
      std::vector<uint8_t> bytes(where.size() * sizeof(uint32_t));
      if (!bytes.empty()) std::memcpy(bytes.data(), where.data(), bytes.size());
      return emit(*o, "nonzero", ScalarType::U32, bytes, ms_since(start), {{"count", where.size()}});
    };
  });
}

void add_histogram(CLI::App* lib, Action& action) {
  auto* cmd = lib->add_subcommand("histogram", "numpy.histogram's counts (u32) in --bins bins over --range, or between --edges");
  auto o = std::make_shared<SelectOptions>();
  add_select_options(cmd, o, "u32, i32, f32, u8, u16, i8 or i16");
  cmd->add_option("--bins", o->bins, "How many equal bins over --range (default 10)");
  cmd->add_option("--range", o->range, "LO,HI: the bins' range (lo == hi widens by 0.5 each way, as NumPy)");
  cmd->add_option("--edges", o->edges, "E0,E1,...: the bins' edges, non-decreasing, instead of --bins and --range");
  cmd->callback([&action, o] {
    action = [o] {
      const ScalarType type = parse_element_type(o->dtype, "--dtype");
      if (type == ScalarType::F64 || type == ScalarType::F16 || type == ScalarType::Bool)
        throw Error(ErrorKind::invalid_input, "--dtype: histogram takes u32, i32, f32, u8, u16, i8 or i16, not " +
                                                  std::string(to_string(type)));
      const std::vector<uint8_t> x = read_input(o->input, type);
      if (!o->edges.empty() && (o->bins || !o->range.empty()))
        throw Error(ErrorKind::invalid_input, "lib histogram: give --edges, or --bins and --range, not both");
      if (o->edges.empty() && o->range.empty())
        throw Error(ErrorKind::invalid_input, "lib histogram: give --range LO,HI (with --bins N), or --edges E0,E1,...");
      std::vector<double> range;
      if (!o->range.empty()) {
        range = parse_numbers(o->range, "--range");
        if (range.size() != 2)
          throw Error(ErrorKind::invalid_input, "--range: '" + o->range + "' is not LO,HI (two numbers, as 0,1)");
      }
      const std::vector<double> edges = o->edges.empty() ? std::vector<double>{} : parse_numbers(o->edges, "--edges");
      gpu::Backend backend;
      const auto start = std::chrono::steady_clock::now();
      const lib::Histogram h =
          edges.empty() ? lib::histogram_bytes(backend, x, type, o->bins.value_or(10), range[0], range[1],
                                               parse_shape(o->shape), o->library())
                        : lib::histogram_bytes(backend, x, type, std::span<const double>(edges), parse_shape(o->shape),
                                               o->library());
      const double ms = ms_since(start);
      if (o->verbose) std::cerr << "vyre: " << h.outside << " values outside the bins (or NaN), not counted\n";
      std::vector<uint8_t> bytes(h.counts.size() * sizeof(uint32_t));
      if (!bytes.empty()) std::memcpy(bytes.data(), h.counts.data(), bytes.size());
      return emit(*o, "histogram", ScalarType::U32, bytes, ms, {{"outside", h.outside}});
    };
  });
}

// vyre lib matmul, transpose and softmax: row-major matrices, their
// extents given (--m, --n, --k; --rows, --cols), from --input NAME=... (a
// and b for matmul, x for the others).
struct MatrixOptions : LibOptions {
  std::vector<std::string> inputs;  // NAME=V1,V2,... or NAME=@FILE
  uint32_t m = 0, n = 0, k = 0, rows = 0, cols = 0;
};

// The values of the --input named `name`, elements of `type`.
std::vector<uint8_t> named_input(const std::vector<std::string>& inputs, const std::string& name, ScalarType type) {
  const std::string prefix = name + "=";
  for (const std::string& option : inputs) {
    if (option.rfind(prefix, 0) != 0) continue;
    const std::string value = option.substr(prefix.size());
    if (!value.empty() && value[0] == '@') return read_raw(value.substr(1), type, "--input " + prefix);
    if (value.empty()) return {};
    return parse_values(type, value, "--input " + name);
  }
  throw Error(ErrorKind::invalid_input, "lib: give --input " + name + "=V1,V2,... or --input " + name + "=@FILE");
}

void check_input_names(const std::vector<std::string>& inputs, const std::vector<std::string>& names) {
  for (const std::string& option : inputs) {
    const std::string name = option.substr(0, option.find('='));
    if (option.find('=') == std::string::npos || std::find(names.begin(), names.end(), name) == names.end()) {
      std::string known;
      for (const std::string& n : names) known += (known.empty() ? "" : " and ") + n;
      throw Error(ErrorKind::invalid_input, "--input: '" + option + "' is not NAME=V1,V2,... or NAME=@FILE with NAME " +
                                                known);
    }
  }
}

// --shape C1,C2,...: `count` counts named in `form` (as TILE,ROWS); none:
// chosen for the device.
std::optional<std::vector<uint32_t>> parse_counts(const std::string& text, size_t count, const std::string& form,
                                                  const std::string& example) {
  if (text.empty()) return std::nullopt;
  const auto refuse = [&] {
    return Error(ErrorKind::invalid_input, "--shape: '" + text + "' is not " + form + " (" + std::to_string(count) +
                                               " counts, as " + example + ")");
  };
  std::vector<uint32_t> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t end = std::min(text.find(',', at), text.size());
    const std::string part = text.substr(at, end - at);
    if (part.empty() || part.size() > 4 || part.find_first_not_of("0123456789") != std::string::npos) throw refuse();
    out.push_back(static_cast<uint32_t>(std::stoul(part)));
    at = end + 1;
  }
  if (out.size() != count) throw refuse();
  return out;
}

std::optional<lib::MatmulShape> parse_matmul_shape(const std::string& text) {
  const auto c = parse_counts(text, 5, "TILE_M,TILE_N,TILE_K,THREAD_M,THREAD_N", "128,128,8,8,8");
  if (!c) return std::nullopt;
  return lib::MatmulShape{(*c)[0], (*c)[1], (*c)[2], (*c)[3], (*c)[4]};
}

void add_matrix_flags(CLI::App* cmd, const std::shared_ptr<MatrixOptions>& o, const std::string& inputs,
                      const std::string& shape) {
  cmd->add_option("--input", o->inputs, inputs)->required();
  cmd->add_option("--shape", o->shape, shape + " (default: chosen for the device)");
  cmd->add_option("--output", o->output, "Write the result's raw little-endian bytes to this file instead of printing");
  cmd->add_flag("--json", o->json,
                "Print {\"primitive\", \"dtype\", \"result\", \"rows\", \"cols\", \"ms\", \"shapes\"} as one JSON object");
  cmd->add_flag("--tune", o->tune, "Run the shape measured fastest on this device for this size (as VYRE_TUNE=1)");
  cmd->add_flag("--retune", o->retune, "Time the candidate shapes again and replace the cache's record");
  cmd->add_flag("-v,--verbose", o->verbose, "Tell on stderr which shape ran and how long the call took");
}

void add_matmul(CLI::App* lib, Action& action) {
  auto* cmd = lib->add_subcommand("matmul", "The product of f32 matrices: C (M x N) = A (M x K) * B (K x N), row-major");
  auto o = std::make_shared<MatrixOptions>();
  add_matrix_flags(cmd, o, "a=V1,V2,... or a=@FILE, and b=... (raw little-endian f32, row-major)",
                   "TILE_M,TILE_N,TILE_K,THREAD_M,THREAD_N: C's tile a workgroup, K's step, C's elements an invocation");
  cmd->add_option("--m", o->m, "Rows of A and C")->required();
  cmd->add_option("--n", o->n, "Columns of B and C")->required();
  cmd->add_option("--k", o->k, "Columns of A, rows of B")->required();
  cmd->callback([&action, o] {
    action = [o] {
      check_input_names(o->inputs, {"a", "b"});
      const std::vector<uint8_t> a = named_input(o->inputs, "a", ScalarType::F32);
      const std::vector<uint8_t> b = named_input(o->inputs, "b", ScalarType::F32);
      const std::optional<lib::MatmulShape> shape = parse_matmul_shape(o->shape);
      const auto floats = [](const std::vector<uint8_t>& bytes) {
        return std::span<const float>(reinterpret_cast<const float*>(bytes.data()), bytes.size() / sizeof(float));
      };
      gpu::Backend backend;
      const auto start = std::chrono::steady_clock::now();
      const std::vector<float> c = lib::matmul(backend, floats(a), floats(b), o->m, o->n, o->k, shape, o->library());
      std::vector<uint8_t> bytes(c.size() * sizeof(float));
      if (!bytes.empty()) std::memcpy(bytes.data(), c.data(), bytes.size());
      return emit(*o, "matmul", ScalarType::F32, bytes, ms_since(start), {{"rows", o->m}, {"cols", o->n}});
    };
  });
}

void add_transpose(CLI::App* lib, Action& action) {
  auto* cmd = lib->add_subcommand("transpose", "A rows x cols row-major matrix's transpose (cols x rows), bits unchanged");
  auto o = std::make_shared<MatrixOptions>();
  o->dtype = "f32";
  add_matrix_flags(cmd, o, "x=V1,V2,... or x=@FILE (raw little-endian elements of --dtype, row-major)",
                   "TILE,ROWS: square tiles of TILE (8, 16, 32), ROWS of a tile's rows an invocation");
  cmd->add_option("--dtype", o->dtype, "The element type: f32 (default), u32, i32, f64, f16, u8, i8, u16, i16 or bool");
  cmd->add_option("--rows", o->rows, "Rows of x")->required();
  cmd->add_option("--cols", o->cols, "Columns of x")->required();
  cmd->callback([&action, o] {
    action = [o] {
      check_input_names(o->inputs, {"x"});
      const ScalarType type = parse_dtype(o->dtype);
      const std::vector<uint8_t> x = named_input(o->inputs, "x", type);
      const auto c = parse_counts(o->shape, 2, "TILE,ROWS", "32,4");
      const std::optional<lib::TransposeShape> shape =
          c ? std::optional<lib::TransposeShape>(lib::TransposeShape{(*c)[0], (*c)[1]}) : std::nullopt;
      gpu::Backend backend;
      const auto start = std::chrono::steady_clock::now();
      const std::vector<uint8_t> t = lib::transpose_bytes(backend, x, type, o->rows, o->cols, shape, o->library());
      return emit(*o, "transpose", type, t, ms_since(start), {{"rows", o->cols}, {"cols", o->rows}});
    };
  });
}

void add_softmax(CLI::App* lib, Action& action) {
  auto* cmd = lib->add_subcommand("softmax", "The softmax of each row of an f32 matrix (scipy.special.softmax, axis -1)");
  auto o = std::make_shared<MatrixOptions>();
  add_matrix_flags(cmd, o, "x=V1,V2,... or x=@FILE (raw little-endian f32, row-major)",
                   "WORKGROUP,LANES: invocations a workgroup, LANES of them a row");
  cmd->add_option("--rows", o->rows, "Rows of x")->required();
  cmd->add_option("--cols", o->cols, "Columns of x: the softmax is along each row")->required();
  cmd->callback([&action, o] {
    action = [o] {
      check_input_names(o->inputs, {"x"});
      const std::vector<uint8_t> x = named_input(o->inputs, "x", ScalarType::F32);
      const auto c = parse_counts(o->shape, 2, "WORKGROUP,LANES", "256,64");
      const std::optional<lib::SoftmaxShape> shape =
          c ? std::optional<lib::SoftmaxShape>(lib::SoftmaxShape{(*c)[0], (*c)[1]}) : std::nullopt;
      const std::span<const float> values(reinterpret_cast<const float*>(x.data()), x.size() / sizeof(float));
      gpu::Backend backend;
      const auto start = std::chrono::steady_clock::now();
      const std::vector<float> p = lib::softmax(backend, values, o->rows, o->cols, shape, o->library());
      std::vector<uint8_t> bytes(p.size() * sizeof(float));
      if (!bytes.empty()) std::memcpy(bytes.data(), p.data(), bytes.size());
      return emit(*o, "softmax", ScalarType::F32, bytes, ms_since(start), {{"rows", o->rows}, {"cols", o->cols}});
    };
  });
}

}  // namespace

void add_lib(CLI::App& app, Action& action) {
  auto* lib = app.add_subcommand("lib", "Run a standard kernel (docs/lib.md) on values or a file");
  lib->require_subcommand(1);
  add_primitive(lib, action, "reduce", "One value from many: sum, min, max, and, or, xor",
                [](gpu::Backend& backend, LibOptions& o, ScalarType type, const std::vector<uint8_t>& x) {
                  return lib::reduce_bytes(backend, x, type, parse_op(o.op), parse_shape(o.shape), o.library());
                });
  add_primitive(lib, action, "scan", "Every prefix under one operator (cumsum, running min, ...)",
                [](gpu::Backend& backend, LibOptions& o, ScalarType type, const std::vector<uint8_t>& x) {
                  return lib::scan_bytes(backend, x, type, parse_op(o.op),
                                         o.exclusive ? lib::ScanKind::Exclusive : lib::ScanKind::Inclusive,
                                         parse_shape(o.shape), o.library());
                });
  add_primitive(lib, action, "sort", "The keys in order: a stable radix sort (NaN last)",
                [](gpu::Backend& backend, LibOptions& o, ScalarType type, const std::vector<uint8_t>& x) {
                  if (type == ScalarType::F64 || type == ScalarType::Bool)
                    throw Error(ErrorKind::invalid_input, "--dtype: sort takes u32, i32, f32, f16, u8, i8, u16 or i16 keys, not " +
                                                              std::string(to_string(type)));
                  return lib::sort_bytes(backend, x, type, {},
                                         o.descending ? lib::SortOrder::Descending : lib::SortOrder::Ascending,
                                         parse_sort_shape(o.shape), o.library())
                      .first;
                });
  add_primitive(lib, action, "bincount", "How many times each value 0, 1, ... occurs (u32 counts)",
                [](gpu::Backend& backend, LibOptions& o, ScalarType type, const std::vector<uint8_t>& x) {
                  if (is_float(type) || type == ScalarType::Bool)
                    throw Error(ErrorKind::invalid_input, "--dtype: bincount takes u32, i32, u8, i8, u16 or i16 values, not " +
                                                              std::string(to_string(type)));
                  if (x.empty()) return std::vector<uint8_t>(size_t{o.bins.value_or(0)} * 4, 0);
                  return lib::bincount(backend, backend.upload(x, type), o.bins, parse_shape(o.shape), o.library())->read();
                });
  add_find(lib, action);
  add_compact(lib, action);
  add_nonzero(lib, action);
  add_histogram(lib, action);
  add_matmul(lib, action);
  add_transpose(lib, action);
  add_softmax(lib, action);
}

}  // namespace vyre::cli
