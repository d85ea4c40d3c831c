// The library's errors (vyre::Error) as the exceptions of vyre._errors:
// each kind its class, DTypeError and RangeError where the extension says.
#include <nanobind/stl/string.h>

#include <exception>

#include "bind.hpp"

namespace vyre::python {
namespace {

// The kind as the C++ enumerator names it (vyre::to_string gives prose).
const char* kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid_program: return "invalid_program";
    case ErrorKind::invalid_wire: return "invalid_wire";
    case ErrorKind::invalid_input: return "invalid_input";
    case ErrorKind::lowering: return "lowering";
    case ErrorKind::no_adapter: return "no_adapter";
    case ErrorKind::gpu: return "gpu";
    case ErrorKind::device_lost: return "device_lost";
    case ErrorKind::limit_exceeded: return "limit_exceeded";
    case ErrorKind::io: return "io";
  }
  return "unknown";
}

// `subclass`: "", "dtype" or "range" (vyre._errors._from_cpp).
void raise_python(const Error& e, const char* subclass) {
  nb::list diagnostics;
  if (const auto* pe = dynamic_cast<const ProgramError*>(&e))
    for (const auto& d : pe->diagnostics()) diagnostics.append(nb::make_tuple(d.path, d.message));
  nb::object errors = nb::module_::import_("vyre._errors");
  nb::object exc =
      errors.attr("_from_cpp")(nb::str(kind_name(e.kind())), nb::str(e.what()), diagnostics, nb::str(subclass));
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const DTypeError& e) {
    raise_python(e, "dtype");
  } catch (const RangeError& e) {
    raise_python(e, "range");
  } catch (const Error& e) {
    raise_python(e, "");
  }
}

}  // namespace

void input_error(const std::string& message) { throw Error(ErrorKind::invalid_input, message); }

void bind_errors(nb::module_&) { nb::register_exception_translator(translate); }

}  // namespace vyre::python
