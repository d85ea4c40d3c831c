// The files of an exported web kernel, each written by a file of its own:
// kernel.js (kernel_module.cpp), kernel.d.ts (typings.cpp), package.json
// (package_json.cpp), index.html (demo_page.cpp) and a folder's index
// (index_page.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include <span>
#include <string>
#include <vector>

#include "vyre/lower.hpp"
#include "vyre/web.hpp"

namespace vyre::web {

// src/web/kernel_runtime.js, embedded at build time (cmake/EmbedText.cmake).
extern const char* const kKernelRuntime;

struct LoweredShader {
  WebShader shader;
  std::string wgsl;
  ShaderInterface interface;
};

// The typed array a buffer of `type` takes and gives in JavaScript.
std::string typed_array(ScalarType type);

std::string kernel_module(const CheckedProgram& program, const std::vector<LoweredShader>& shaders);
std::string kernel_typings(const CheckedProgram& program);
std::string package_json(const CheckedProgram& program, const std::string& package_name);
// `example`: {"inputs": {name: {"type", "base64"}}, "options": {...}, "expect": ..., "source": ...}
std::string demo_page(const CheckedProgram& program, const nlohmann::json& example);
std::string index_page(const std::vector<WebIndexEntry>& entries);

// Standard base64 (RFC 4648, padded): the demo page's example inputs.
std::string base64(std::span<const uint8_t> bytes);

// Text made safe inside HTML.
std::string html_escape(const std::string& text);

}  // namespace vyre::web
