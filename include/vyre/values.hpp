// Buffer contents as people write and read them (`vyre run`, run files):
// comma-separated values or JSON arrays in, one JSON array per buffer out.
// f32 values print so that they read back to the same bits ("nan", "inf"
// and "-inf" as strings). And files of values, as `vyre run --input
// NAME=@FILE` reads them and `--output` writes them: NPY, CSV, JSON or raw
// little-endian bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vyre/export.hpp"
#include "vyre/program.hpp"

namespace vyre {

// "1,2,0x10" for u32; "-1,2" for i32; "1.5,nan,-inf" for f32; "255,0x7f" for
// u8 (a value the element holds: 256 is refused, never cut); "true,0" for
// bool (written back as true and false). Throws
// Error(invalid_input) naming `what` and the bad value.
VYRE_API std::vector<uint8_t> parse_values(ScalarType type, std::string_view csv, const std::string& what);

// A JSON array, as text.
VYRE_API std::string format_values(ScalarType type, const std::vector<uint8_t>& bytes);

// Equal values; for f32 equal bits, any NaN matching any NaN, or (with a
// tolerance) |a - b| <= abs + rel * |b|.
VYRE_API bool values_equal(ScalarType type, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, double abs = 0,
                  double rel = 0);

// The index of the first element where `a` and `b` differ by the rule of
// values_equal (the shorter length when only the lengths differ); nullopt
// when they are equal.
VYRE_API std::optional<size_t> first_difference(ScalarType type, const std::vector<uint8_t>& a,
                                                const std::vector<uint8_t>& b, double abs = 0, double rel = 0);

// How a file holds one buffer's values.
enum class ValuesFormat : uint8_t {
  raw,   // the elements' little-endian bytes, one after another
  npy,   // NumPy's .npy: version 1.0 written, 1.0 to 3.0 read
  csv,   // one value a line (read: commas and line ends both separate)
  json,  // a JSON array, as format_values writes it
};

// "raw", "npy", "csv" or "json" (the CLI's --format names raw "bin").
VYRE_API std::string_view to_string(ValuesFormat format);

// The format a file name's extension names, in any case: .npy, .csv, .json,
// and .bin or .raw for raw bytes; nullopt for any other name.
VYRE_API std::optional<ValuesFormat> values_format_of(std::string_view path);

// The NPY type of an element type: "<u4", "<i4", "<f4", "<f8", "<f2", "|u1",
// "|i1", "<u2", "<i2", "|b1".
VYRE_API std::string_view npy_descr(ScalarType type);

// One buffer's values (element_bytes(type) each, little-endian) as a file:
// an NPY 1.0 file of shape (N,); the raw bytes; one value a line, spelled as
// format_values spells it but "nan", "inf" and "-inf" bare and bool as 1 and
// 0 (what numpy.loadtxt reads back to the same values); a JSON array and a
// line end.
VYRE_API std::string values_file(ScalarType type, const std::vector<uint8_t>& bytes, ValuesFormat format);

// A file's contents as a buffer's values, the inverse of values_file. NPY:
// the type must be the element type's (npy_descr; a one-byte type in any
// byte order); an array of any shape is read in C order (a Fortran-order one
// is reordered), its data exactly the shape's size; big-endian, object,
// structured and other types are refused, naming the file's type. CSV:
// values as parse_values reads them, separated by commas or line ends;
// blank lines and lines starting with '#' are skipped. JSON: an array of
// values, or an object whose member `name` is one (as `vyre run --output
// FILE.json` writes all outputs). Raw: whole elements. Throws
// Error(invalid_input) beginning with `what`.
VYRE_API std::vector<uint8_t> values_from_file(ScalarType type, std::string_view contents, ValuesFormat format,
                                               const std::string& name, const std::string& what);

}  // namespace vyre
