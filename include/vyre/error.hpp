// Errors the library reports. Every failure a user can cause or meet is a
// vyre::Error with a kind (for programs that branch on it) and a message that
// says what is wrong and, where it can, what to do about it.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "vyre/export.hpp"

namespace vyre {

enum class ErrorKind {
  invalid_program,  // the program breaks a rule of the format (see diagnostics)
  invalid_wire,     // canonical wire bytes are malformed, truncated or too large
  invalid_input,    // dispatch inputs do not fit the program (size, type, name)
  lowering,         // the program could not be lowered to WGSL
  no_adapter,       // no usable GPU adapter (or the requested one is absent)
  gpu,              // the GPU API reported an error (shader, pipeline, buffer)
  device_lost,      // the device was lost; the backend must be reopened
  limit_exceeded,   // a request exceeds a device limit
  io,               // a file could not be read or written
};

VYRE_API std::string_view to_string(ErrorKind kind);

// Whose words a message uses for what the caller can give (a launch, a
// buffer's size): a C++ program's functions (the default), the CLI's flags,
// or Python's arguments. Each front end sets it once, as it starts.
enum class CallerLanguage { cpp, cli, python };
VYRE_API void set_caller_language(CallerLanguage language);
VYRE_API CallerLanguage caller_language();
// The spelling of one remedy in the caller's language.
VYRE_API std::string in_caller_terms(std::string_view cpp, std::string_view cli, std::string_view python);

class VYRE_API Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

// One problem found in a program, located by the JSON path of the offending
// value (for example "body[1].then[0].value.xor[1]").
struct VYRE_API Diagnostic {
  std::string path;
  std::string message;

  friend bool operator==(const Diagnostic&, const Diagnostic&) = default;
};

// A program that failed to parse or validate; carries every problem found.
class VYRE_API ProgramError : public Error {
 public:
  explicit ProgramError(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const noexcept { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

}  // namespace vyre
