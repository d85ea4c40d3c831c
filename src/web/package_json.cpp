// package.json: the kernel's folder as an npm package (an ES module with
// its types), so that a bundler or `npm install ./folder` takes it.
#include <cctype>

#include "vyre/version.hpp"
#include "vyre/wire.hpp"
#include "web/web_files.hpp"

namespace vyre::web {
namespace {

// npm's rules: lowercase, URL-safe, not starting with '.' or '_'.
std::string npm_name(const std::string& name) {
  std::string out;
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    out += std::isalnum(u) ? static_cast<char>(std::tolower(u)) : (c == '-' || c == '_' || c == '.') ? c : '-';
  }
  while (!out.empty() && (out[0] == '.' || out[0] == '_' || out[0] == '-')) out.erase(0, 1);
  return out.empty() ? "kernel" : out;
}

}  // namespace

std::string package_json(const CheckedProgram& program, const std::string& package_name) {
  const std::string name = package_name.empty() ? "vyre-kernel-" + npm_name(program.name()) : package_name;
  const nlohmann::json package = {
      {"name", name},
      {"version", "1.0.0"},
      {"description", "The vyre kernel '" + program.name() + "' for WebGPU (" + kTargetName + ")"},
      {"type", "module"},
      {"main", "./kernel.js"},
      {"module", "./kernel.js"},
      {"types", "./kernel.d.ts"},
      {"exports", {{".", {{"types", "./kernel.d.ts"}, {"default", "./kernel.js"}}}}},
      {"files", {"kernel.js", "kernel.d.ts"}},
      {"sideEffects", false},
      {"vyre", {{"program", program.name()}, {"digest", digest(program.program()).hex()}, {"target", kTargetName},
                {"version", kVersion}}},
  };
  return package.dump(2) + "\n";
}

}  // namespace vyre::web
