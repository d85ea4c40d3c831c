// The one conversion of Python arguments to the library's numbers
// (arguments.hpp says the rules).
#include "arguments.hpp"

#include <cmath>
#include <limits>

#include "errors.hpp"

namespace vyre::python {
namespace {

// repr() or str() of a value for a message; "?" when that raised.
std::string text_of(nb::handle value, PyObject* (*convert)(PyObject*)) {
  nb::object text = nb::steal(convert(value.ptr()));
  if (!text.is_valid()) {
    PyErr_Clear();
    return "?";
  }
  return nb::cast<std::string>(text);
}

std::string repr_of(nb::handle value) { return text_of(value, PyObject_Repr); }

// NumPy's bool scalar says it is an integer (__index__) on some versions; a
// truth value is never taken for a number.
bool is_numpy_bool(nb::handle value) {
  const std::string_view name = Py_TYPE(value.ptr())->tp_name;
  return name == "numpy.bool" || name == "numpy.bool_";
}

// The value as a Python int: an int, or an integer scalar that says it is
// one (__index__: NumPy's np.int64, np.uint32, ...); never a bool. Invalid
// for anything else.
nb::object as_int(nb::handle value) {
  if (PyBool_Check(value.ptr()) || is_numpy_bool(value)) return {};
  if (PyLong_Check(value.ptr())) return nb::borrow(value);
  if (!PyIndex_Check(value.ptr())) return {};
  nb::object index = nb::steal(PyNumber_Index(value.ptr()));
  if (!index.is_valid()) PyErr_Clear();
  return index;
}

// A float, or a floating scalar (NumPy's np.float32): its value, exactly.
std::optional<double> as_float(nb::handle value) {
  if (PyFloat_Check(value.ptr())) return PyFloat_AsDouble(value.ptr());
  if (is_int(value) || PyBool_Check(value.ptr()) || is_numpy_bool(value) || PyUnicode_Check(value.ptr()) ||
      PyBytes_Check(value.ptr()) || Py_TYPE(value.ptr())->tp_as_number == nullptr ||
      Py_TYPE(value.ptr())->tp_as_number->nb_float == nullptr)
    return std::nullopt;
  nb::object f = nb::steal(PyNumber_Float(value.ptr()));
  if (!f.is_valid()) {
    PyErr_Clear();
    return std::nullopt;
  }
  return PyFloat_AsDouble(f.ptr());
}

[[noreturn]] void not_an_int(nb::handle value, std::string_view argument) {
  throw nb::type_error((std::string(argument) + " must be an int, not " + describe_type(value)).c_str());
}

// The int's value when it lies in [low, high]; else RangeError.
long long int_in(nb::handle value, std::string_view argument, long long low, long long high, std::string_view type) {
  const nb::object number = as_int(value);
  if (!number.is_valid()) not_an_int(value, argument);
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(number.ptr(), &overflow);
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  if (overflow != 0 || v < low || v > high)
    throw RangeError(std::string(argument) + " = " + repr_of(value) + " does not fit " + std::string(type));
  return v;
}

}  // namespace

bool is_int(nb::handle value) { return as_int(value).is_valid(); }

bool is_number(nb::handle value) {
  if (nb::hasattr(value, "ndim")) {  // NumPy's scalars have ndim 0; an array is never one number
    nb::object ndim = value.attr("ndim");
    if (!is_int(ndim) || nb::cast<long long>(ndim) != 0) return false;
  }
  return is_int(value) || as_float(value).has_value();
}

uint32_t u32_argument(nb::handle value, std::string_view argument, std::string_view role) {
  return static_cast<uint32_t>(
      int_in(value, argument, 0, std::numeric_limits<uint32_t>::max(), "a u32 " + std::string(role)));
}

int32_t i32_argument(nb::handle value, std::string_view argument) {
  return static_cast<int32_t>(
      int_in(value, argument, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), "an i32"));
}

int32_t narrow_argument(nb::handle value, std::string_view argument, ScalarType type) {
  const bool is_signed = value_type(type) == ScalarType::I32;
  const int bits = static_cast<int>(element_bytes(type)) * 8;
  const int64_t lo = is_signed ? -(int64_t{1} << (bits - 1)) : 0;
  const int64_t hi = is_signed ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
  const std::string what = std::string(is_signed ? "an " : "a ") + std::string(to_string(type));
  return static_cast<int32_t>(int_in(value, argument, lo, hi, what));
}

