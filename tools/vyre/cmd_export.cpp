// vyre export web: a program as an ES module any page can import
// (kernel.js, kernel.d.ts, package.json, index.html; docs/web.md), or every
// program of a folder with one index page.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "vyre/error.hpp"
#include "vyre/run_file.hpp"
#include "vyre/web.hpp"

namespace vyre::cli {
namespace {

namespace fs = std::filesystem;

struct Options {
  std::string file;
  std::string all;
  std::string out;
  std::string inputs;
  std::string package_name;
  ConfigOptions config;
  bool json = false;
};

bool is_run_file(const fs::path& p) {
  const std::string name = p.filename().string();
  return name.size() > 9 && name.ends_with(".run.json");
}

// PROG.run.json beside PROG.json, when there is one.
std::optional<std::string> run_file_beside(const std::string& program_file) {
  if (program_file == "-") return std::nullopt;
  fs::path p(program_file);
  if (p.extension() != ".json") return std::nullopt;
  p.replace_extension(".run.json");
  std::error_code ec;
  return fs::is_regular_file(p, ec) ? std::optional<std::string>(p.string()) : std::nullopt;
}

struct Exported {
  web::WebExportReport report;
  std::vector<std::string> roles;
  std::string inputs;  // where the demo's inputs came from
};

Exported export_one(const CheckedProgram& program, const std::string& file, const std::string& run_file,
                    const fs::path& dir, const Options& o, aot::Cache& cache) {
  web::WebExportOptions options;
  options.shader = o.config.to_config();
  options.cache = &cache;
  options.package_name = o.package_name;
  Exported e;
  const std::optional<std::string> run = run_file.empty() ? run_file_beside(file) : std::optional(run_file);
  if (run) options.example = read_run_file(program, *run);
  e.inputs = run ? *run : "made up";
  for (const web::WebShader& s : web::web_shaders(program, options.shader)) e.roles.push_back(s.role);
  try {
    e.report = web::export_web(program, dir, options);
  } catch (const Error& err) {
    if (err.kind() == ErrorKind::io) throw WriteError(err.what());
    throw;
  }
  return e;
}

nlohmann::json kernel_json(const std::string& program, const std::string& file, const Exported& e) {
  nlohmann::json shaders = nlohmann::json::array();
  for (size_t i = 0; i < e.roles.size(); ++i) shaders.push_back({{"role", e.roles[i]}, {"key", e.report.keys[i]}});
  return {{"program", program},  {"file", file},       {"folder", e.report.directory.string()},
          {"files", e.report.files}, {"shaders", shaders}, {"cache_hits", e.report.cache_hits},
          {"inputs", e.inputs}};
}

void print_exported(const std::string& program, const Exported& e) {
  std::cout << "exported '" << program << "' to " << e.report.directory.string() << " (";
  for (size_t i = 0; i < e.report.files.size(); ++i) std::cout << (i ? ", " : "") << e.report.files[i];
  std::cout << "); demo inputs: " << e.inputs << "\n";
  for (size_t i = 0; i < e.roles.size(); ++i)
    std::cout << "  " << e.roles[i] << " shader  key " << e.report.keys[i].substr(0, 16) << "\n";
}

int export_single(const Options& o) {
  if (!o.inputs.empty() && o.file.empty()) throw UsageError("--inputs goes with one program, not --all");
  const CheckedProgram program = load_program(o.file);
  aot::Cache cache = aot::Cache::from_environment();
  const Exported e = export_one(program, o.file, o.inputs, o.out, o, cache);
  if (o.json)
    std::cout << nlohmann::json{{"target", web::kTargetName}, {"kernels", {kernel_json(program.name(), o.file, e)}},
                                {"refused", nlohmann::json::array()}}
                     .dump()
              << "\n";
  else
    print_exported(program.name(), e);
  return kOk;
}

int export_all(const Options& o) {
  if (!o.inputs.empty()) throw UsageError("--inputs goes with one program; with --all each program's NAME.run.json is used");
  std::error_code ec;
  if (!fs::is_directory(o.all, ec)) throw Error(ErrorKind::invalid_input, "--all " + o.all + ": not a folder");
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(o.all, ec))
    if (entry.path().extension() == ".json" && !is_run_file(entry.path()) && entry.is_regular_file()) files.push_back(entry.path());
  if (ec) throw Error(ErrorKind::invalid_input, "cannot read the folder " + o.all + ": " + ec.message());
  std::sort(files.begin(), files.end());
  aot::Cache cache = aot::Cache::from_environment();
  std::vector<web::WebIndexEntry> index;
  nlohmann::json kernels = nlohmann::json::array(), refused = nlohmann::json::array();
  for (const fs::path& file : files) {
    const std::string folder = file.stem().string();
    std::string label = folder;
    try {
      const CheckedProgram program = load_program(file.string());
      if (!program.name().empty()) label = program.name();
      const Exported e = export_one(program, file.string(), "", fs::path(o.out) / folder, o, cache);
      index.push_back({folder, label, ""});
      if (o.json) kernels.push_back(kernel_json(label, file.string(), e));
      else print_exported(label, e);
    } catch (const Error& err) {
      // An invalid program, one the target refuses, an unreadable file or
      // run file: reported, and the others exported.
      if (err.kind() == ErrorKind::lowering) throw;
      index.push_back({folder, label, err.what()});
      refused.push_back({{"program", label}, {"file", file.string()}, {"error", err.what()}});
      std::cerr << "vyre: " << file.string() << ": not exported: " << err.what() << "\n";
    }
  }
  try {
    web::write_web_index(o.out, index);
  } catch (const Error& err) {
    if (err.kind() == ErrorKind::io) throw WriteError(err.what());
    throw;
  }
  const size_t exported = index.size() - refused.size();
  if (o.json)
    std::cout << nlohmann::json{{"target", web::kTargetName}, {"kernels", kernels}, {"refused", refused},
                                {"index", (fs::path(o.out) / "index.html").string()}}
                     .dump()
              << "\n";
  else
    std::cout << files.size() << " programs: " << exported << " exported, " << refused.size()
              << " not exported; index: " << (fs::path(o.out) / "index.html").string() << "\n";
  return refused.empty() ? kOk : kFailure;
}

}  // namespace

