// vyre._ext: the Python bindings of libvyre (nanobind), on the public C++
// API only (include/vyre). The Pythonic surface is here too, so that a call
// costs one crossing: python/vyre/__init__.py re-exports it.
//
// Arrays cross through the buffer protocol: inputs are borrowed views of the
// caller's memory, `into` outputs are written straight into the caller's
// arrays, and returned outputs are NumPy arrays that own the C++ vectors the
// dispatch filled (no copy). An element type other than the buffer's is a
// vyre.DTypeError (a TypeError), a non-contiguous or read-only array a
// vyre.InputError (a ValueError): nothing is converted silently. The GIL is
// released while the library compiles, dispatches and waits.
#include <Python.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "vyre/aot.hpp"
#include "vyre/checked.hpp"
#include "vyre/dispatch.hpp"
#include "vyre/error.hpp"
#include "vyre/driver_cache.hpp"
#include "vyre/gpu.hpp"
#include "vyre/json.hpp"
#include "vyre/lower.hpp"
#include "vyre/program.hpp"
#include "vyre/reference.hpp"
#include "vyre/shader_options.hpp"
#include "vyre/version.hpp"
#include "vyre/wire.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

// ---- errors ----------------------------------------------------------------

// An invalid_input error about an array's element type: raised as
// vyre.DTypeError (an InputError and a TypeError).
struct DTypeError : vyre::Error {
  explicit DTypeError(const std::string& message) : vyre::Error(vyre::ErrorKind::invalid_input, message) {}
};

[[noreturn]] void input_error(const std::string& message) {
  throw vyre::Error(vyre::ErrorKind::invalid_input, message);
}

// The kind as the C++ enumerator names it (vyre::to_string gives prose).
const char* kind_name(vyre::ErrorKind kind) {
  switch (kind) {
    case vyre::ErrorKind::invalid_program: return "invalid_program";
    case vyre::ErrorKind::invalid_wire: return "invalid_wire";
    case vyre::ErrorKind::invalid_input: return "invalid_input";
    case vyre::ErrorKind::lowering: return "lowering";
    case vyre::ErrorKind::no_adapter: return "no_adapter";
    case vyre::ErrorKind::gpu: return "gpu";
    case vyre::ErrorKind::device_lost: return "device_lost";
    case vyre::ErrorKind::limit_exceeded: return "limit_exceeded";
    case vyre::ErrorKind::io: return "io";
  }
  return "unknown";
}

void raise_python(const vyre::Error& e, bool dtype) {
  nb::list diagnostics;
  if (const auto* pe = dynamic_cast<const vyre::ProgramError*>(&e))
    for (const auto& d : pe->diagnostics()) diagnostics.append(nb::make_tuple(d.path, d.message));
  nb::object errors = nb::module_::import_("vyre._errors");
  nb::object exc = errors.attr("_from_cpp")(kind_name(e.kind()), std::string(e.what()),
                                            diagnostics, dtype);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const DTypeError& e) {
    raise_python(e, true);
  } catch (const vyre::Error& e) {
    raise_python(e, false);
  }
}

// ---- element types -----------------------------------------------------------

const char* numpy_name(vyre::ScalarType t) {
  switch (t) {
    case vyre::ScalarType::U32: return "uint32";
    case vyre::ScalarType::I32: return "int32";
    case vyre::ScalarType::F32: return "float32";
    case vyre::ScalarType::Bool: return "bool";
  }
  return "?";
}

nb::dlpack::dtype dlpack_of(vyre::ScalarType t) {
  switch (t) {
    case vyre::ScalarType::I32: return nb::dtype<int32_t>();
    case vyre::ScalarType::F32: return nb::dtype<float>();
    default: return nb::dtype<uint32_t>();
  }
}

// The vyre type of a buffer-protocol format with 4-byte items, if any.
std::optional<vyre::ScalarType> type_of_format(const char* format, Py_ssize_t itemsize) {
  if (format == nullptr) format = "B";
  if (*format == '@' || *format == '=' || *format == '<') ++format;
  if (itemsize != 4 || format[0] == '\0' || format[1] != '\0') return std::nullopt;
  switch (format[0]) {
    case 'f': return vyre::ScalarType::F32;
    case 'i': case 'l': return vyre::ScalarType::I32;
    case 'I': case 'L': return vyre::ScalarType::U32;
    default: return std::nullopt;
  }
}

std::string str_of(nb::handle value) {
  nb::object s = nb::steal(PyObject_Str(value.ptr()));
  if (!s.is_valid()) {
    PyErr_Clear();
    return "?";
  }
  return nb::cast<std::string>(s);
}

std::string describe_type(nb::handle value) {
  if (nb::hasattr(value, "dtype")) return str_of(value.attr("dtype"));
  return str_of(value.type().attr("__name__"));
}

// ---- programs ------------------------------------------------------------------

struct PyProgram {
  vyre::CheckedProgram checked;
};

vyre::Dim3 dim3_of(nb::handle value, const char* what) {
  vyre::Dim3 d{1, 1, 1};
  if (PyLong_Check(value.ptr()) && !PyBool_Check(value.ptr())) {
    d[0] = nb::cast<uint32_t>(value);
    return d;
  }
  if (!PySequence_Check(value.ptr()) || PyUnicode_Check(value.ptr()))
    throw nb::type_error((std::string(what) + " must be an int or a sequence of 1 to 3 ints").c_str());
  nb::sequence seq = nb::borrow<nb::sequence>(value);
  const size_t n = nb::len(seq);
  if (n < 1 || n > 3) throw nb::value_error((std::string(what) + " must have 1 to 3 components").c_str());
  for (size_t i = 0; i < n; ++i) d[i] = nb::cast<uint32_t>(seq[i]);
  return d;
}

