// The errors vyre._ext raises beyond the library's own (bind_errors.cpp
// makes each a Python exception of vyre._errors).
#pragma once

#include <string>

#include "vyre/error.hpp"

namespace vyre::python {

// An invalid_input error about an array's element type: raised as
// vyre.DTypeError (an InputError and a TypeError).
struct DTypeError : Error {
  explicit DTypeError(const std::string& message) : Error(ErrorKind::invalid_input, message) {}
};

// An invalid_input error about a number the argument's type cannot hold:
// raised as vyre.RangeError (an InputError and an OverflowError).
struct RangeError : Error {
  explicit RangeError(const std::string& message) : Error(ErrorKind::invalid_input, message) {}
};

// Raises vyre.InputError.
[[noreturn]] void input_error(const std::string& message);

}  // namespace vyre::python
