// export_web: a program's module, types, package and demo page written into
// one folder, its WGSL taken from the AOT cache for the web target.
#include <cerrno>
#include <cstring>
#include <fstream>

#include "util/log.hpp"
#include "vyre/error.hpp"
#include "vyre/half.hpp"
#include "web/web_files.hpp"

namespace vyre::web {

std::string base64(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const uint32_t n = uint32_t{bytes[i]} << 16 | (i + 1 < bytes.size() ? uint32_t{bytes[i + 1]} << 8 : 0) |
                       (i + 2 < bytes.size() ? uint32_t{bytes[i + 2]} : 0);
    out += kDigits[n >> 18 & 63];
    out += kDigits[n >> 12 & 63];
    out += i + 1 < bytes.size() ? kDigits[n >> 6 & 63] : '=';
    out += i + 2 < bytes.size() ? kDigits[n & 63] : '=';
  }
  return out;
}

namespace {

nlohmann::json contents(ScalarType type, std::span<const uint8_t> bytes) {
  return {{"array", typed_array(type)}, {"base64", base64(bytes)}};
}

const Buffer* buffer_of(const Program& program, const BufferRef& ref) {
  if (const auto* name = std::get_if<std::string>(&ref)) return program.find_buffer(*name);
  for (const Buffer& b : program.buffers)
    if (b.access != Access::Workgroup && b.binding == std::get<uint32_t>(ref)) return &b;
  return nullptr;
}

// The demo's inputs from a run file.
nlohmann::json example_of(const Program& program, const RunInputs& run) {
  nlohmann::json inputs = nlohmann::json::object(), options = nlohmann::json::object();
  for (const Inputs::Entry& e : run.inputs.entries()) {
    const Buffer* b = buffer_of(program, e.buffer);
    if (b == nullptr) continue;  // read_run_file has refused it already
    if (e.has_contents())
      inputs[b->name] = contents(b->type, e.contents());
    else
      options["sizes"][b->name] = *e.elements;
  }
  if (run.inputs.domain()) options["dim"] = *run.inputs.domain();
  if (run.grid) options["grid"] = *run.grid;
  nlohmann::json expect = nlohmann::json::object(), tolerance = nlohmann::json::object();
  for (const auto& [name, bytes] : run.expect)
    if (const Buffer* b = program.find_buffer(name)) expect[name] = contents(b->type, bytes);
  for (const auto& [name, t] : run.tolerance) tolerance[name] = {{"abs", t.abs}, {"rel", t.rel}};
  return {{"source", "the run file"}, {"inputs", inputs}, {"options", options}, {"expect", expect},
          {"tolerance", tolerance}};
}

// Made-up inputs: 64 elements a runtime-sized buffer (or its fixed length),
// small values that cycle.
nlohmann::json made_up_example(const CheckedProgram& program, const ShaderOptions& options) {
  const auto& fixed = checked_fixed_lengths(program.program(), options);
  nlohmann::json inputs = nlohmann::json::object(), launch = nlohmann::json::object();
  for (const Buffer* b : program.bound_buffers()) {
    const auto it = fixed.find(b->name);
    const uint32_t n = b->count != 0 ? b->count : it != fixed.end() ? it->second : 64;
    if (b->access == Access::ReadWrite) {
      if (b->count == 0) launch["sizes"][b->name] = n;
      continue;
    }
    std::vector<uint8_t> bytes(uint64_t{n} * element_bytes(b->type));
    for (uint32_t k = 0; k < n; ++k) {
      const uint32_t v = b->type == ScalarType::Bool ? k % 2 : k % 16;
      uint8_t* at = bytes.data() + uint64_t{k} * element_bytes(b->type);
      if (b->type == ScalarType::F32) {
        const float f = static_cast<float>(v) * 0.5f;
        std::memcpy(at, &f, 4);
      } else if (b->type == ScalarType::F16) {
        const uint16_t bits = to_half(v * 0.5).bits;
        std::memcpy(at, &bits, 2);
      } else {
        std::memcpy(at, &v, element_bytes(b->type));  // little-endian: the low bytes
      }
    }
    inputs[b->name] = contents(b->type, bytes);
  }
  return {{"source", "made up (export with a run file for real ones)"}, {"inputs", inputs}, {"options", launch},
          {"expect", nlohmann::json::object()}, {"tolerance", nlohmann::json::object()}};
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) throw Error(ErrorKind::io, "cannot write " + path.string() + ": " + std::strerror(errno));
}

}  // namespace

WebExportReport export_web(const CheckedProgram& program, const std::filesystem::path& dir,
                           const WebExportOptions& options) {
  std::vector<LoweredShader> lowered;
  WebExportReport report;
  for (WebShader& s : web_shaders(program, options.shader)) {
    LoweredShader l{s, {}, shader_interface(program, s.options)};
    if (options.cache != nullptr) {
      aot::Artifact a = options.cache->load_or_compile(
          s.parts, [&] { return lower_to_wgsl(program, s.options); }, program.name());
      l.wgsl = std::move(a.text);
      report.cache_hits += a.cache_hit ? 1 : 0;
    } else {
      l.wgsl = lower_to_wgsl(program, s.options);
    }
    report.keys.push_back(s.parts.key());
    lowered.push_back(std::move(l));
  }
  const nlohmann::json example =
      options.example ? example_of(program.program(), *options.example) : made_up_example(program, options.shader);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::io, "cannot make the folder " + dir.string() + ": " + ec.message());
  const std::pair<const char*, std::string> files[] = {
      {"kernel.js", kernel_module(program, lowered)},
      {"kernel.d.ts", kernel_typings(program)},
      {"package.json", package_json(program, options.package_name)},
      {"index.html", demo_page(program, example)},
  };
  for (const auto& [name, text] : files) {
    write_file(dir / name, text);
    report.files.push_back(name);
  }
  report.directory = dir;
  log::debug("exported '{}' for {} into {}", program.name(), kTargetName, dir.string());
  return report;
}

void write_web_index(const std::filesystem::path& dir, const std::vector<WebIndexEntry>& entries) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::io, "cannot make the folder " + dir.string() + ": " + ec.message());
  write_file(dir / "index.html", index_page(entries));
}

}  // namespace vyre::web
