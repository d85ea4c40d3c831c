// A dispatch described for another WebGPU implementation: the lowered WGSL,
// every binding with the bytes the GPU backend would upload to it, the grid
// and the outputs to read back. Used to run vyre's shaders on Dawn (Chromium)
// as an independent check of the WGSL.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "vyre/checked.hpp"
#include "vyre/dispatch.hpp"
#include "vyre/program.hpp"

namespace vyre::test {

struct WebGpuBinding {
  uint32_t group = 0;
  uint32_t binding = 0;
  std::string type;  // "read-only-storage", "storage" or "uniform", as WebGPU names them
  std::vector<uint32_t> words;  // contents, padded as the backend pads them
  std::string output;           // the output buffer's name, or empty
  uint32_t output_words = 0;  // the words the page reads back
  uint64_t output_bytes = 0;  // of which the output's elements are the first this many bytes
};

struct WebGpuJob {
  std::string name;
  std::string wgsl;
  Dim3 workgroup_size{1, 1, 1};
  Dim3 grid{1, 1, 1};
  std::vector<WebGpuBinding> bindings;
};

// Plans the dispatch exactly as the GPU backend does (plan_dispatch,
// shader_interface, the lengths uniform, 16-byte uniform rows, 4-byte
// minimum sizes).
WebGpuJob make_webgpu_job(const std::string& name, const CheckedProgram& program, const Inputs& inputs,
                          const ShaderOptions& options = {}, const std::optional<Dim3>& grid = std::nullopt);

nlohmann::json to_json(const std::vector<WebGpuJob>& jobs);

}  // namespace vyre::test
