// vyre run PROG.json [...]: run a program on the GPU through the AOT cache
// (or on the CPU reference interpreter) and print its outputs as one JSON
// object on stdout, or write them to files (--output).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <future>
#include <optional>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "run_outputs.hpp"
#include "vyre/driver_cache.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"
#include "vyre/reference.hpp"
#include "vyre/run_file.hpp"
#include "vyre/values.hpp"

namespace vyre::cli {
namespace {

struct RunOptions {
  std::string file;
  std::vector<std::string> inputs;
  std::vector<std::string> sizes;
  std::string run_file;
  std::string grid;
  std::string dim;
  ConfigOptions config;
  std::string backend = "gpu";
  bool check = false;
  bool check_bounds = false;
  bool check_races = false;
  std::optional<uint64_t> shuffle;
  bool verbose = false;
  bool tune = false;
  bool retune = false;
  bool specialize_lengths = false;
  std::string report_json;
  std::optional<double> timeout;  // seconds; 0: none
  std::vector<std::string> outputs;  // [NAME=]FILE each
  std::string format;                // of the --output files; empty: each file's extension
};

// Unless told otherwise, `vyre run` gives up on a dispatch after ten minutes.
constexpr double kDefaultTimeoutSeconds = 600;

std::string fmt_ms(double ms) {
  char buf[32];
  (void)std::snprintf(buf, sizeof buf, "%.2f ms", ms);  // timings: far under 32
  return buf;
}

nlohmann::json pipeline_workgroup(const gpu::Pipeline& pipeline) {
  const Dim3& size = pipeline.interface().workgroup_size;
  return nlohmann::json::array({size[0], size[1], size[2]});
}

// What --tune did, for --verbose.
std::string tuning_text(const std::optional<gpu::Tuned>& tuned) {
  if (!tuned) return "";
  const aot::TuningRecord& r = tuned->record;
  std::string out = "vyre: tuning record " + std::string(tuned->reused ? "reused from the cache" : "made now") +
                    " (key " + tuned->record_key + ", " + r.size_class + "): workgroup " + dim3_text(r.workgroup) +
                    ", " + std::to_string(r.vector_width) + " per invocation";
  if (r.chose_own()) out += " (the program's own: " + r.reason + ")";
  if (!tuned->reused) out += "; timed " + std::to_string(r.candidates.size()) + " candidates in " + fmt_ms(r.tuning_ms);
  if (!tuned->applied) out += "; not applied to this dispatch: " + tuned->not_applied;
  return out + "; this call " + fmt_ms(tuned->tune_ms) + "\n";
}

nlohmann::json tuning_json(const std::optional<gpu::Tuned>& tuned) {
  if (!tuned) return nullptr;
  const aot::TuningRecord& r = tuned->record;
  return {{"record_key", tuned->record_key},
          {"reused", tuned->reused},
          {"applied", tuned->applied},
          {"size_class", r.size_class},
          {"workgroup", {r.workgroup[0], r.workgroup[1], r.workgroup[2]}},
          {"vector_width", r.vector_width},
          {"candidates", r.candidates.size()},
          {"tuning_ms", r.tuning_ms}};
}

// The outputs in binding order, one JSON object on stdout; or, with
// --output, in their files and nothing on stdout. Returns what --verbose
// tells of the files.
std::string emit_outputs(const Program& program, const Outputs& outputs, const std::vector<OutputFile>& files) {
  if (!files.empty()) return write_output_files(program, outputs, files);
  std::cout << outputs_json(program, outputs);
  return "";
}

// One element of a buffer as JSON text ("5", "\"nan\"").
std::string element_text(ScalarType type, const std::vector<uint8_t>& bytes, size_t index) {
  const size_t size = element_bytes(type);
  const std::string one = format_values(type, std::vector<uint8_t>(bytes.data() + size * index, bytes.data() + size * (index + 1)));
  return one.substr(1, one.size() - 2);
}

// Compares the outputs with the run file's "expect": a one-line verdict on
// stderr, and for each output that differs, its first differing element.
int check_outputs(const Program& program, const RunInputs& run, const Outputs& outputs) {
  if (run.expect.empty()) throw Error(ErrorKind::invalid_input, "--check needs expected outputs (\"expect\" in --inputs FILE)");
  int code = kOk;
  for (const auto& [name, want] : run.expect) {
    const Buffer* b = program.find_buffer(name);
    if (!outputs.has(name)) throw Error(ErrorKind::invalid_input, "--check: '" + name + "' is not an output buffer");
    const Tolerance tol = run.tolerance.count(name) ? run.tolerance.at(name) : Tolerance{};
    const std::vector<uint8_t>& got = outputs.bytes(name);
    const auto at = first_difference(b->type, got, want, tol.abs, tol.rel);
    if (!at) continue;
    code = kFailure;
    std::cerr << "vyre: check failed for '" << name << "': ";
    const size_t size = element_bytes(b->type);
    if (got.size() != want.size() && *at == std::min(got.size(), want.size()) / size)
      std::cerr << "expected " << want.size() / size << " values, got " << got.size() / size << "\n";
    else
      std::cerr << "first difference at index " << *at << ": expected " << element_text(b->type, want, *at) << ", got "
                << element_text(b->type, got, *at) << "\n";
  }
  if (code == kOk)
    std::cerr << "vyre: check passed: " << run.expect.size() << (run.expect.size() == 1 ? " output" : " outputs")
              << "\n";
  return code;
}

// The driver's pipeline cache, in words: whose it is and whether it held
// anything when this process started (a cold one compiles every pipeline).
std::string driver_cache_text(const gpu::DriverCachePlacement& p) {
  if (!p.active) return "not vyre's (" + p.reason + ")";
  if (p.files_before == 0) return "vyre's, cold (empty) in " + p.data_folder.string();
  return "vyre's, warm (" + std::to_string(p.files_before) + " files) in " + p.data_folder.string();
}

// What one run dispatches, for the reference and the GPU alike: the run
// file, then --input, --size and --grid over it; and the shader options
// (--specialize-lengths writes the dispatched lengths into them).
struct AssembledRun {
  RunInputs run;
  ShaderOptions config;
};

AssembledRun assemble_run(const RunOptions& options, const CheckedProgram& program) {
  AssembledRun a{options.run_file.empty() ? RunInputs{} : read_run_file(program, options.run_file), options.config.to_config()};
  for (const auto& opt : options.inputs) apply_input_option(program, opt, a.run.inputs);
  for (const auto& opt : options.sizes) apply_size_option(program, opt, a.run.inputs);
  // A launch on the command line replaces the run file's.
  if (!options.dim.empty() && !options.grid.empty())
    throw Error(ErrorKind::invalid_input, "--dim and --grid are both given: give one");
  if (!options.grid.empty()) {
    a.run.grid = parse_dim3(options.grid, "--grid");
    a.run.inputs.dim(std::nullopt);
  }
  if (!options.dim.empty()) {
    a.run.inputs.dim(parse_dim3(options.dim, "--dim"));
    a.run.grid.reset();
  }
  // The guarded shader checks each invocation against the launch domain,
  // so it is dispatched only with one (a dispatch given --dim has the guard
  // anyway, with or without this flag).
  if (a.config.domain_guard && !a.run.inputs.domain())
    throw Error(ErrorKind::invalid_input,
                "--domain-guard needs a launch domain: give --dim X[,Y,Z] (or \"dim\" in the run file); a run given "
                "--dim has the guard without the flag");
  if (options.specialize_lengths)
    for (const auto& [name, length] : dispatched_lengths(program, a.run.inputs, a.run.grid))
      a.config.fixed_lengths.try_emplace(name, length);
  return a;
}

int run_on_gpu(const RunOptions& options, std::vector<OutputFile> files, std::chrono::steady_clock::time_point start);

int run(const RunOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  // The files' formats are known from the command line alone: a mistake
  // there is told before anything starts.
  std::vector<OutputFile> files = parse_output_options(options.outputs, options.format);
  if (options.backend != "reference") {
    if (options.check_bounds || options.check_races || options.shuffle)
      throw Error(ErrorKind::invalid_input, "--check-bounds, --check-races and --shuffle are the reference "
                                            "interpreter's: give --backend reference");
    return run_on_gpu(options, std::move(files), start);
  }
  if (options.tune || options.retune)
    throw Error(ErrorKind::invalid_input, "--tune and --retune time configurations on the GPU; the reference "
                                          "interpreter has none (leave out --backend reference)");
  const CheckedProgram program = load_program(options.file);
  check_output_files(program, files);

  auto [run, config] = assemble_run(options, program);

  const auto t = std::chrono::steady_clock::now();
  reference::RunChecks checks;
  checks.bounds = options.check_bounds;
  checks.races = options.check_races;
  checks.shuffle_seed = options.shuffle;
  const Outputs outputs = reference::run(program, run.inputs, config, run.grid, checks);
  const double run_ms = ms_since(t);
  const std::string written = emit_outputs(program, outputs, files);
  if (options.verbose) std::cerr << "vyre: reference interpreter ran in " << fmt_ms(run_ms) << "\n" << written;
  return options.check ? check_outputs(program, run, outputs) : kOk;
}

int run_on_gpu(const RunOptions& options, std::vector<OutputFile> files, std::chrono::steady_clock::time_point start) {
  // Before any other thread starts: the driver reads its cache's location
  // from the environment.
  const gpu::DriverCachePlacement driver_cache = gpu::place_driver_cache();
  // Reading and checking the program needs no device: it runs while the
  // instance and the device start.
  double parse_ms = 0;
  std::future<CheckedProgram> loading = std::async(std::launch::async, [&options, &parse_ms] {
    const auto t = std::chrono::steady_clock::now();
    CheckedProgram checked = load_program(options.file);
    parse_ms = ms_since(t);
    return checked;
  });

  auto t = std::chrono::steady_clock::now();
  gpu::BackendOptions backend_options;
  const std::optional<std::chrono::milliseconds> from_environment = gpu::BackendOptions::from_environment().dispatch_timeout;
  const double seconds = options.timeout ? *options.timeout : from_environment ? static_cast<double>(from_environment->count()) / 1000.0 : kDefaultTimeoutSeconds;
  if (std::isnan(seconds) || seconds < 0)
    throw Error(ErrorKind::invalid_input, "--timeout must be a positive number of seconds, or 0 or inf (none)");
  // 0 and inf are no limit: milliseconds::max(), a deadline that never
  // comes (so that VYRE_DISPATCH_TIMEOUT cannot fill it in); so is a number
  // of seconds too large for a count of milliseconds.
  const double ms = seconds * 1000;
  backend_options.dispatch_timeout = seconds == 0 || !(ms < 9e18) ? std::chrono::milliseconds::max()
                                                                  : std::chrono::milliseconds(static_cast<int64_t>(ms));
  std::optional<gpu::Backend> started;
  std::exception_ptr backend_failure;
  try {
    started.emplace(backend_options);
  } catch (...) {
    backend_failure = std::current_exception();
  }
  const double backend_ms = ms_since(t);
  // A bad program is the first thing to tell, even without a GPU.
  const CheckedProgram program = loading.get();
  if (backend_failure) std::rethrow_exception(backend_failure);
  gpu::Backend& backend = *started;
  const double overlap_wait_ms = ms_since(t) - backend_ms;
  check_output_files(program, files);

  auto [run, config] = assemble_run(options, program);

  t = std::chrono::steady_clock::now();
  // With --tune the pipeline and grid are the tuned ones (docs/tuning.md).
  std::optional<gpu::Tuned> tuned;
  if (options.tune || options.retune) {
    gpu::TuneOptions tuning = gpu::TuneOptions::from_environment();
    tuning.retune = options.retune;
    tuned.emplace(backend.tune(program, run.inputs, run.grid, config, tuning));
  }
  // Only the shader this dispatch runs is compiled (compile_for).
  gpu::Pipeline pipeline = tuned ? std::move(tuned->pipeline) : backend.compile_for(program, run.inputs, run.grid, config);
  const std::optional<Dim3> grid = tuned ? tuned->grid : run.grid;
  const double compile_ms = ms_since(t);
  gpu::DispatchReport dispatch_report;
  const Outputs outputs = pipeline.dispatch(run.inputs, grid, &dispatch_report);
  const double total_ms = ms_since(start);

  const std::string written = emit_outputs(program, outputs, files);

  const auto& c = pipeline.compile_report();
  if (options.verbose) {
    const auto& a = backend.adapter();
    std::cerr << "vyre: adapter " << a.name << " (" << a.backend << ", " << a.type << "), opened in " << fmt_ms(backend_ms)
              << "\n";
    // One report per shader compiled: a later variant is compiled only when
    // a dispatch needs it.
    for (const gpu::CompileReport& r : pipeline.compile_reports())
      std::cerr << "vyre: vyre's cache " << (r.cache_hit ? "hit: lowering skipped" : "miss: lowered") << ", key "
                << r.cache_key << ", " << fmt_ms(r.cache_ms) << (r.cache_hit ? "" : " (lowering " + fmt_ms(r.lower_ms) + ")")
                << "\n"
                << "vyre: shader module (naga) " << fmt_ms(r.shader_ms) << ", compute pipeline (driver) "
                << fmt_ms(r.pipeline_ms) << "\n";
    std::cerr << "vyre: driver pipeline cache: " << driver_cache_text(driver_cache) << "\n"
              << "vyre: dispatch of " << dim3_text(dispatch_report.grid) << " workgroups, " << int{dispatch_report.vector_width}
              << (dispatch_report.vector_width == 1 ? " element" : " elements (widened)") << " per invocation: upload " << fmt_ms(dispatch_report.upload_ms) << ", run "
              << fmt_ms(dispatch_report.dispatch_ms) << ", readback " << fmt_ms(dispatch_report.readback_ms) << "\n"
              << tuning_text(tuned)
              << "vyre: total " << fmt_ms(total_ms) << " (reading and checking the program " << fmt_ms(parse_ms)
              << ", beside the device's start; compile " << fmt_ms(compile_ms) << ")\n"
              << written;
  }
  if (!options.report_json.empty()) {
    nlohmann::json report = {
        {"program", program.name()},
        {"adapter", backend.adapter().name},
        {"cache_hit", c.cache_hit},
        {"cache_key", c.cache_key},
        {"vector_width", dispatch_report.vector_width},
        {"fixed_lengths", config.fixed_lengths},
        {"workgroup", pipeline_workgroup(pipeline)},
        {"tuning", tuning_json(tuned)},
        {"driver_cache",
         {{"active", driver_cache.active},
          {"vyres", driver_cache.active},  // the old spelling of "active", kept for one release (docs/cli.md)
          {"files_before", driver_cache.files_before},
          {"bytes_before", driver_cache.bytes_before},
          {"folder", driver_cache.data_folder.string()},
          {"reason", driver_cache.reason}}},
        {"timings_ms",
         {{"parse", parse_ms},
          {"parse_wait", overlap_wait_ms},
          {"backend", backend_ms},
          {"instance", backend.report().instance_ms},
          {"adapter", backend.report().adapter_ms},
          {"device", backend.report().device_ms},
          {"cache", c.cache_ms},
          {"lower", c.lower_ms},
          {"shader", c.shader_ms},
          {"pipeline", c.pipeline_ms},
          {"upload", dispatch_report.upload_ms},
          {"dispatch", dispatch_report.dispatch_ms},
          {"readback", dispatch_report.readback_ms},
          {"tune", tuned ? tuned->tune_ms : 0.0},
          {"total", total_ms}}}};
    write_output_file(options.report_json, report.dump() + "\n");
  }
  if (options.check) return check_outputs(program, run, outputs);
  return kOk;
}

}  // namespace

void add_run(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "run", "Run a program on the GPU (through the AOT cache) and print its outputs as JSON, or write them to files");
  auto run_options = std::make_shared<RunOptions>();
  cmd->add_option("program", run_options->file, "Program file (JSON; - reads stdin)")->required();
  cmd->add_option("--input", run_options->inputs,
                  "NAME=V1,V2,... or NAME=@FILE (FILE.npy, .csv or .json as what it holds; any other file as raw "
                  "little-endian bytes); repeatable");
  cmd->add_option("--size", run_options->sizes, "NAME=N: element count of a runtime-sized buffer given no contents; repeatable");
  cmd->add_option("--inputs", run_options->run_file, "Run file: {\"inputs\": {...}, \"sizes\": {...}, \"grid\": [...], \"expect\": {...}}");
  cmd->add_option("--backend", run_options->backend, "gpu (default) or reference (the CPU interpreter)")
      ->check(CLI::IsMember({"gpu", "reference"}));
  cmd->add_option("--dim", run_options->dim,
                  "Launch domain X[,Y,Z]: the invocations to run (the grid follows; invocations beyond it have no effect)");
  cmd->add_option("--grid", run_options->grid,
                  "Number of workgroups X[,Y,Z]. Without --dim or --grid, only a program proven element-wise runs, one "
                  "invocation per element of its first output (docs/gpu.md, \"Launches\")");
  cmd->add_option("--timeout", run_options->timeout,
                  "Seconds a dispatch may run before the device is given up (default: VYRE_DISPATCH_TIMEOUT, else 600; 0 or inf: none)");
  add_config_options(cmd, run_options->config);
  cmd->add_flag("--specialize-lengths", run_options->specialize_lengths,
                "Write the lengths this run dispatches into the shader (length specialization: checks against them "
                "can fold away; the shader is cached per lengths). Same as --fixed-length for each len the program reads");
  cmd->add_flag("--check", run_options->check, "Compare the outputs with the run file's \"expect\"; exit 1 on a difference");
  cmd->add_flag("--check-bounds", run_options->check_bounds,
                "With --backend reference: the first out-of-range load or store is an error naming its JSON path "
                "(exit 1) instead of being dropped silently");
  cmd->add_flag("--check-races", run_options->check_races,
                "With --backend reference: the first data race (two invocations on one element between the same "
                "barriers, one writing, no atomic) is an error naming both accesses (exit 1)");
  cmd->add_option("--shuffle", run_options->shuffle,
                  "With --backend reference: run each workgroup's invocations in an order drawn from this seed "
                  "between barriers, instead of index order");
  cmd->add_flag("--tune", run_options->tune,
                "Run in the configuration tuned for this device and dispatch size: from the cache's tuning record, "
                "else timed now and recorded (docs/tuning.md)");
  cmd->add_flag("--retune", run_options->retune, "Like --tune, but time the candidates again and replace the record");
  cmd->add_flag("-v,--verbose", run_options->verbose, "Tell on stderr whether the cache hit and how long each stage took");
  cmd->add_option("--report-json", run_options->report_json, "Write the cache result and stage timings as JSON to this file");
  cmd->add_option("--output", run_options->outputs,
                  "[NAME=]FILE: write output NAME to FILE instead of printing (without NAME: the only output, or in a "
                  ".json file all of them as printed); repeatable. The format is --format's, else the extension's: "
                  ".json, .npy, .csv, .bin or .raw");
  cmd->add_option("--format", run_options->format,
                  "Format of the --output files: json, npy (NumPy's .npy), bin (raw little-endian) or csv (a value a line)")
      ->check(CLI::IsMember({"json", "npy", "bin", "csv"}));
  cmd->footer(
      "Outputs print in binding order as {\"name\": [values], ...}; f32 values read back to the same bits, with "
      "\"nan\", \"inf\" and \"-inf\" as strings. With --output nothing is printed; files are written whole or "
      "not at all (docs/cli.md, \"Output files\").");
  cmd->callback([&action, run_options] { action = [run_options] { return run(*run_options); }; });
}

}  // namespace vyre::cli
