#include "vyre/error.hpp"

namespace vyre {

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid_program: return "invalid program";
    case ErrorKind::invalid_wire: return "invalid wire bytes";
    case ErrorKind::invalid_input: return "invalid input";
    case ErrorKind::lowering: return "lowering";
    case ErrorKind::no_adapter: return "no GPU adapter";
    case ErrorKind::gpu: return "GPU error";
    case ErrorKind::device_lost: return "device lost";
    case ErrorKind::limit_exceeded: return "limit exceeded";
    case ErrorKind::io: return "I/O error";
  }
  return "error";
}

namespace {
std::string summarize(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const auto& d : diagnostics) {
    if (!out.empty()) out += '\n';
    out += d.path.empty() ? d.message : d.path + ": " + d.message;
  }
  return out.empty() ? std::string("invalid program") : out;
}
}  // namespace

ProgramError::ProgramError(std::vector<Diagnostic> diagnostics)
    : Error(ErrorKind::invalid_program, summarize(diagnostics)), diagnostics_(std::move(diagnostics)) {}

}  // namespace vyre