vyre::ShaderOptions shader_options(nb::handle workgroup, int ulp, bool passes = true,
                                   nb::handle fixed_lengths = nb::none()) {
  vyre::ShaderOptions o;
  if (!workgroup.is_none()) o.workgroup_override = dim3_of(workgroup, "workgroup");
  if (ulp < 0 || ulp > 255) throw nb::value_error("ulp must be 0..255 (0: WGSL's builtins)");
  if (ulp > 0) o.ulp_budget = static_cast<uint8_t>(ulp);
  o.passes = passes;
  if (!fixed_lengths.is_none()) {
    if (!nb::isinstance<nb::dict>(fixed_lengths))
      throw nb::type_error("fixed_lengths must be a dict of buffer name to element count");
    for (auto [name, length] : nb::borrow<nb::dict>(fixed_lengths)) {
      const auto n = nb::cast<int64_t>(length);
      if (n < 0 || n > 0xffffffffLL) throw nb::value_error("fixed_lengths: an element count is 0 to 2**32 - 1");
      o.fixed_lengths[nb::cast<std::string>(name)] = static_cast<uint32_t>(n);
    }
  }
  return o;
}

bool looks_like_json(const std::string& s) {
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '{';
  }
  return false;
}

PyProgram program_from_source(nb::handle source) {
  if (nb::isinstance<PyProgram>(source)) return nb::cast<PyProgram>(source);
  if (PyDict_Check(source.ptr())) {
    std::string text = nb::cast<std::string>(nb::module_::import_("json").attr("dumps")(source));
    nb::gil_scoped_release release;
    return PyProgram{vyre::program_from_json(text)};
  }
  if (PyUnicode_Check(source.ptr())) {
    std::string s = nb::cast<std::string>(source);
    nb::gil_scoped_release release;
    if (looks_like_json(s)) return PyProgram{vyre::program_from_json(s)};
    return PyProgram{vyre::program_from_json_file(s)};
  }
  if (PyObject_HasAttrString(source.ptr(), "__fspath__")) {
    std::string path = nb::cast<std::string>(nb::module_::import_("os").attr("fsdecode")(source));
    nb::gil_scoped_release release;
    return PyProgram{vyre::program_from_json_file(path)};
  }
  throw nb::type_error("a program is a vyre.Program, a JSON string, a path to a .json file, or a dict");
}

nb::dict buffer_dict(const vyre::Buffer& b) {
  nb::dict d;
  d["name"] = b.name;
  d["binding"] = b.binding ? nb::cast(*b.binding) : nb::none();
  d["access"] = std::string(vyre::to_string(b.access));
  d["dtype"] = numpy_name(b.type);
  d["count"] = b.count == 0 ? nb::none() : nb::cast(b.count);
  d["output"] = b.output;
  return d;
}

// ---- the device --------------------------------------------------------------------

// One AOT cache per process and per setting (VYRE_AOT_CACHE_DIR and the
// others, read when a Backend opens or vyre.cache is called), shared by
// every Backend made from Python and by vyre.cache, so that vyre.cache.stats()
// counts this process's lookups.
std::shared_ptr<vyre::aot::Cache> process_cache() {
  static std::mutex mutex;
  static std::shared_ptr<vyre::aot::Cache> cache;
  static std::string signature;
  vyre::aot::CacheOptions options = vyre::aot::CacheOptions::from_environment();
  std::string sig = options.directory ? options.directory->string() : std::string("<none>");
  for (const auto& d : options.readonly_directories) sig += "|" + d.string();
  sig += "|" + std::to_string(options.max_bytes) + "|" + std::to_string(options.max_entries);
  std::lock_guard<std::mutex> lock(mutex);
  if (!cache || sig != signature) {
    cache = std::make_shared<vyre::aot::Cache>(std::move(options));
    signature = sig;
  }
  return cache;
}

struct PyBackend;

struct PyDeviceArray {
  std::shared_ptr<vyre::gpu::DeviceBuffer> buffer;

  nb::object numpy() const;
};

nb::object owned_array(std::vector<uint8_t>&& bytes, vyre::ScalarType type) {
  auto* holder = new std::vector<uint8_t>(std::move(bytes));
  nb::capsule owner(holder, [](void* p) noexcept { delete static_cast<std::vector<uint8_t>*>(p); });
  size_t shape[1] = {holder->size() / 4};
  return nb::ndarray<nb::numpy>(holder->data(), 1, shape, owner, nullptr, dlpack_of(type)).cast();
}

nb::object PyDeviceArray::numpy() const {
  std::vector<uint8_t> bytes;
  {
    nb::gil_scoped_release release;
    bytes = buffer->read();
  }
  return owned_array(std::move(bytes), buffer->type());
}

// Buffer-protocol views held while a dispatch (or a batch) may read or
// write them; released with the GIL held.
struct Held {
  Py_buffer view{};
  bool active = false;
  Held() = default;
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
  ~Held() {
    if (active) PyBuffer_Release(&view);
  }
};
using Holds = std::deque<Held>;

// Where a dict key points: the buffer named, or bound at that number.
struct Target {
  vyre::BufferRef ref;
  const vyre::Buffer* buffer = nullptr;
  std::string label;
};

Target resolve(const vyre::Program& program, nb::handle key, const char* what) {
  Target t;
  if (PyUnicode_Check(key.ptr())) {
    std::string name = nb::cast<std::string>(key);
    t.buffer = program.find_buffer(name);
    t.label = "'" + name + "'";
    t.ref = std::move(name);
  } else if (PyLong_Check(key.ptr()) && !PyBool_Check(key.ptr())) {
    uint32_t binding = nb::cast<uint32_t>(key);
    for (const auto& b : program.buffers)
      if (b.binding && *b.binding == binding) t.buffer = &b;
    t.label = "binding " + std::to_string(binding);
    t.ref = binding;
  } else {
    throw nb::type_error((std::string(what) + " are keyed by buffer name (str) or binding (int)").c_str());
  }
  if (t.buffer == nullptr || !t.buffer->binding) {
    std::string names;
    for (const auto& b : program.buffers)
      if (b.binding) names += (names.empty() ? "" : ", ") + b.name;
    input_error(std::string(what) + ": program '" + program.name + "' has no bound buffer " + t.label +
                " (it has: " + names + ")");
  }
  if (t.label[0] == 'b') t.label = "'" + t.buffer->name + "' (" + t.label + ")";
  return t;
}