void add_export(CLI::App& app, Action& action) {
  auto* export_cmd = app.add_subcommand("export", "Export programs for other platforms (docs/web.md)");
  export_cmd->require_subcommand(1);
  auto* web = export_cmd->add_subcommand(
      "web", "Write a program as an ES module for WebGPU pages: kernel.js, kernel.d.ts, package.json, index.html");
  auto o = std::make_shared<Options>();
  auto* program = web->add_option("program", o->file, "Program file (JSON; - reads stdin)");
  auto* all = web->add_option("--all", o->all,
                              "Export every program of this folder (NAME.json, with NAME.run.json for its demo) into "
                              "OUT/NAME/, with OUT/index.html listing them");
  program->excludes(all);
  web->add_option("-o,--out", o->out, "Folder to write into (made when missing)")->required();
  web->add_option("--inputs", o->inputs,
                  "Run file whose inputs and launch the demo page uses (default: PROG.run.json beside the program)");
  web->add_option("--package-name", o->package_name, "package.json's name (default: vyre-kernel-NAME)");
  web->add_option("--workgroup", o->config.workgroup, "Workgroup size override X[,Y,Z] (shapes the shader)");
  web->add_option("--ulp", o->config.ulp,
                  "ULP budget, 0-255: operators get faster forms whose measured error is within it (0: WGSL's builtins)");
  web->add_flag("--no-passes", o->config.no_passes,
                "Write the shader without constant folding, dead-code and common-subexpression elimination");
  web->add_option("--fixed-length", o->config.fixed_lengths,
                  "NAME=N: write len(NAME) into the shader as N (dispatches must then give NAME exactly N elements). "
                  "Repeatable");
  web->add_flag("--json", o->json, "Print {\"target\", \"kernels\": [...], \"refused\": [...]}");
  web->footer("Exit codes: 0 exported; 1 with --all, some program not exported (each named on stderr); 2 usage; "
              "3 a program the web target refuses or bad inputs; 6 a file that could not be written. Serve the "
              "folder over http to open index.html.");
  web->callback([&action, o] {
    action = [o] {
      if (o->file.empty() && o->all.empty()) throw UsageError("give a program file, or --all FOLDER");
      return o->all.empty() ? export_single(*o) : export_all(*o);
    };
  });
}

}  // namespace vyre::cli
