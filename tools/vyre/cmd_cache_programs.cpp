// vyre cache explain, warm: the cache seen from programs, their keys
// explained or their WGSL lowered ahead of time.
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cache_command.hpp"
#include "cache_output.hpp"
#include "progress.hpp"
#include "vyre/error.hpp"
#include "vyre/lower.hpp"
#include "vyre/web.hpp"

namespace vyre::cli {
namespace {

// "NAME.run.json": what `vyre run --inputs` reads, beside each example.
bool is_run_file_name(const std::string& file) {
  constexpr std::string_view suffix = ".run.json";
  return file.size() >= suffix.size() && file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool stored_ok(const aot::Cache& cache, const std::string& key) {
  auto entry = cache.show(key);
  return entry && entry->state == aot::EntryState::ok;
}

// --target: "web" keys what `vyre export web` embeds (docs/web.md); empty
// keys a device's (--fingerprint, else the local adapter's).
void add_target_option(CLI::App* cmd, std::string& target, CLI::Option* fingerprint, const char* what) {
  cmd->add_option("--target", target, what)->check(CLI::IsMember({"web"}))->excludes(fingerprint);
}

// One shader of a program, as a target keys it.
struct TargetShader {
  std::string role;  // empty for a device's one shader
  ShaderOptions options;
  aot::KeyParts parts;
};

std::vector<TargetShader> target_shaders(const CheckedProgram& program, const ShaderOptions& config,
                                         const std::string& target, const std::optional<gpu::KeyTarget>& device) {
  std::vector<TargetShader> out;
  if (target == "web") {
    for (const web::WebShader& s : web::web_shaders(program, config)) out.push_back({s.role, s.options, s.parts});
  } else {
    const gpu::WgslTarget t = device->of(program, config);
    out.push_back({"", t.options, t.parts});
  }
  return out;
}

}  // namespace

// vyre cache explain PROGRAM [--fingerprint FP] [--json]
void add_cache_explain(CLI::App* cache_cmd, Action& action) {
  struct ExplainOptions {
    std::string file;
    std::string fingerprint;
    std::string target;
    ConfigOptions config;
    bool json = false;
  };
  auto explain_o = std::make_shared<ExplainOptions>();
  auto* explain = inspecting_subcommand(
      cache_cmd, action, "explain", "Print each component of a program's key and its hash; on a miss, what differs",
      [explain_o](aot::Cache& cache) {
        const CheckedProgram program = load_program(explain_o->file);
        const ShaderOptions config = explain_o->config.to_config();
        if (explain_o->target == "web") {
          // The module's first shader: what its first dispatch without a domain runs.
          const std::vector<web::WebShader> shaders = web::web_shaders(program, config);
          aot::Explanation x = cache.explain(shaders.front().parts, std::nullopt);
          if (explain_o->json) {
            print_json_text(aot::to_json(x));
          } else {
            std::cout << "target:           " << web::kTargetName << ", the " << shaders.front().role
                      << " shader (the module also carries";
            for (size_t i = 1; i < shaders.size(); ++i) std::cout << (i > 1 ? "," : "") << " " << shaders[i].role;
            std::cout << ": `vyre cache warm --target web` lowers them all)\n" << format_explanation(x);
          }
          return kOk;
        }
        const gpu::KeyTarget target = key_target(explain_o->fingerprint);
        aot::Explanation x = cache.explain(target.of(program, config).parts, target.device_fingerprint());
        if (explain_o->json)
          print_json_text(aot::to_json(x));
        else
          std::cout << format_explanation(x);
        return kOk;
      });
  explain->add_option("program", explain_o->file, "Program file (JSON; - reads stdin)")->required();
  auto* explain_fp =
      explain->add_option("--fingerprint", explain_o->fingerprint, "Backend fingerprint (default: the local adapter's)");
  add_target_option(explain, explain_o->target, explain_fp,
                    "web: the key of the first shader `vyre export web` embeds, no device needed (docs/web.md)");
  add_config_options(explain, explain_o->config);
  explain->add_flag("--json", explain_o->json, "Print one JSON object");
}

// vyre cache warm PROGRAMS... [--fingerprint FP]
void add_cache_warm(CLI::App* cache_cmd, Action& action) {
  struct WarmOptions {
    std::vector<std::string> files;
    std::string fingerprint;
    std::string target;
    ConfigOptions config;
  };
  auto warm_o = std::make_shared<WarmOptions>();
  auto* warm = cache_subcommand(
      cache_cmd, action, "warm", "Lower programs into the cache without running them (for this or a target machine)",
      [warm_o](aot::Cache& cache) {
        const ShaderOptions config = warm_o->config.to_config();
        std::optional<gpu::KeyTarget> device;
        if (warm_o->target.empty()) device = key_target(warm_o->fingerprint);
        if (!cache.directory())
          throw Error(ErrorKind::io, "no writable AOT cache directory to warm: set VYRE_AOT_CACHE_DIR");
        ProgressBar progress(warm_o->files.size());
        size_t hits = 0, lowered = 0, not_stored = 0, failed = 0, run_files = 0;
        double lower_ms = 0;
        for (size_t i = 0; i < warm_o->files.size(); ++i) {
          const std::string& file = warm_o->files[i];
          progress.update(i, file);
          if (is_run_file_name(file)) {
            // `vyre cache warm examples/*.json` takes the run files too.
            ++run_files;
            progress.clear();
            std::cerr << "vyre: " << file << ": skipped: a run file (inputs for `vyre run --inputs`), not a program\n";
            continue;
          }
          try {
            const CheckedProgram program = load_program(file);
            for (const TargetShader& t : target_shaders(program, config, warm_o->target, device)) {
              aot::Artifact a =
                  cache.load_or_compile(t.parts, [&] { return lower_to_wgsl(program, t.options); }, program.name());
              lower_ms += a.lower_ms;
              // The cache never fails a lowering; whether it kept the WGSL
              // (a full or read-only disk) is seen by looking for the entry.
              const bool stored = a.cache_hit || stored_ok(cache, a.key);
              (a.cache_hit ? hits : stored ? lowered : not_stored) += 1;
              progress.clear();
              std::cout << (a.cache_hit ? "cached      " : stored ? "lowered     " : "not stored  ")
                        << a.key.substr(0, 16) << "  " << file << (t.role.empty() ? "" : " (" + t.role + ")") << "\n";
            }
          } catch (const Error& e) {
            // Report and go on with the other programs.
            ++failed;
            progress.clear();
            std::istringstream lines(e.what());
            for (std::string line; std::getline(lines, line);) std::cerr << "vyre: " << file << ": " << line << "\n";
          }
        }
        progress.update(warm_o->files.size(), "done");
        progress.clear();
        cache.flush();
        std::cout << warm_o->files.size() - run_files << " programs";
        if (!warm_o->target.empty())  // counted by shader: a web module carries two or three
          std::cout << " (" << lowered + hits + not_stored << " " << warm_o->target << " shaders)";
        std::cout << ": " << lowered << " lowered, " << hits
                  << " already cached, " << not_stored << " lowered but not stored, " << failed << " failed";
        if (run_files > 0) std::cout << " (" << run_files << " run files skipped)";
        std::cout << "; lowering took " << std::fixed << std::setprecision(1) << lower_ms << " ms\n";
        if (not_stored > 0)
          std::cerr << "vyre: error: " << not_stored << " lowered programs could not be stored in "
                    << cache.directory()->string() << " (the warning above says why)\n";
        if (failed > 0) return kFailure;
        return not_stored == 0 ? kOk : kWriteError;
      });
  warm->add_option("programs", warm_o->files, "Program files (JSON); run files (*.run.json) are skipped")->required();
  auto* warm_fp =
      warm->add_option("--fingerprint", warm_o->fingerprint, "Backend fingerprint (default: the local adapter's)");
  add_target_option(warm, warm_o->target, warm_fp,
                    "web: lower every shader `vyre export web` embeds (base, widened, domain-guarded), no device "
                    "needed (docs/web.md)");
  add_config_options(warm, warm_o->config);
}

}  // namespace vyre::cli