Py_buffer& acquire(Holds& holds, nb::handle value, const Target& t, vyre::ScalarType want, bool writable,
                   const char* what) {
  Held& h = holds.emplace_back();
  int flags = PyBUF_FORMAT | PyBUF_STRIDES | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(value.ptr(), &h.view, flags) != 0) {
    PyErr_Clear();
    if (writable && PyObject_CheckBuffer(value.ptr()))
      input_error(std::string(what) + " " + t.label + " is read-only: pass a writable array");
    throw DTypeError(std::string(what) + " " + t.label + " must be a NumPy array of " + numpy_name(want) +
                     (writable ? "" : " (or a vyre.DeviceArray, or a number)") + ", not " + describe_type(value));
  }
  h.active = true;
  auto type = type_of_format(h.view.format, h.view.itemsize);
  if (!type || *type != want)
    throw DTypeError(std::string(what) + " " + t.label + " holds " + std::string(vyre::to_string(want)) +
                     ": pass " + numpy_name(want) + ", not " + describe_type(value) +
                     " (convert it yourself, e.g. a.astype(np." + numpy_name(want) + "), if that is what you mean)");
  if (!PyBuffer_IsContiguous(&h.view, 'C'))
    input_error(std::string(what) + " " + t.label + " is not C-contiguous: pass np.ascontiguousarray(a)" +
                (writable ? " and copy the result back" : ""));
  return h.view;
}

void add_scalar(vyre::Inputs& in, const Target& t, nb::handle value) {
  const vyre::ScalarType type = t.buffer->type;
  const bool is_float = PyFloat_Check(value.ptr());
  if (type == vyre::ScalarType::F32) {
    const double v = nb::cast<double>(value);
    if (!is_float && static_cast<double>(static_cast<float>(v)) != v)
      input_error("input " + t.label + ": the int " + str_of(value) +
                  " has no exact float32 value");
    in.set<float>(t.ref, {static_cast<float>(v)});
    return;
  }
  if (is_float)
    throw DTypeError("input " + t.label + " holds " + std::string(vyre::to_string(type)) +
                     ": pass an int, not a float");
  const long long v = nb::cast<long long>(value);
  if (type == vyre::ScalarType::U32) {
    if (v < 0 || v > 0xffffffffLL) input_error("input " + t.label + ": " + std::to_string(v) + " is not a u32");
    in.set<uint32_t>(t.ref, {static_cast<uint32_t>(v)});
  } else {
    if (v < INT32_MIN || v > INT32_MAX) input_error("input " + t.label + ": " + std::to_string(v) + " is not an i32");
    in.set<int32_t>(t.ref, {static_cast<int32_t>(v)});
  }
}

void add_input(vyre::Inputs& in, Holds& holds, const vyre::Program& program, nb::handle key, nb::handle value) {
  Target t = resolve(program, key, "inputs");
  if (nb::isinstance<PyDeviceArray>(value)) {
    in.device(t.ref, nb::cast<const PyDeviceArray&>(value).buffer);
    return;
  }
  if (PyBool_Check(value.ptr()))
    throw DTypeError("input " + t.label + ": bool is not a buffer type (buffers hold uint32, int32 or float32)");
  if (PyLong_Check(value.ptr()) || PyFloat_Check(value.ptr())) {
    add_scalar(in, t, value);
    return;
  }
  const vyre::ScalarType type = t.buffer->type;
  Py_buffer& v = acquire(holds, value, t, type, false, "input");
  const size_t n = static_cast<size_t>(v.len) / 4;
  switch (type) {
    case vyre::ScalarType::F32: in.view<float>(t.ref, std::span<const float>(static_cast<const float*>(v.buf), n)); break;
    case vyre::ScalarType::I32: in.view<int32_t>(t.ref, std::span<const int32_t>(static_cast<const int32_t*>(v.buf), n)); break;
    default: in.view<uint32_t>(t.ref, std::span<const uint32_t>(static_cast<const uint32_t*>(v.buf), n)); break;
  }
}

bool same_buffer(const vyre::BufferRef& ref, const vyre::Buffer& b) {
  if (const auto* name = std::get_if<std::string>(&ref)) return *name == b.name;
  return b.binding && std::get<uint32_t>(ref) == *b.binding;
}

// An output view of a runtime-sized buffer that the inputs give no length
// gives it its length: out={"out": np.empty(n)} needs no sizes={"out": n}.
void add_output(vyre::OutputViews& out, Holds& holds, const vyre::Program& program, nb::handle key, nb::handle value,
                vyre::Inputs& inputs) {
  Target t = resolve(program, key, "out");
  if (!t.buffer->output) input_error("out: " + t.label + " is not an output buffer of '" + program.name + "'");
  Py_buffer& v = acquire(holds, value, t, t.buffer->type, true, "output");
  const size_t n = static_cast<size_t>(v.len) / 4;
  switch (t.buffer->type) {
    case vyre::ScalarType::F32: out.view<float>(t.ref, std::span<float>(static_cast<float*>(v.buf), n)); break;
    case vyre::ScalarType::I32: out.view<int32_t>(t.ref, std::span<int32_t>(static_cast<int32_t*>(v.buf), n)); break;
    default: out.view<uint32_t>(t.ref, std::span<uint32_t>(static_cast<uint32_t*>(v.buf), n)); break;
  }
  if (t.buffer->runtime_sized()) {
    for (const auto& e : inputs.entries())
      if (same_buffer(e.buffer, *t.buffer)) return;
    if (n > 0xffffffffULL) input_error("out: " + t.label + " is too large");
    inputs.size(t.ref, static_cast<uint32_t>(n));
  }
}

// Everything one call gives: inputs (the positional dict, then keywords),
// sizes and grid.
struct CallArgs {
  vyre::Inputs inputs;
  std::optional<vyre::Dim3> grid;
};

