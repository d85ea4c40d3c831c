// Python values to the numbers, shapes and element types the library takes:
// one rule for every argument (sizes, grid, workgroup, fixed_lengths,
// buffer bindings, scalar inputs), and for any front end that takes the
// same. `argument` names the value as the caller wrote it ("sizes['out']",
// "grid[1]", "input 'alpha'"), and every error says it:
//   - not an int (a bool included) where an int is taken: TypeError;
//   - an int the type cannot hold (negative for an unsigned one), or a
//     finite float beyond the f32 range: vyre.RangeError, an InputError
//     (a ValueError) and an OverflowError, as the CLI refuses 1e39.
//     Infinities and NaN given as such pass, as the CLI's "inf" and "nan".
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>  // every file: std::string crosses everywhere

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "vyre/half.hpp"

#include "vyre/program.hpp"
#include "vyre/shader_options.hpp"

namespace vyre::python {

namespace nb = nanobind;

// `role` says what the number is for: "length", "workgroup count", ...
uint32_t u32_argument(nb::handle value, std::string_view argument, std::string_view role);
int32_t i32_argument(nb::handle value, std::string_view argument);
// An int a u8, i8, u16 or i16 element holds (0 to 255 for u8, ...).
int32_t narrow_argument(nb::handle value, std::string_view argument, ScalarType type);
// A float as it is; an int only when float32 holds it exactly.
float f32_argument(nb::handle value, std::string_view argument);
// A Python float or int as the f16 an f16 buffer holds.
half f16_argument(nb::handle value, std::string_view argument);
// An f64 element: a Python float as it is; an int only where a double holds
// it exactly.
double f64_argument(nb::handle value, std::string_view argument);
// An int (x, with y and z 1) or a sequence of 1 to 3 ints.
// A Python int or float, or a NumPy scalar of an integer or floating type
// (np.int64(8), np.float32(2)): what a scalar input or a size may be. Never
// a bool, an array or a string.
bool is_number(nb::handle value);
// Of those, an integer one.
bool is_int(nb::handle value);

Dim3 dim3_argument(nb::handle value, std::string_view argument, std::string_view role);
// "sizes['out']", "sizes[2]": an item of a dict argument.
std::string item_name(std::string_view argument, nb::handle key);

// ---- element types ----
const char* numpy_name(ScalarType type);  // "uint32", "int32", "float32"
// The vyre type of a buffer-protocol format with 4-byte items, if any.
std::optional<ScalarType> type_of_format(const char* format, Py_ssize_t itemsize);
std::string str_of(nb::handle value);         // str(value), "?" if that raises
std::string describe_type(nb::handle value);  // an array's dtype, else the type's name

}  // namespace vyre::python
