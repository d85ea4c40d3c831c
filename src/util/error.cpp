#include "vyre/error.hpp"

#include <atomic>

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
std::atomic<CallerLanguage> g_caller_language{CallerLanguage::cpp};
}  // namespace

void set_caller_language(CallerLanguage language) { g_caller_language.store(language, std::memory_order_relaxed); }
CallerLanguage caller_language() { return g_caller_language.load(std::memory_order_relaxed); }

std::string in_caller_terms(std::string_view cpp, std::string_view cli, std::string_view python) {
  switch (caller_language()) {
    case CallerLanguage::cli: return std::string(cli);
    case CallerLanguage::python: return std::string(python);
    case CallerLanguage::cpp: break;
  }
  return std::string(cpp);
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