namespace {

// A Python int given for a float element (`type`: "f32", "f16" or "f64"), as the
// double nearest to it; `exact` says whether the element type holds that
// double. An int names an exact value: one the type cannot hold is refused,
// never rounded (a float is rounded, as NumPy rounds it).
double float_element_int(nb::handle value, std::string_view argument, const char* type, bool (*exact)(double)) {
  const nb::object number = as_int(value);
  if (!number.is_valid())
    throw nb::type_error((std::string(argument) + " must be a float or an int, not " + describe_type(value)).c_str());
  const double v = PyLong_AsDouble(number.ptr());
  if (v == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    throw RangeError(std::string(argument) + " = " + repr_of(value) + " is beyond the " + type + " range");
  }
  nb::object back = nb::steal(PyLong_FromDouble(v));
  if (!exact(v) || !back.is_valid() || !back.equal(number))
    input_error(std::string(argument) + ": the int " + repr_of(value) + " has no exact " +
                (std::string(type) == "f16" ? "float16" : std::string(type) == "f64" ? "float64" : "float32") + " value");
  return v;
}

}  // namespace

half f16_argument(nb::handle value, std::string_view argument) {
  if (const std::optional<double> given = as_float(value)) {
    const half h = to_half(*given);  // from the double, as NumPy's float16(x): one rounding
    if (std::isfinite(*given) && std::isinf(to_double(h)))
      throw RangeError(std::string(argument) + " = " + repr_of(value) + " is beyond the f16 range, 65504");
    return h;
  }
  return to_half(float_element_int(value, argument, "f16", [](double v) { return to_double(to_half(v)) == v; }));
}

float f32_argument(nb::handle value, std::string_view argument) {
  if (const std::optional<double> given = as_float(value)) {
    const double v = *given;
    const auto f = static_cast<float>(v);
    // Rounding to f32 may overflow only a finite value; tiny ones become
    // (signed) zero, as the CLI reads them.
    if (std::isfinite(v) && std::isinf(f))
      throw RangeError(std::string(argument) + " = " + repr_of(value) +
                       " is beyond the f32 range (float('inf') is taken as infinity)");
    return f;
  }
  return static_cast<float>(float_element_int(value, argument, "f32", [](double v) {
    return static_cast<double>(static_cast<float>(v)) == v;
  }));
}

double f64_argument(nb::handle value, std::string_view argument) {
  if (const std::optional<double> given = as_float(value)) return *given;  // a Python float is an f64
  return float_element_int(value, argument, "f64", [](double) { return true; });
}

Dim3 dim3_argument(nb::handle value, std::string_view argument, std::string_view role) {
  Dim3 d{1, 1, 1};
  if (is_int(value)) {
    d[0] = u32_argument(value, argument, role);
    return d;
  }
  if (PyBool_Check(value.ptr()) || !PySequence_Check(value.ptr()) || PyUnicode_Check(value.ptr()))
    throw nb::type_error((std::string(argument) + " must be an int or a sequence of 1 to 3 ints").c_str());
  nb::sequence seq = nb::borrow<nb::sequence>(value);
  const size_t n = nb::len(seq);
  if (n < 1 || n > 3) throw nb::value_error((std::string(argument) + " must have 1 to 3 components").c_str());
  for (size_t i = 0; i < n; ++i)
    d[i] = u32_argument(seq[i], std::string(argument) + "[" + std::to_string(i) + "]", role);
  return d;
}

std::string item_name(std::string_view argument, nb::handle key) {
  return std::string(argument) + "[" + repr_of(key) + "]";
}

// ---- element types ----

const char* numpy_name(ScalarType t) {
  switch (t) {
    case ScalarType::U32: return "uint32";
    case ScalarType::I32: return "int32";
    case ScalarType::F32: return "float32";
    case ScalarType::Bool: return "bool";
    case ScalarType::U8: return "uint8";
    case ScalarType::I8: return "int8";
    case ScalarType::U16: return "uint16";
    case ScalarType::I16: return "int16";
    case ScalarType::F16: return "float16";
    case ScalarType::F64: return "float64";
  }
  return "?";
}

std::optional<ScalarType> type_of_format(const char* format, Py_ssize_t itemsize) {
  if (format == nullptr) format = "B";
  if (*format == '@' || *format == '=' || *format == '<') ++format;
  if (format[0] == '\0' || format[1] != '\0') return std::nullopt;
  switch (itemsize) {
    case 1:
      switch (format[0]) {
        case 'B': return ScalarType::U8;
        case 'b': return ScalarType::I8;
        case '?': return ScalarType::Bool;
        default: return std::nullopt;
      }
    case 2:
      switch (format[0]) {
        case 'H': return ScalarType::U16;
        case 'h': return ScalarType::I16;
        case 'e': return ScalarType::F16;
        default: return std::nullopt;
      }
    case 8:
      return format[0] == 'd' ? std::optional(ScalarType::F64) : std::nullopt;
    case 4:
      switch (format[0]) {
        case 'f': return ScalarType::F32;
        case 'i': case 'l': return ScalarType::I32;
        case 'I': case 'L': return ScalarType::U32;
        default: return std::nullopt;
      }
    default: return std::nullopt;
  }
}

std::string str_of(nb::handle value) { return text_of(value, PyObject_Str); }

std::string describe_type(nb::handle value) {
  if (nb::hasattr(value, "dtype")) return str_of(value.attr("dtype"));
  return str_of(value.type().attr("__name__"));
}

}  // namespace vyre::python