void fill(CallArgs& args, Holds& holds, const vyre::Program& program, nb::handle inputs, nb::handle sizes,
          nb::handle grid, const nb::kwargs& buffers) {
  if (!inputs.is_none()) {
    if (!PyDict_Check(inputs.ptr())) throw nb::type_error("inputs must be a dict of buffer name (or binding) to array");
    for (auto [k, v] : nb::borrow<nb::dict>(inputs)) add_input(args.inputs, holds, program, k, v);
  }
  for (auto [k, v] : buffers) add_input(args.inputs, holds, program, k, v);
  if (!sizes.is_none()) {
    if (!PyDict_Check(sizes.ptr())) throw nb::type_error("sizes must be a dict of buffer name (or binding) to element count");
    for (auto [k, v] : nb::borrow<nb::dict>(sizes)) {
      Target t = resolve(program, k, "sizes");
      if (PyBool_Check(v.ptr()) || !PyLong_Check(v.ptr())) throw nb::type_error("sizes: element counts are ints");
      const long long n = nb::cast<long long>(v);
      if (n < 0 || n > 0xffffffffLL) input_error("sizes: " + t.label + ": " + std::to_string(n) + " is not an element count");
      args.inputs.size(t.ref, static_cast<uint32_t>(n));
    }
  }
  if (!grid.is_none()) args.grid = dim3_of(grid, "grid");
}

nb::dict outputs_dict(vyre::Outputs&& outputs, const vyre::Program& program) {
  nb::dict d;
  for (auto& [name, bytes] : const_cast<std::map<std::string, std::vector<uint8_t>>&>(outputs.all())) {
    const vyre::Buffer* b = program.find_buffer(name);
    d[name.c_str()] = owned_array(std::move(bytes), b ? b->type : vyre::ScalarType::U32);
  }
  return d;
}

nb::dict device_outputs_dict(const vyre::gpu::DeviceOutputs& outputs) {
  nb::dict d;
  for (const auto& [name, buffer] : outputs.all()) d[name.c_str()] = PyDeviceArray{buffer};
  return d;
}

nb::dict compile_report_dict(const vyre::gpu::CompileReport& r) {
  nb::dict d;
  d["cache_key"] = r.cache_key;
  d["cache_hit"] = r.cache_hit;
  d["memory_hit"] = r.memory_hit;
  d["cache_ms"] = r.cache_ms;
  d["lower_ms"] = r.lower_ms;
  d["shader_ms"] = r.shader_ms;
  d["pipeline_ms"] = r.pipeline_ms;
  return d;
}

struct PyBackend {
  std::shared_ptr<vyre::gpu::Backend> backend;
};

nb::object tuning_dict(const std::optional<vyre::gpu::Tuned>& tuned) {
  if (!tuned) return nb::none();
  const vyre::aot::TuningRecord& r = tuned->record;
  nb::list candidates;
  for (const vyre::aot::TuningCandidate& c : r.candidates) {
    nb::dict d;
    d["workgroup"] = nb::make_tuple(c.workgroup[0], c.workgroup[1], c.workgroup[2]);
    d["vector_width"] = c.vector_width;
    d["ran"] = c.ran;
    d["median_ms"] = c.median_ms;
    d["min_ms"] = c.min_ms;
    d["note"] = c.note;
    candidates.append(d);
  }
  nb::dict d;
  d["record_key"] = tuned->record_key;
  d["reused"] = tuned->reused;
  d["applied"] = tuned->applied;
  d["not_applied"] = tuned->not_applied;
  d["size_class"] = r.size_class;
  d["workgroup"] = nb::make_tuple(r.workgroup[0], r.workgroup[1], r.workgroup[2]);
  d["vector_width"] = r.vector_width;
  d["reason"] = r.reason;
  d["tuning_ms"] = r.tuning_ms;
  d["candidates"] = candidates;
  return d;
}

struct PyKernel {
  std::shared_ptr<vyre::gpu::Backend> backend;  // outlives the pipeline
  std::shared_ptr<vyre::gpu::Pipeline> pipeline;
  vyre::CheckedProgram checked;
  vyre::ShaderOptions options;
  // From Backend.tune: what was chosen, and the grid for the tuned dispatch.
  std::optional<vyre::gpu::Tuned> tuned;

  const vyre::Program& program() const { return checked.program(); }

  nb::dict call(nb::handle inputs, nb::handle sizes, nb::handle grid, const nb::kwargs& buffers) {
    Holds holds;
    CallArgs args;
    fill(args, holds, program(), inputs, sizes, grid, buffers);
    vyre::Outputs outputs;
    {
      nb::gil_scoped_release release;
      outputs = pipeline->dispatch(args.inputs, args.grid);
    }
    return outputs_dict(std::move(outputs), program());
  }

  void into(nb::handle inputs, nb::handle out, nb::handle sizes, nb::handle grid, const nb::kwargs& buffers) {
    Holds holds;
    CallArgs args;
    fill(args, holds, program(), inputs, sizes, grid, buffers);
    if (!PyDict_Check(out.ptr())) throw nb::type_error("out must be a dict of output buffer name to a writable array");
    vyre::OutputViews views;
    for (auto [k, v] : nb::borrow<nb::dict>(out)) add_output(views, holds, program(), k, v, args.inputs);
    nb::gil_scoped_release release;
    pipeline->dispatch_into(args.inputs, views, args.grid);
  }

  nb::dict resident(nb::handle inputs, nb::handle sizes, nb::handle grid, const nb::kwargs& buffers) {
    Holds holds;
    CallArgs args;
    fill(args, holds, program(), inputs, sizes, grid, buffers);
    vyre::gpu::DeviceOutputs outputs;
    {
      nb::gil_scoped_release release;
      outputs = pipeline->dispatch_resident(args.inputs, args.grid);
    }
    return device_outputs_dict(outputs);
  }

  nb::dict reference(nb::handle inputs, nb::handle sizes, nb::handle grid, const nb::kwargs& buffers) {
    Holds holds;
    CallArgs args;
    fill(args, holds, program(), inputs, sizes, grid, buffers);
    vyre::Outputs outputs;
    {
      nb::gil_scoped_release release;
      outputs = vyre::reference::run(checked, args.inputs, options, args.grid);
    }
    return outputs_dict(std::move(outputs), program());
  }
};

