// The web target: one program exported as an ES module that any page can
// import (`createKernel(device)`), with its TypeScript types, a package.json
// and a demo page (docs/web.md). Its WGSL is the AOT cache's artifact for
// the `web` target: the same lowering and the same keys as a native build,
// with no device's workarounds and nothing a browser's WebGPU does not offer.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "vyre/aot.hpp"
#include "vyre/checked.hpp"
#include "vyre/dispatch.hpp"
#include "vyre/export.hpp"
#include "vyre/run_file.hpp"
#include "vyre/shader_options.hpp"

namespace vyre::web {

// The target's name, as `--target web` and kernel.js report it: a browser's
// WebGPU as of its first version of WGSL.
inline constexpr const char* kTargetName = "web/webgpu-1";

// One shader the exported module carries, and its cache key.
struct VYRE_API WebShader {
  // "base" (one element per invocation), "wide" (vector width 4, where the
  // program is element-wise) or "guard" (the launch-domain guard, for a
  // dispatch given a domain): the three shaders a native Pipeline may use.
  std::string role;
  ShaderOptions options;
  aot::KeyParts parts;
};

// Throws Error(invalid_input) saying what to change when the web target
// cannot take the program (f64: browsers offer no shader-f64), or the
// options (a launch-domain guard, which the module adds itself per dispatch).
VYRE_API void check_web_program(const CheckedProgram& program, const ShaderOptions& requested = {});

// The shaders of the program's module, the first the one its first
// dispatch without a domain uses (as gpu::KeyTarget::of names it for a
// device): every key's fingerprint is the shaping fingerprint of every
// WGSL entry, so a web build and a native one with the same options share
// one entry. Checks the program first (check_web_program).
VYRE_API std::vector<WebShader> web_shaders(const CheckedProgram& program, const ShaderOptions& requested = {});

struct VYRE_API WebExportOptions {
  ShaderOptions shader;
  // The demo page's inputs (and launch): a run file's, else a few made up.
  std::optional<RunInputs> example;
  // Where the WGSL comes from: this cache (lowered into it on a miss), or
  // lowered afresh when null.
  aot::Cache* cache = nullptr;
  // The package's name in package.json (default: the program's name).
  std::string package_name;
};

struct VYRE_API WebExportReport {
  std::filesystem::path directory;
  std::vector<std::string> files;  // written, relative to `directory`
  std::vector<std::string> keys;   // per shader, as web_shaders orders them
  size_t cache_hits = 0;
};

// Writes kernel.js, kernel.d.ts, package.json and index.html into `dir`
// (made when missing). Throws Error(invalid_input) for a program the target
// refuses (nothing written) and Error(io) for a write that failed.
VYRE_API WebExportReport export_web(const CheckedProgram& program, const std::filesystem::path& dir,
                                    const WebExportOptions& options = {});

// One exported kernel, as the index page of a folder of them lists it.
struct VYRE_API WebIndexEntry {
  std::string folder;  // the kernel's folder, relative to the index
  std::string program;  // its program's name
  std::string refused;  // why it was not exported; empty when it was
};

// Writes `dir`/index.html linking each kernel's demo page, and naming the
// programs that were refused with why.
VYRE_API void write_web_index(const std::filesystem::path& dir, const std::vector<WebIndexEntry>& entries);

}  // namespace vyre::web
