// vyre lib NAME --input x=... --dtype T: runs one of vyre::lib's standard
// kernels on values from the command line or a file, for scripts and for
// checking a device. Prints the result as JSON, or writes its raw bytes.
#include <chrono>
#include <cstdio>
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
#include "vyre/lib/options.hpp"
#include "vyre/lib/reduce.hpp"
#include "vyre/lib/scan.hpp"
#include "vyre/lib/sort.hpp"
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
  if (!type || !(*type == ScalarType::U32 || *type == ScalarType::I32 || *type == ScalarType::F32 ||
                 *type == ScalarType::F64))
    throw Error(ErrorKind::invalid_input, "--dtype: '" + text + "' is not one of u32, i32, f32, f64");
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

std::vector<uint8_t> read_raw(const std::string& path, ScalarType type) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(ErrorKind::invalid_input, "--input x=@" + path + ": cannot open the file");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) throw Error(ErrorKind::invalid_input, "--input x=@" + path + ": the read failed");
  if (bytes.size() % element_bytes(type) != 0)
    throw Error(ErrorKind::invalid_input, "--input x=@" + path + ": " + std::to_string(bytes.size()) +
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
         double ms) {
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
  std::cout << out.dump() << "\n";
  return kOk;
}

using Body = std::vector<uint8_t> (*)(gpu::Backend&, LibOptions&, ScalarType, const std::vector<uint8_t>&);

void add_primitive(CLI::App* lib, Action& action, const std::string& name, const std::string& what, Body body) {
  auto* cmd = lib->add_subcommand(name, what);
  auto o = std::make_shared<LibOptions>();
  cmd->add_option("--input", o->input, "x=V1,V2,... or x=@FILE (raw little-endian elements of --dtype)")->required();
  cmd->add_option("--dtype", o->dtype,
                  name == "sort"       ? "The key type: u32, i32 or f32"
                  : name == "bincount" ? "The value type: u32 or i32"
                                       : "The element type: u32, i32, f32 or f64")
      ->required();
  if (name == "bincount") {
    cmd->add_option("--bins", o->bins, "How many bins (default: the largest value + 1); a value outside exits 3");
    cmd->add_option("--shape", o->shape, "WORKGROUP,ITEMS: invocations per workgroup and values each (default: chosen for the device)");
  } else if (name == "sort") {
    cmd->add_flag("--descending", o->descending, "Largest first, NaN first (default: smallest first, NaN last)");
    cmd->add_option("--shape", o->shape, "WORKGROUP,ITEMS: invocations per workgroup and keys each (default: chosen for the device)");
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
      const ScalarType result_type = name == "bincount" ? ScalarType::U32 : type;
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      return emit(*o, name, result_type, result, ms);
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
                  if (type == ScalarType::F64)
                    throw Error(ErrorKind::invalid_input, "--dtype: sort takes u32, i32 or f32 keys, not f64");
                  const std::optional<lib::ReduceShape> shape = parse_shape(o.shape);
                  return lib::sort_bytes(backend, x, type, {},
                                         o.descending ? lib::SortOrder::Descending : lib::SortOrder::Ascending,
                                         shape ? std::optional<lib::SortShape>(lib::SortShape{shape->workgroup, shape->items})
                                               : std::nullopt,
                                         o.library())
                      .first;
                });
  add_primitive(lib, action, "bincount", "How many times each value 0, 1, ... occurs (u32 counts)",
                [](gpu::Backend& backend, LibOptions& o, ScalarType type, const std::vector<uint8_t>& x) {
                  if (type != ScalarType::U32 && type != ScalarType::I32)
                    throw Error(ErrorKind::invalid_input, "--dtype: bincount takes u32 or i32 values, not " +
                                                              std::string(to_string(type)));
                  if (x.empty()) return std::vector<uint8_t>(size_t{o.bins.value_or(0)} * 4, 0);
                  return lib::bincount(backend, backend.upload(x, type), o.bins, parse_shape(o.shape), o.library())->read();
                });
}

}  // namespace vyre::cli
