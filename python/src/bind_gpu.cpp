// The device from Python: vyre.Backend (compile, tune, upload, batch),
// vyre.Kernel and its dispatches, vyre.Batch, vyre.DeviceArray, and
// vyre.devices().
//
// Arrays cross through the buffer protocol: inputs are borrowed views of the
// caller's memory, `into` outputs are written straight into the caller's
// arrays, and returned outputs are NumPy arrays that own the C++ vectors the
// dispatch filled (no copy). An element type other than the buffer's is a
// vyre.DTypeError (a TypeError), a non-contiguous or read-only array a
// vyre.InputError (a ValueError): nothing is converted silently. Numbers
// (sizes, grid, scalar inputs) go through arguments.hpp. The GIL is
// released while the library compiles, dispatches and waits.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <deque>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "bind.hpp"
#include "device_array.hpp"
#include "vyre/dispatch.hpp"
#include "vyre/driver_cache.hpp"
#include "vyre/reference.hpp"

namespace vyre::python {

using namespace nb::literals;

namespace {

nb::dict adapter_dict(const gpu::AdapterInfo& a) {
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

gpu::BackendOptions backend_options(const std::optional<std::string>& adapter,
                                          const std::optional<std::string>& backend) {
  gpu::BackendOptions o;
  o.adapter = adapter;
  o.backend = backend;
  return o;
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
  BufferRef ref;
  const Buffer* buffer = nullptr;
  std::string label;
};

Target resolve(const Program& program, nb::handle key, const char* what) {
  Target t;
  if (PyUnicode_Check(key.ptr())) {
    std::string name = nb::cast<std::string>(key);
    t.buffer = program.find_buffer(name);
    t.label = "'" + name + "'";
    t.ref = std::move(name);
  } else if (PyLong_Check(key.ptr()) && !PyBool_Check(key.ptr())) {
    const uint32_t binding = u32_argument(key, std::string(what) + " key", "binding");
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

// An array that exports no buffer but a DLPack capsule (__dlpack__: PyTorch's
// CPU tensors, JAX's, CuPy's) or NumPy's array interface, as a NumPy view of
// the same memory (no copy; the view's buffer keeps it alive). Memory on a
// device is refused: it is never copied silently.
nb::object host_view(nb::handle value, const Target& t, const char* what) {
  nb::module_ numpy = nb::module_::import_("numpy");
  if (nb::hasattr(value, "__dlpack__")) {
    if (nb::hasattr(value, "__dlpack_device__")) {
      nb::object device = value.attr("__dlpack_device__")();
      const int type = nb::cast<int>(device[0]);
      if (type != 1 && type != 3)  // kDLCPU, kDLCUDAHost: host memory
        input_error(std::string(what) + " " + t.label + " lives in device memory (DLPack device type " +
                    std::to_string(type) + "): vyre reads host memory; copy it to the host yourself (e.g. "
                    "tensor.cpu()), or pass a vyre.DeviceArray");
    }
    return numpy.attr("from_dlpack")(value);
  }
  return numpy.attr("asarray")(value);
}

Py_buffer& acquire(Holds& holds, nb::handle value, const Target& t, ScalarType want, bool writable,
                   const char* what) {
  Held& h = holds.emplace_back();
  int flags = PyBUF_FORMAT | PyBUF_STRIDES | (writable ? PyBUF_WRITABLE : 0);
  nb::object view;
  if (!PyObject_CheckBuffer(value.ptr()) &&
      (nb::hasattr(value, "__dlpack__") || nb::hasattr(value, "__array_interface__"))) {
    view = host_view(value, t, what);
    value = view;
  }
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
    throw DTypeError(std::string(what) + " " + t.label + " holds " + std::string(to_string(want)) +
                     ": pass " + numpy_name(want) + ", not " + describe_type(value) +
                     " (convert it yourself, e.g. a.astype(np." + numpy_name(want) + "), if that is what you mean)");
  if (!PyBuffer_IsContiguous(&h.view, 'C'))
    input_error(std::string(what) + " " + t.label + " is not C-contiguous: pass np.ascontiguousarray(a)" +
                (writable ? " and copy the result back" : ""));
  return h.view;
}

void add_scalar(Inputs& in, const Target& t, nb::handle value) {
  const ScalarType type = t.buffer->type;
  const std::string argument = "input " + t.label;
  if (type == ScalarType::F32) {
    in.set<float>(t.ref, {f32_argument(value, argument)});
    return;
  }
  if (type == ScalarType::F16) {  // the nearest f16, as NumPy's float16(x) gives
    in.set<half>(t.ref, {f16_argument(value, argument)});
    return;
  }
  if (type == ScalarType::F64) {
    in.set<double>(t.ref, {f64_argument(value, argument)});
    return;
  }
  if (type == ScalarType::Bool) {
    if (!PyBool_Check(value.ptr()))
      throw DTypeError(argument + " holds bool: pass True or False, not " + describe_type(value));
    in.set<bool>(t.ref, {value.ptr() == Py_True});
    return;
  }
  if (!is_int(value))
    throw DTypeError(argument + " holds " + std::string(to_string(type)) + ": pass an int, not " + describe_type(value));
  if (is_narrow(type)) {
    // The value must be one the element holds: a store would keep the low
    // bits, but an argument that does not fit is the caller's mistake.
    const int32_t v = narrow_argument(value, argument, type);
    switch (type) {
      case ScalarType::U8: in.set<uint8_t>(t.ref, {static_cast<uint8_t>(v)}); break;
      case ScalarType::I8: in.set<int8_t>(t.ref, {static_cast<int8_t>(v)}); break;
      case ScalarType::U16: in.set<uint16_t>(t.ref, {static_cast<uint16_t>(v)}); break;
      default: in.set<int16_t>(t.ref, {static_cast<int16_t>(v)}); break;
    }
    return;
  }
  if (type == ScalarType::U32)
    in.set<uint32_t>(t.ref, {u32_argument(value, argument, "value")});
  else
    in.set<int32_t>(t.ref, {i32_argument(value, argument)});
}

void add_input(Inputs& in, Holds& holds, const Program& program, nb::handle key, nb::handle value) {
  Target t = resolve(program, key, "inputs");
  if (nb::isinstance<PyDeviceArray>(value)) {
    in.device(t.ref, nb::cast<const PyDeviceArray&>(value).buffer);
    return;
  }
  if (PyBool_Check(value.ptr()) && t.buffer->type != ScalarType::Bool)
    throw DTypeError("input " + t.label + " holds " + std::string(to_string(t.buffer->type)) +
                     (t.buffer->type == ScalarType::F32 ? ": pass a float or an array, not a bool" : ": pass an int or an array, not a bool"));
  if (PyBool_Check(value.ptr()) || is_number(value)) {
    add_scalar(in, t, value);
    return;
  }
  const ScalarType type = t.buffer->type;
  Py_buffer& v = acquire(holds, value, t, type, false, "input");
  // acquire() proved the array's dtype is the buffer's: its bytes are its contents.
  in.view(t.ref, std::span<const uint8_t>(static_cast<const uint8_t*>(v.buf), static_cast<size_t>(v.len)));
}

bool same_buffer(const BufferRef& ref, const Buffer& b) {
  if (const auto* name = std::get_if<std::string>(&ref)) return *name == b.name;
  return b.binding && std::get<uint32_t>(ref) == *b.binding;
}

// An output view of a runtime-sized buffer that the inputs give no length
// gives it its length: out={"out": np.empty(n)} needs no sizes={"out": n}.
void add_output(OutputViews& out, Holds& holds, const Program& program, nb::handle key, nb::handle value,
                Inputs& inputs) {
  Target t = resolve(program, key, "out");
  if (!t.buffer->output) input_error("out: " + t.label + " is not an output buffer of '" + program.name + "'");
  Py_buffer& v = acquire(holds, value, t, t.buffer->type, true, "output");
  const size_t n = static_cast<size_t>(v.len) / element_bytes(t.buffer->type);
  out.bytes(t.ref, std::span<uint8_t>(static_cast<uint8_t*>(v.buf), static_cast<size_t>(v.len)));
  if (t.buffer->runtime_sized()) {
    for (const auto& e : inputs.entries())
      if (same_buffer(e.buffer, *t.buffer)) return;
    if (n > 0xffffffffULL) input_error("out: " + t.label + " is too large");
    inputs.size(t.ref, static_cast<uint32_t>(n));
  }
}

// Everything one call gives: inputs (the positional dict, then keywords),
// sizes, and the launch (grid, or dim: the domain, kept in `inputs`).
struct CallArgs {
  Inputs inputs;
  std::optional<Dim3> grid;
  std::map<std::string, nb::tuple> shapes;  // outputs sized by a shape (sizes={"out": (h, w)})
};

void fill(CallArgs& args, Holds& holds, const Program& program, nb::handle inputs, nb::handle sizes,
          nb::handle grid, nb::handle dim, const nb::kwargs& buffers) {
  if (!inputs.is_none()) {
    if (!PyDict_Check(inputs.ptr())) throw nb::type_error("inputs must be a dict of buffer name (or binding) to array");
    for (auto [k, v] : nb::borrow<nb::dict>(inputs)) add_input(args.inputs, holds, program, k, v);
  }
  for (auto [k, v] : buffers) add_input(args.inputs, holds, program, k, v);
  if (!sizes.is_none()) {
    if (!PyDict_Check(sizes.ptr())) throw nb::type_error("sizes must be a dict of buffer name (or binding) to element count");
    for (auto [k, v] : nb::borrow<nb::dict>(sizes)) {
      Target t = resolve(program, k, "sizes");
      if (!PyTuple_Check(v.ptr())) {
        args.inputs.size(t.ref, u32_argument(v, item_name("sizes", k), "length"));
        continue;
      }
      // A shape: its element count is the length, and the output comes back in that shape.
      uint64_t n = 1;
      nb::tuple shape = nb::borrow<nb::tuple>(v);
      for (size_t i = 0; i < nb::len(shape); ++i)
        n *= u32_argument(shape[i], item_name("sizes", k) + "[" + std::to_string(i) + "]", "extent");
      if (nb::len(shape) == 0 || n > UINT32_MAX)
        throw RangeError(item_name("sizes", k) + " = " + nb::cast<std::string>(nb::repr(v)) +
                         " does not hold a u32 length of elements (1 to 4294967295, at least one extent)");
      args.inputs.size(t.ref, static_cast<uint32_t>(n));
      args.shapes[t.buffer->name] = shape;
    }
  }
  if (!grid.is_none()) args.grid = dim3_argument(grid, "grid", "workgroup count");
  if (!dim.is_none()) args.inputs.dim(dim3_argument(dim, "dim", "invocation count"));
}

nb::dict outputs_dict(Outputs&& outputs, const Program& program, const CallArgs& args) {
  nb::dict d;
  for (auto& [name, bytes] : const_cast<std::map<std::string, std::vector<uint8_t>>&>(outputs.all())) {
    const Buffer* b = program.find_buffer(name);
    nb::object array = owned_array(std::move(bytes), b ? b->type : ScalarType::U32);
    if (auto shape = args.shapes.find(name); shape != args.shapes.end()) array = array.attr("reshape")(shape->second);
    d[name.c_str()] = array;
  }
  return d;
}

nb::dict device_outputs_dict(const gpu::DeviceOutputs& outputs) {
  nb::dict d;
  for (const auto& [name, buffer] : outputs.all()) d[name.c_str()] = PyDeviceArray{buffer, {}};
  return d;
}

nb::dict compile_report_dict(const gpu::CompileReport& r) {
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

nb::object tuning_dict(const std::optional<gpu::Tuned>& tuned) {
  if (!tuned) return nb::none();
  const aot::TuningRecord& r = tuned->record;
  nb::list candidates;
  for (const aot::TuningCandidate& c : r.candidates) {
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
  std::shared_ptr<gpu::Backend> backend;  // outlives the pipeline
  std::shared_ptr<gpu::Pipeline> pipeline;
  CheckedProgram checked;
  ShaderOptions options;
  // From Backend.tune: what was chosen, and the grid for the tuned dispatch.
  std::optional<gpu::Tuned> tuned;

  const Program& program() const { return checked.program(); }

  nb::dict call(nb::handle inputs, nb::handle sizes, nb::handle grid, nb::handle dim, const nb::kwargs& buffers) {
    Holds holds;
    CallArgs args;
    fill(args, holds, program(), inputs, sizes, grid, dim, buffers);
    Outputs outputs;
    {
      nb::gil_scoped_release release;
      outputs = pipeline->dispatch(args.inputs, args.grid);
    }
    return outputs_dict(std::move(outputs), program(), args);
  }

  void into(nb::handle inputs, nb::handle out, nb::handle sizes, nb::handle grid, nb::handle dim, const nb::kwargs& buffers) {
    Holds holds;
    CallArgs args;
    fill(args, holds, program(), inputs, sizes, grid, dim, buffers);
    if (!PyDict_Check(out.ptr())) throw nb::type_error("out must be a dict of output buffer name to a writable array");
    OutputViews views;
    for (auto [k, v] : nb::borrow<nb::dict>(out)) add_output(views, holds, program(), k, v, args.inputs);
    nb::gil_scoped_release release;
    pipeline->dispatch_into(args.inputs, views, args.grid);
  }

  nb::dict resident(nb::handle inputs, nb::handle sizes, nb::handle grid, nb::handle dim, const nb::kwargs& buffers) {
    Holds holds;
    CallArgs args;
    fill(args, holds, program(), inputs, sizes, grid, dim, buffers);
    gpu::DeviceOutputs outputs;
    {
      nb::gil_scoped_release release;
      outputs = pipeline->dispatch_resident(args.inputs, args.grid);
    }
    return device_outputs_dict(outputs);
  }

  nb::dict reference(nb::handle inputs, nb::handle sizes, nb::handle grid, nb::handle dim, bool check_bounds,
                     bool check_races, nb::handle shuffle, const nb::kwargs& buffers) {
    Holds holds;
    CallArgs args;
    fill(args, holds, program(), inputs, sizes, grid, dim, buffers);
    reference::RunChecks checks;
    checks.bounds = check_bounds;
    checks.races = check_races;
    // shuffle=True: seed 0; an int: that seed; False or None: index order.
    if (PyBool_Check(shuffle.ptr())) {
      if (shuffle.ptr() == Py_True) checks.shuffle_seed = 0;
    } else if (!shuffle.is_none()) {
      checks.shuffle_seed = u32_argument(shuffle, "shuffle", "seed");
    }
    Outputs outputs;
    {
      nb::gil_scoped_release release;
      outputs = reference::run(checked, args.inputs, options, args.grid, checks);
    }
    return outputs_dict(std::move(outputs), program(), args);
  }
};

// A Batch keeps what its recorded dispatches read and write (arrays, inputs,
// views) until run() or clear().
struct PyBatch {
  std::shared_ptr<gpu::Backend> backend;
  std::unique_ptr<gpu::Batch> batch;
  Holds holds;
  std::deque<CallArgs> args;
  std::deque<OutputViews> views;
  std::vector<nb::object> kernels;

  void forget() {
    holds.clear();
    args.clear();
    views.clear();
    kernels.clear();
  }

  void into(nb::handle kernel, nb::handle inputs, nb::handle out, nb::handle sizes, nb::handle grid, nb::handle dim,
            const nb::kwargs& buffers) {
    PyKernel& k = nb::cast<PyKernel&>(kernel);
    CallArgs& a = args.emplace_back();
    fill(a, holds, k.program(), inputs, sizes, grid, dim, buffers);
    if (!PyDict_Check(out.ptr())) throw nb::type_error("out must be a dict of output buffer name to a writable array");
    OutputViews& v = views.emplace_back();
    for (auto [key, value] : nb::borrow<nb::dict>(out)) add_output(v, holds, k.program(), key, value, a.inputs);
    kernels.push_back(nb::borrow(kernel));
    nb::gil_scoped_release release;
    batch->dispatch_into(*k.pipeline, a.inputs, v, a.grid);
  }

  nb::dict resident(nb::handle kernel, nb::handle inputs, nb::handle sizes, nb::handle grid, nb::handle dim, const nb::kwargs& buffers) {
    PyKernel& k = nb::cast<PyKernel&>(kernel);
    CallArgs& a = args.emplace_back();
    fill(a, holds, k.program(), inputs, sizes, grid, dim, buffers);
    kernels.push_back(nb::borrow(kernel));
    gpu::DeviceOutputs outputs;
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

}  // namespace

void bind_gpu(nb::module_& m) {
  // ---- DeviceArray ----
  nb::class_<PyDeviceArray>(m, "DeviceArray")
      .def_prop_ro("dtype", [](const PyDeviceArray& a) { return numpy_name(a.buffer->type()); })
      .def_prop_ro("size", [](const PyDeviceArray& a) { return a.buffer->elements(); })
      .def_prop_ro("shape", [](const PyDeviceArray& a) { return a.shape_tuple(); })
      .def_prop_ro("nbytes", [](const PyDeviceArray& a) { return a.buffer->size_bytes(); })
      .def("__len__", [](const PyDeviceArray& a) { return a.shape.empty() ? a.buffer->elements() : a.shape[0]; })
      .def("numpy", &PyDeviceArray::numpy, "Copies the contents back (waits for the work that writes them).")
      .def(
          "read_into",
          [](const PyDeviceArray& a, nb::handle array) {
            Holds holds;
            Target t{std::string("array"), nullptr, "array"};
            Py_buffer& v = acquire(holds, array, t, a.buffer->type(), true, "read_into:");
            if (static_cast<uint64_t>(v.len) != a.buffer->size_bytes())
              input_error("read_into: the array holds " + std::to_string(v.len / element_bytes(a.buffer->type())) +
                          " elements; the DeviceArray " +
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
           "grid"_a = nb::none(), "dim"_a = nb::none(), "buffers"_a,
           "Dispatches once; returns every output as a dict of NumPy arrays.")
      .def("into", &PyKernel::into, "inputs"_a = nb::none(), nb::kw_only(), "out"_a, "sizes"_a = nb::none(),
           "grid"_a = nb::none(), "dim"_a = nb::none(), "buffers"_a,
           "Dispatches once, reading the outputs named in `out` straight into those arrays.")
      .def("resident", &PyKernel::resident, "inputs"_a = nb::none(), nb::kw_only(), "sizes"_a = nb::none(),
           "grid"_a = nb::none(), "dim"_a = nb::none(), "buffers"_a,
           "Dispatches once, keeping every output on the GPU: a dict of DeviceArray.")
      .def("reference", &PyKernel::reference, "inputs"_a = nb::none(), nb::kw_only(), "sizes"_a = nb::none(),
           "grid"_a = nb::none(), "dim"_a = nb::none(), "check_bounds"_a = false, "check_races"_a = false,
           "shuffle"_a = false, "buffers"_a,
           "Runs the CPU reference interpreter on the same inputs; returns outputs as __call__ does. "
           "check_bounds=True: the first out-of-range load or store is a vyre.ProgramError naming it; "
           "check_races=True: so is the first data race, naming both accesses; shuffle=True or a seed: each "
           "workgroup's invocations run in a seeded random order between barriers.")
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
                     const Dim3& g = *k.tuned->grid;
                     return nb::make_tuple(g[0], g[1], g[2]);
                   })
      .def("__repr__", [](const PyKernel& k) { return "<vyre.Kernel '" + k.checked.name() + "'>"; });

  // ---- Batch ----
  nb::class_<PyBatch>(m, "Batch")
      .def("into", &PyBatch::into, "kernel"_a, "inputs"_a = nb::none(), nb::kw_only(), "out"_a,
           "sizes"_a = nb::none(), "grid"_a = nb::none(), "dim"_a = nb::none(), "buffers"_a)
      .def("resident", &PyBatch::resident, "kernel"_a, "inputs"_a = nb::none(), nb::kw_only(),
           "sizes"_a = nb::none(), "grid"_a = nb::none(), "dim"_a = nb::none(), "buffers"_a)
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
            gpu::BackendOptions options = backend_options(adapter, backend);
            options.cache = process_cache();
            // The driver cache is placed holding the GIL: every Python-level environment write
            // (os.environ, putenv) holds it too, so none races the placement's publication.
            aot::CacheOptions placement = options.cache->options();
            placement.directory = options.cache->directory();
            gpu::place_driver_cache(placement);
            std::shared_ptr<gpu::Backend> b;
            {
              nb::gil_scoped_release release;
              b = std::make_shared<gpu::Backend>(options);
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
            ShaderOptions options = shader_options(workgroup, ulp, passes, fixed_lengths);
            std::shared_ptr<gpu::Pipeline> pipeline;
            {
              nb::gil_scoped_release release;
              pipeline = std::make_shared<gpu::Pipeline>(b.backend->compile(p.checked, options));
            }
            return PyKernel{b.backend, std::move(pipeline), p.checked, options, std::nullopt};
          },
          "program"_a, "workgroup"_a = nb::none(), "ulp"_a = 0, nb::kw_only(), "passes"_a = true,
          "fixed_lengths"_a = nb::none())
      .def(
          "tune",
          [](PyBackend& b, nb::handle program, nb::handle inputs, nb::handle sizes, nb::handle grid, nb::handle dim,
             nb::handle workgroup, int ulp, bool passes, nb::handle fixed_lengths, bool retune,
             const nb::kwargs& buffers) {
            PyProgram p = program_from_source(program);
            const ShaderOptions options = shader_options(workgroup, ulp, passes, fixed_lengths);
            Holds holds;
            CallArgs args;
            fill(args, holds, p.checked.program(), inputs, sizes, grid, dim, buffers);
            gpu::TuneOptions tuning = gpu::TuneOptions::from_environment();
            tuning.retune = retune;
            std::optional<gpu::Tuned> tuned;
            {
              nb::gil_scoped_release release;
              tuned.emplace(b.backend->tune(p.checked, args.inputs, args.grid, options, tuning));
            }
            auto pipeline = std::make_shared<gpu::Pipeline>(std::move(tuned->pipeline));
            return PyKernel{b.backend, std::move(pipeline), p.checked, options, std::move(tuned)};
          },
          "program"_a, "inputs"_a = nb::none(), nb::kw_only(), "sizes"_a = nb::none(), "grid"_a = nb::none(),
          "dim"_a = nb::none(), "workgroup"_a = nb::none(), "ulp"_a = 0, "passes"_a = true, "fixed_lengths"_a = nb::none(), "retune"_a = false,
          "buffers"_a,
          "Compiles the program in the configuration fastest on this device for a dispatch like this one "
          "(docs/tuning.md): from the cache's tuning record, else timed now and recorded. Dispatch the kernel "
          "with grid=kernel.tuned_grid for dispatches of this size; kernel.tuning says what was chosen.")
      .def(
          "upload",
          [](PyBackend& b, nb::handle array) {
            if (PyBool_Check(array.ptr()) || PyLong_Check(array.ptr()) || PyFloat_Check(array.ptr()))
              throw DTypeError("upload takes an array (uint32, int32, float32, float16, float64, uint8, int8, uint16, int16 or bool), not a number");
            Holds holds;
            Held& h = holds.emplace_back();
            if (PyObject_GetBuffer(array.ptr(), &h.view, PyBUF_FORMAT | PyBUF_STRIDES) != 0) {
              PyErr_Clear();
              throw DTypeError("upload takes a NumPy array of uint32, int32, float32, float16, float64, uint8, int8, uint16, int16 or bool, not " + describe_type(array));
            }
            h.active = true;
            auto type = type_of_format(h.view.format, h.view.itemsize);
            if (!type) throw DTypeError("upload: buffers hold uint32, int32, float32, float16, float64, uint8, int8, uint16, int16 or bool, not " + describe_type(array));
            if (!PyBuffer_IsContiguous(&h.view, 'C')) input_error("upload: the array is not C-contiguous");
            std::shared_ptr<gpu::DeviceBuffer> buffer;
            {
              nb::gil_scoped_release release;
              buffer = b.backend->upload(
                  std::span<const uint8_t>(static_cast<const uint8_t*>(h.view.buf), static_cast<size_t>(h.view.len)),
                  *type);
            }
            std::vector<size_t> shape;
            if (h.view.ndim > 1)
              for (int d = 0; d < h.view.ndim; ++d) shape.push_back(static_cast<size_t>(h.view.shape[d]));
            return PyDeviceArray{std::move(buffer), std::move(shape)};
          },
          "array"_a)
      .def("batch", [](PyBackend& b) {
        auto batch = std::make_unique<gpu::Batch>(*b.backend);
        return PyBatch{b.backend, std::move(batch), {}, {}, {}, {}};
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
        std::vector<gpu::AdapterInfo> adapters;
        {
          nb::gil_scoped_release release;
          adapters = gpu::enumerate_adapters(backend_options(std::nullopt, backend));
        }
        nb::list l;
        for (const auto& a : adapters) l.append(adapter_dict(a));
        return l;
      },
      "backend"_a = nb::none(), "The GPU adapters, as `vyre devices` lists them.");
}

}  // namespace vyre::python