// A Batch keeps what its recorded dispatches read and write (arrays, inputs,
// views) until run() or clear().
struct PyBatch {
  std::shared_ptr<vyre::gpu::Backend> backend;
  std::unique_ptr<vyre::gpu::Batch> batch;
  Holds holds;
  std::deque<CallArgs> args;
  std::deque<vyre::OutputViews> views;
  std::vector<nb::object> kernels;

  void forget() {
    holds.clear();
    args.clear();
    views.clear();
    kernels.clear();
  }

  void into(nb::handle kernel, nb::handle inputs, nb::handle out, nb::handle sizes, nb::handle grid,
            const nb::kwargs& buffers) {
    PyKernel& k = nb::cast<PyKernel&>(kernel);
    CallArgs& a = args.emplace_back();
    fill(a, holds, k.program(), inputs, sizes, grid, buffers);
    if (!PyDict_Check(out.ptr())) throw nb::type_error("out must be a dict of output buffer name to a writable array");
    vyre::OutputViews& v = views.emplace_back();
    for (auto [key, value] : nb::borrow<nb::dict>(out)) add_output(v, holds, k.program(), key, value, a.inputs);
    kernels.push_back(nb::borrow(kernel));
    nb::gil_scoped_release release;
    batch->dispatch_into(*k.pipeline, a.inputs, v, a.grid);
  }

  nb::dict resident(nb::handle kernel, nb::handle inputs, nb::handle sizes, nb::handle grid, const nb::kwargs& buffers) {
    PyKernel& k = nb::cast<PyKernel&>(kernel);
    CallArgs& a = args.emplace_back();
    fill(a, holds, k.program(), inputs, sizes, grid, buffers);
    kernels.push_back(nb::borrow(kernel));
    vyre::gpu::DeviceOutputs outputs;
    {
      nb::gil_scoped_release release;
      outputs = batch->dispatch_resident(*k.pipeline, a.inputs, a.grid);
    }
    return device_outputs_dict(outputs);
  }

  void run() {
    try {
      nb::gil_scoped_release release;
      batch->run();
    } catch (...) {
      forget();
      throw;
    }
    forget();
  }

  void clear() {
    batch->clear();
    forget();
  }
};

// ---- the cache ---------------------------------------------------------------------

nb::object path_or_none(const std::optional<std::filesystem::path>& p) {
  return p ? nb::cast(p->string()) : nb::none();
}

nb::dict cache_stats() {
  auto cache = process_cache();
  vyre::aot::CacheStats s;
  {
    nb::gil_scoped_release release;
    s = cache->stats();
  }
  nb::dict d;
  d["hits"] = s.hits;
  d["misses"] = s.misses;
  d["writes"] = s.writes;
  d["evictions"] = s.evictions;
  d["bad_entries"] = s.bad_entries;
  d["errors"] = s.errors;
  d["bytes_written"] = s.bytes_written;
  d["lowering_ms"] = s.lowering_ms;
  d["time_saved_ms"] = s.time_saved_ms;
  d["entries"] = s.entries;
  d["bytes"] = s.bytes;
  d["driver_folders"] = s.driver_folders;
  d["driver_bytes"] = s.driver_bytes;
  d["directory"] = path_or_none(cache->directory());
  d["max_bytes"] = cache->options().max_bytes;
  d["max_entries"] = cache->options().max_entries;
  return d;
}

nb::list cache_entries() {
  auto cache = process_cache();
  std::vector<vyre::aot::EntryInfo> entries;
  {
    nb::gil_scoped_release release;
    entries = cache->list();
  }
  nb::list out;
  for (const auto& e : entries) {
    nb::dict d;
    d["key"] = e.key;
    d["directory"] = e.directory.string();
    d["readonly_layer"] = e.readonly_layer;
    d["state"] = std::string(vyre::aot::to_string(e.state));
    d["problem"] = e.problem;
    d["program"] = e.program;
    d["program_digest"] = e.parts.program_digest;
    d["fingerprint"] = e.parts.fingerprint;
    d["wgsl_bytes"] = e.wgsl_bytes;
    d["created_unix_ms"] = e.created_unix_ms;
    d["last_used_unix_ms"] = e.last_used_unix_ms;
    out.append(d);
  }
  return out;
}

// As `vyre cache explain`: the key parts for the fingerprint given, else
// the backend's, else the override setting's, else the local adapter's.
vyre::aot::KeyParts resolve_key_parts(const vyre::CheckedProgram& program, const vyre::ShaderOptions& requested,
                                      nb::handle fingerprint, nb::handle backend) {
  // The shader a first dispatch uses, as `vyre cache explain` keys it.
  if (!backend.is_none()) {
    const vyre::gpu::Backend& b = *nb::cast<PyBackend&>(backend).backend;
    return b.wgsl_target(program, vyre::gpu::compiled_options(program, requested, b.widens())).parts;
  }
  const vyre::ShaderOptions options = vyre::gpu::compiled_options(
      program, requested, vyre::gpu::BackendOptions::from_environment().widen.value_or(vyre::gpu::kWidenByDefault));
  if (!fingerprint.is_none()) return vyre::gpu::wgsl_target(program, nb::cast<std::string>(fingerprint), options).parts;
  if (const char* v = std::getenv("VYRE_BACKEND_FINGERPRINT_OVERRIDE"); v != nullptr && *v != '\0')
    return vyre::gpu::wgsl_target(program, v, options).parts;
  nb::gil_scoped_release release;
  vyre::gpu::BackendOptions backend_options;
  backend_options.cache = process_cache();
  return vyre::gpu::Backend(backend_options).wgsl_target(program, options).parts;
}

nb::dict cache_explain(nb::handle program, nb::handle workgroup, int ulp, nb::handle fingerprint, nb::handle backend) {
  PyProgram p = program_from_source(program);
  vyre::ShaderOptions options = shader_options(workgroup, ulp);
  const vyre::aot::KeyParts parts = resolve_key_parts(p.checked, options, fingerprint, backend);
  auto cache = process_cache();
  vyre::aot::Explanation x;
  {
    nb::gil_scoped_release release;
    x = cache->explain(parts);
  }
  nb::dict d;
  nb::list components;
  for (const auto& c : x.components) {
    nb::dict cd;
    cd["name"] = c.name;
    cd["value"] = c.value;
    cd["hash"] = c.hash;
    components.append(cd);
  }
  d["components"] = components;
  d["spec_hash"] = x.spec_hash;
  d["key"] = x.key;
  d["hit"] = x.hit;
  d["found_in"] = path_or_none(x.found_in);
  d["problem"] = x.problem;
  nb::list neighbours;
  for (const auto& n : x.same_program) {
    nb::dict nd;
    nd["key"] = n.key;
    nd["directory"] = n.directory.string();
    nd["differences"] = n.differences;
    neighbours.append(nd);
  }
  d["same_program"] = neighbours;
  return d;
}

nb::dict adapter_dict(const vyre::gpu::AdapterInfo& a) {
  nb::dict d;
  d["index"] = a.index;
  d["name"] = a.name;
  d["vendor"] = a.vendor;
  d["driver"] = a.driver;
  d["backend"] = a.backend;
  d["type"] = a.type;
  d["vendor_id"] = a.vendor_id;
  d["device_id"] = a.device_id;
  d["fingerprint"] = a.fingerprint;
  return d;
}

vyre::gpu::BackendOptions backend_options(const std::optional<std::string>& adapter,
                                          const std::optional<std::string>& backend) {
  vyre::gpu::BackendOptions o;
  o.adapter = adapter;
  o.backend = backend;
  return o;
}

}  // namespace

NB_MODULE(_ext, m) {
  m.doc() = "vyre's C++ library, bound with nanobind (use the vyre package, not this module)";
  nb::register_exception_translator(translate);

  m.attr("__version__") = vyre::kVersion;
  m.def("wgpu_native_version", &vyre::gpu::wgpu_native_version);

  // ---- Program ----
  nb::class_<PyProgram>(m, "Program")
      .def_static(
          "from_json", [](nb::handle source) { return program_from_source(source); }, "source"_a,
          "A program from JSON text, or from a path (str or os.PathLike) to a .json file. Raises ProgramError.")
      .def_static(
          "from_dict",
          [](nb::handle d) {
            if (!PyDict_Check(d.ptr())) throw nb::type_error("from_dict takes a dict (the program's JSON object)");
            return program_from_source(d);
          },
          "d"_a, "A program from a dict holding its JSON object. Raises ProgramError.")
      .def_prop_ro("name", [](const PyProgram& p) { return p.checked.name(); })
      .def_prop_ro("digest", [](const PyProgram& p) { return vyre::digest(p.checked.program()).hex(); },
                   "The canonical SHA-256 digest (hex), as `vyre hash` prints it.")
      .def_prop_ro("workgroup_size",
                   [](const PyProgram& p) {
                     const auto& w = p.checked.program().workgroup_size;
                     return nb::make_tuple(w[0], w[1], w[2]);
                   })
      .def_prop_ro("buffers",
                   [](const PyProgram& p) {
                     nb::list l;
                     for (const auto& b : p.checked.program().buffers) l.append(buffer_dict(b));
                     return l;
                   })
      .def(
          "wgsl",
          [](const PyProgram& p, nb::handle workgroup, int ulp, bool passes, nb::handle fixed_lengths) {
            vyre::ShaderOptions o = shader_options(workgroup, ulp, passes, fixed_lengths);
            nb::gil_scoped_release release;
            return vyre::lower_to_wgsl(p.checked, o);
          },
          "workgroup"_a = nb::none(), "ulp"_a = 0, nb::kw_only(), "passes"_a = true, "fixed_lengths"_a = nb::none(),
          "The WGSL, as `vyre lower` prints it.")
      .def("to_json", [](const PyProgram& p, int indent) { return vyre::program_to_json(p.checked.program(), indent); },
           "indent"_a = 2)
      .def("__eq__", [](const PyProgram& a, nb::handle b) {
        return nb::isinstance<PyProgram>(b) &&
               vyre::digest(a.checked.program()) == vyre::digest(nb::cast<const PyProgram&>(b).checked.program());
      })
      .def("__hash__", [](const PyProgram& p) { return nb::hash(nb::str(vyre::digest(p.checked.program()).hex().c_str())); })
      .def("__repr__", [](const PyProgram& p) {
        return "<vyre.Program '" + p.checked.name() + "' " + vyre::digest(p.checked.program()).hex().substr(0, 12) + ">";
      });

  m.def(
      "validate", [](nb::handle source) { return program_from_source(source); }, "source"_a,
      "Parses and checks a program (JSON text, a path, a dict or a Program); returns it, or raises ProgramError "
      "whose .diagnostics lists every problem as (JSON path, message).");

  // ---- DeviceArray ----
  nb::class_<PyDeviceArray>(m, "DeviceArray")
      .def_prop_ro("dtype", [](const PyDeviceArray& a) { return numpy_name(a.buffer->type()); })
      .def_prop_ro("size", [](const PyDeviceArray& a) { return a.buffer->elements(); })
      .def_prop_ro("shape", [](const PyDeviceArray& a) { return nb::make_tuple(a.buffer->elements()); })
      .def_prop_ro("nbytes", [](const PyDeviceArray& a) { return a.buffer->size_bytes(); })
      .def("__len__", [](const PyDeviceArray& a) { return a.buffer->elements(); })
      .def("numpy", &PyDeviceArray::numpy, "Copies the contents back (waits for the work that writes them).")
      .def(
          "read_into",
          [](const PyDeviceArray& a, nb::handle array) {
            Holds holds;
            Target t{std::string("array"), nullptr, "array"};
            Py_buffer& v = acquire(holds, array, t, a.buffer->type(), true, "read_into:");
            if (static_cast<uint64_t>(v.len) != a.buffer->size_bytes())
              input_error("read_into: the array holds " + std::to_string(v.len / 4) + " elements; the DeviceArray " +
                          std::to_string(a.buffer->elements()));
            nb::gil_scoped_release release;
            a.buffer->read_into(std::span<uint8_t>(static_cast<uint8_t*>(v.buf), static_cast<size_t>(v.len)));
          },
          "array"_a)
      .def(
          "__array__",
          [](const PyDeviceArray& a, nb::handle dtype, nb::handle) {
            nb::object arr = a.numpy();
            return dtype.is_none() ? arr : arr.attr("astype")(dtype);
          },
          "dtype"_a = nb::none(), "copy"_a = nb::none())
      .def("__repr__", [](const PyDeviceArray& a) {
        return "<vyre.DeviceArray " + std::string(numpy_name(a.buffer->type())) + "[" +
               std::to_string(a.buffer->elements()) + "]>";
      });

  // ---- Kernel ----
  nb::class_<PyKernel>(m, "Kernel")
      .def("__call__", &PyKernel::call, "inputs"_a = nb::none(), nb::kw_only(), "sizes"_a = nb::none(),
           "grid"_a = nb::none(), "buffers"_a,
           "Dispatches once; returns every output as a dict of NumPy arrays.")
      .def("into", &PyKernel::into, "inputs"_a = nb::none(), nb::kw_only(), "out"_a, "sizes"_a = nb::none(),
           "grid"_a = nb::none(), "buffers"_a,
           "Dispatches once, reading the outputs named in `out` straight into those arrays.")
      .def("resident", &PyKernel::resident, "inputs"_a = nb::none(), nb::kw_only(), "sizes"_a = nb::none(),
           "grid"_a = nb::none(), "buffers"_a,
           "Dispatches once, keeping every output on the GPU: a dict of DeviceArray.")
      .def("reference", &PyKernel::reference, "inputs"_a = nb::none(), nb::kw_only(), "sizes"_a = nb::none(),
           "grid"_a = nb::none(), "buffers"_a,
           "Runs the CPU reference interpreter on the same inputs; returns outputs as __call__ does.")
      .def_prop_ro("program", [](const PyKernel& k) { return PyProgram{k.checked}; })
      .def_prop_ro("wgsl", [](const PyKernel& k) { return k.pipeline->wgsl(); })
      .def_prop_ro("workgroup_size",
                   [](const PyKernel& k) {
                     const auto& w = k.pipeline->interface().workgroup_size;
                     return nb::make_tuple(w[0], w[1], w[2]);
                   })
      .def_prop_ro("cache_key", [](const PyKernel& k) { return k.pipeline->compile_report().cache_key; })
      .def_prop_ro("cache_hit", [](const PyKernel& k) { return k.pipeline->compile_report().cache_hit; })
      .def_prop_ro("compile_report", [](const PyKernel& k) { return compile_report_dict(k.pipeline->compile_report()); })
      .def_prop_ro("tuning", [](const PyKernel& k) -> nb::object { return tuning_dict(k.tuned); })
      .def_prop_ro("tuned_grid",
                   [](const PyKernel& k) -> nb::object {
                     if (!k.tuned || !k.tuned->grid) return nb::none();
                     const vyre::Dim3& g = *k.tuned->grid;
                     return nb::make_tuple(g[0], g[1], g[2]);
                   })
      .def("__repr__", [](const PyKernel& k) { return "<vyre.Kernel '" + k.checked.name() + "'>"; });

  // ---- Batch ----
  nb::class_<PyBatch>(m, "Batch")
      .def("into", &PyBatch::into, "kernel"_a, "inputs"_a = nb::none(), nb::kw_only(), "out"_a,
           "sizes"_a = nb::none(), "grid"_a = nb::none(), "buffers"_a)
      .def("resident", &PyBatch::resident, "kernel"_a, "inputs"_a = nb::none(), nb::kw_only(),
           "sizes"_a = nb::none(), "grid"_a = nb::none(), "buffers"_a)
      .def("run", &PyBatch::run)
      .def("clear", &PyBatch::clear)
      .def("__len__", [](const PyBatch& b) { return b.batch->size(); })
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def(
          "__exit__",
          [](PyBatch& b, nb::handle type, nb::handle, nb::handle) {
            if (type.is_none())
              b.run();
            else
              b.clear();
            return false;
          },
          "exc_type"_a.none(), "exc"_a.none(), "tb"_a.none());

  // ---- Backend ----
  nb::class_<PyBackend>(m, "Backend")
      .def(
          "__init__",
          [](PyBackend* self, const std::optional<std::string>& adapter, const std::optional<std::string>& backend) {
            vyre::gpu::BackendOptions options = backend_options(adapter, backend);
            options.cache = process_cache();
            std::shared_ptr<vyre::gpu::Backend> b;
            {
              nb::gil_scoped_release release;
              b = std::make_shared<vyre::gpu::Backend>(options);
            }
            new (self) PyBackend{std::move(b)};
          },
          "adapter"_a = nb::none(), "backend"_a = nb::none())
      .def_prop_ro("adapter", [](const PyBackend& b) { return adapter_dict(b.backend->adapter()); })
      .def_prop_ro("fingerprint", [](const PyBackend& b) { return b.backend->fingerprint(); })
      .def(
          "compile",
          [](PyBackend& b, nb::handle program, nb::handle workgroup, int ulp, bool passes, nb::handle fixed_lengths) {
            PyProgram p = program_from_source(program);
            vyre::ShaderOptions options = shader_options(workgroup, ulp, passes, fixed_lengths);
            std::shared_ptr<vyre::gpu::Pipeline> pipeline;
            {
              nb::gil_scoped_release release;
              pipeline = std::make_shared<vyre::gpu::Pipeline>(b.backend->compile(p.checked, options));
            }
            return PyKernel{b.backend, std::move(pipeline), p.checked, options, std::nullopt};
          },
          "program"_a, "workgroup"_a = nb::none(), "ulp"_a = 0, nb::kw_only(), "passes"_a = true,
          "fixed_lengths"_a = nb::none())
      .def(
          "tune",
          [](PyBackend& b, nb::handle program, nb::handle inputs, nb::handle sizes, nb::handle grid,
             nb::handle workgroup, int ulp, bool passes, nb::handle fixed_lengths, bool retune,
             const nb::kwargs& buffers) {
            PyProgram p = program_from_source(program);
            const vyre::ShaderOptions options = shader_options(workgroup, ulp, passes, fixed_lengths);
            Holds holds;
            CallArgs args;
            fill(args, holds, p.checked.program(), inputs, sizes, grid, buffers);
            vyre::gpu::TuneOptions tuning = vyre::gpu::TuneOptions::from_environment();
            tuning.retune = retune;
            std::optional<vyre::gpu::Tuned> tuned;
            {
              nb::gil_scoped_release release;
              tuned.emplace(b.backend->tune(p.checked, args.inputs, args.grid, options, tuning));
            }
            auto pipeline = std::make_shared<vyre::gpu::Pipeline>(std::move(tuned->pipeline));
            return PyKernel{b.backend, std::move(pipeline), p.checked, options, std::move(tuned)};
          },
          "program"_a, "inputs"_a = nb::none(), nb::kw_only(), "sizes"_a = nb::none(), "grid"_a = nb::none(),
          "workgroup"_a = nb::none(), "ulp"_a = 0, "passes"_a = true, "fixed_lengths"_a = nb::none(), "retune"_a = false,
          "buffers"_a,
          "Compiles the program in the configuration fastest on this device for a dispatch like this one "
          "(docs/tuning.md): from the cache's tuning record, else timed now and recorded. Dispatch the kernel "
          "with grid=kernel.tuned_grid for dispatches of this size; kernel.tuning says what was chosen.")
      .def(
          "upload",
          [](PyBackend& b, nb::handle array) {
            if (PyBool_Check(array.ptr()) || PyLong_Check(array.ptr()) || PyFloat_Check(array.ptr()))
              throw DTypeError("upload takes an array of uint32, int32 or float32, not a number");
            Holds holds;
            Held& h = holds.emplace_back();
            if (PyObject_GetBuffer(array.ptr(), &h.view, PyBUF_FORMAT | PyBUF_STRIDES) != 0) {
              PyErr_Clear();
              throw DTypeError("upload takes a NumPy array of uint32, int32 or float32, not " + describe_type(array));
            }
            h.active = true;
            auto type = type_of_format(h.view.format, h.view.itemsize);
            if (!type) throw DTypeError("upload: buffers hold uint32, int32 or float32, not " + describe_type(array));
            if (!PyBuffer_IsContiguous(&h.view, 'C')) input_error("upload: the array is not C-contiguous");
            std::shared_ptr<vyre::gpu::DeviceBuffer> buffer;
            {
              nb::gil_scoped_release release;
              buffer = b.backend->upload(
                  std::span<const uint8_t>(static_cast<const uint8_t*>(h.view.buf), static_cast<size_t>(h.view.len)),
                  *type);
            }
            return PyDeviceArray{std::move(buffer)};
          },
          "array"_a)
      .def("batch", [](PyBackend& b) {
        return PyBatch{b.backend, std::make_unique<vyre::gpu::Batch>(*b.backend), {}, {}, {}, {}};
      })
      .def_prop_ro("counters",
                   [](const PyBackend& b) {
                     auto c = b.backend->counters();
                     nb::dict d;
                     d["buffers_created"] = c.buffers_created;
                     d["bind_groups_created"] = c.bind_groups_created;
                     d["submits"] = c.submits;
                     d["devices_opened"] = c.devices_opened;
                     return d;
                   })
      .def_prop_ro("report",
                   [](const PyBackend& b) {
                     const auto& r = b.backend->report();
                     nb::dict d;
                     d["instance_ms"] = r.instance_ms;
                     d["adapter_ms"] = r.adapter_ms;
                     d["device_ms"] = r.device_ms;
                     d["cache_ms"] = r.cache_ms;
                     return d;
                   })
      .def("__repr__", [](const PyBackend& b) { return "<vyre.Backend '" + b.backend->adapter().name + "'>"; });

  m.def(
      "devices",
      [](const std::optional<std::string>& backend) {
        std::vector<vyre::gpu::AdapterInfo> adapters;
        {
          nb::gil_scoped_release release;
          adapters = vyre::gpu::enumerate_adapters(backend_options(std::nullopt, backend));
        }
        nb::list l;
        for (const auto& a : adapters) l.append(adapter_dict(a));
        return l;
      },
      "backend"_a = nb::none(), "The GPU adapters, as `vyre devices` lists them.");

  // ---- the cache (vyre.cache wraps these) ----
  m.def("_cache_stats", &cache_stats);
  m.def("_place_driver_cache", [] {
    const vyre::gpu::DriverCachePlacement p = vyre::gpu::place_driver_cache();
    nb::dict d;
    d["active"] = p.active;
    d["data_folder"] = p.active ? nb::cast(p.data_folder.string()) : nb::none();
    d["fingerprint"] = p.fingerprint;
    d["files_before"] = p.files_before;
    d["reason"] = p.reason;
    return d;
  });
  m.def("_cache_zero_stats", [] {
    auto c = process_cache();
    nb::gil_scoped_release release;
    c->zero_stats();
  });
  m.def("_cache_directory", [] { return path_or_none(process_cache()->directory()); });
  m.def("_cache_entries", &cache_entries);
  m.def("_cache_clear", [] {
    auto c = process_cache();
    nb::gil_scoped_release release;
    return c->clear();
  });
  m.def("_cache_flush", [] {
    auto c = process_cache();
    nb::gil_scoped_release release;
    c->flush();
  });
  m.def("_cache_explain", &cache_explain, "program"_a, "workgroup"_a = nb::none(), "ulp"_a = 0,
        "fingerprint"_a = nb::none(), "backend"_a = nb::none());
}
