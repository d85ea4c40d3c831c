// vyre demo: runs every bundled example in a fresh `vyre run` process, three
// times, against one cache directory: both caches cold; vyre's cache warm
// with the driver's pipeline cache off; both warm. Prints each result, where
// the time went, and which cache made which stage fast.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli.hpp"
#include "embedded_examples.hpp"
#include "vyre/error.hpp"

namespace vyre::cli {
namespace fs = std::filesystem;
namespace {

struct Child {
  int exit_code = -1;
  std::string out;
  std::string err;
  double wall_ms = 0;
};

// Runs this same executable with `args`, with VYRE_AOT_CACHE_DIR set, and
// `env` on top.
Child run_self(const std::vector<std::string>& args, const fs::path& cache_dir,
               const std::vector<std::pair<std::string, std::string>>& env) {
  const fs::path out_file = fs::temp_directory_path() / ("vyre-demo-out-" + std::to_string(getpid()));
  const fs::path err_file = out_file.string() + ".err";
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid < 0) throw Error(ErrorKind::io, "fork failed");
  if (pid == 0) {
    int out = open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0 || err < 0) _exit(127);
    dup2(out, 1);
    dup2(err, 2);
    setenv("VYRE_AOT_CACHE_DIR", cache_dir.c_str(), 1);
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> argv{const_cast<char*>("vyre")};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  Child c;
  c.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  auto slurp = [](const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  c.out = slurp(out_file);
  c.err = slurp(err_file);
  std::error_code ec;
  fs::remove(out_file, ec);
  fs::remove(err_file, ec);
  return c;
}

std::string ms(double v) {
  char buf[32];
  (void)std::snprintf(buf, sizeof buf, "%8.2f ms", v);  // timings: far under 32
  return buf;
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

// {"out": [1, 2, 3, ...]} shortened to about `width` characters, keeping
// whole values: {"out": [1, 2, ... 700 values]}.
std::string abbreviate(const std::string& outputs, size_t width) {
  if (outputs.size() <= width) return outputs;
  nlohmann::json j = nlohmann::json::parse(outputs, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return outputs.substr(0, width) + "...";
  std::string out = "{";
  for (auto it = j.begin(); it != j.end(); ++it) {
    out += (out.size() > 1 ? ", " : "") + nlohmann::json(it.key()).dump() + ": [";
    const size_t budget = width / std::max<size_t>(j.size(), 1);
    std::string values;
    size_t shown = 0;
    for (const auto& v : it.value()) {
      const std::string text = v.dump();
      if (values.size() + text.size() > budget) break;
      values += (shown ? ", " : "") + text;
      ++shown;
    }
    out += values;
    if (shown < it.value().size()) out += ", ... " + std::to_string(it.value().size()) + " values";
    out += "]";
  }
  return out + "}";
}

struct Result {
  std::string outputs;
  bool hit = false;
  double lower_ms = 0;
  double compile_ms = 0;  // shader module and pipeline: naga and the driver
  double dispatch_ms = 0; // upload, run, readback
  double process_ms = 0;
  // What the driver's pipeline cache can shorten: some drivers (lavapipe)
  // compile a pipeline at its first dispatch, not at its creation.
  double driver_stages_ms() const { return compile_ms + dispatch_ms; }
};

struct Pass {
  const char* title;
  // The driver's pipeline cache off: this pass measures vyre's cache alone.
  bool driver_cache_off;
};

// The driver's own caches too, so that "off" is off whatever the defaults.
std::vector<std::pair<std::string, std::string>> driver_cache_off_environment() {
  return {{"VYRE_DRIVER_CACHE", "0"}, {"MESA_SHADER_CACHE_DISABLE", "true"}, {"__GL_SHADER_DISK_CACHE", "0"}};
}

// What the driver's pipeline cache held for this run. Its folder is shared
// by every program on the device, so a count of files is not a hit: a
// program that missed vyre's cache has never run on this cache directory,
// and the files there are the pipelines of the examples before it.
std::string driver_column(const nlohmann::json& report, bool off, bool vyre_hit) {
  if (off) return "off";
  const auto& d = report["driver_cache"];
  if (!d.value("active", false)) return "driver's";
  if (d.value("files_before", 0) == 0) return "empty";
  return vyre_hit ? "warm" : "others'";
}

template <class Field>
double sum(const std::vector<Result>& results, Field field) {
  double total = 0;
  for (const auto& r : results) total += std::invoke(field, r);
  return total;
}

int demo(const std::string& cache_dir_option, bool keep) {
  const auto& examples = embedded_examples();
  if (examples.empty()) throw Error(ErrorKind::io, "this build has no embedded examples");

  char work_template[] = "/tmp/vyre-demo-XXXXXX";
  if (!mkdtemp(work_template)) throw Error(ErrorKind::io, "cannot create a temporary directory");
  const fs::path work = work_template;
  const fs::path cache_dir = cache_dir_option.empty() ? work / "cache" : fs::path(cache_dir_option);
  for (const auto& ex : examples) {
    write_output_file(work / (ex.name + ".json"), ex.program_json);
    write_output_file(work / (ex.name + ".run.json"), ex.run_json);
  }

  std::cout << "vyre demo: each bundled example runs in a fresh process, three times, on one cache directory.\n"
            << "cache directory: " << cache_dir.string()
            << (cache_dir_option.empty() ? " (new and empty)" : "") << "\n"
            << "It holds vyre's WGSL entries and the GPU driver's pipeline cache (naga's translation is never cached).\n";

  const std::vector<Pass> plan{
      {"pass 1: both caches cold: each program is lowered, translated by naga and compiled by the driver\n"
       "  (the driver's cache starts empty and then holds only the pipelines of the examples before: others')",
       false},
      {"pass 2: vyre's cache warm, the driver's pipeline cache off: lowering is skipped, nothing else", true},
      {"pass 3: both warm: lowering skipped, and the driver finds its pipelines in its folder of the cache", false}};
  std::vector<std::vector<Result>> passes(plan.size());
  std::string adapter;
  int failures = 0;
  for (size_t pass = 0; pass < plan.size(); ++pass) {
    std::cout << "\n"
              << plan[pass].title << "\n"
              << "  " << pad("example", 14) << pad("vyre", 6) << pad("driver", 9) << pad("lowering", 12)
              << pad("shader+pipe", 12) << pad("dispatch", 12) << pad("process", 12) << "outputs\n";
    for (const auto& ex : examples) {
      const fs::path report = work / (ex.name + ".report.json");
      Child c = run_self({"run", (work / (ex.name + ".json")).string(), "--inputs", (work / (ex.name + ".run.json")).string(),
                          "--check", "--report-json", report.string()},
                         cache_dir, plan[pass].driver_cache_off ? driver_cache_off_environment()
                                                                    : std::vector<std::pair<std::string, std::string>>{});
      Result r;
      if (c.exit_code != 0) {
        std::cout << "  " << pad(ex.name, 14) << "FAILED (exit " << c.exit_code << "): " << c.err;
        ++failures;
        passes[pass].push_back(r);
        continue;
      }
      nlohmann::json rep = nlohmann::json::parse(std::ifstream(report), nullptr, false);
      if (rep.is_discarded()) throw Error(ErrorKind::io, "cannot read the run report " + report.string());
      const auto& t = rep["timings_ms"];
      r.hit = rep["cache_hit"].get<bool>();
      r.outputs = c.out.substr(0, c.out.find_last_not_of('\n') + 1);
      r.lower_ms = t["lower"].get<double>();
      r.compile_ms = t["shader"].get<double>() + t["pipeline"].get<double>();
      r.dispatch_ms = t["upload"].get<double>() + t["dispatch"].get<double>() + t["readback"].get<double>();
      r.process_ms = c.wall_ms;
      adapter = rep["adapter"].get<std::string>();
      std::cout << "  " << pad(ex.name, 14) << pad(r.hit ? "hit" : "miss", 6)
                << pad(driver_column(rep, plan[pass].driver_cache_off, r.hit), 9)
                << pad(r.hit ? "        -" : ms(r.lower_ms), 12) << pad(ms(r.compile_ms), 12)
                << pad(ms(t["upload"].get<double>() + t["dispatch"].get<double>() + t["readback"].get<double>()), 12)
                << pad(ms(c.wall_ms), 12) << abbreviate(r.outputs, 48) << " as expected\n";
      passes[pass].push_back(r);
    }
  }

  bool same = failures == 0;
  for (size_t p = 1; same && p < passes.size(); ++p)
    for (size_t i = 0; same && i < examples.size(); ++i) same = passes[0][i].outputs == passes[p][i].outputs;
  bool misses_then_hits = failures == 0;
  for (size_t i = 0; misses_then_hits && i < examples.size(); ++i)
    misses_then_hits = (!passes[0][i].hit || !cache_dir_option.empty()) && passes[1][i].hit && passes[2][i].hit;

  std::cout << "\n"
            << "device: " << adapter << "\n"
            << (same ? "every pass printed identical outputs, each equal to the example's expected outputs.\n"
                     : "the passes disagree or failed: see above.\n")
            << (misses_then_hits ? "passes 2 and 3 hit vyre's cache for every example.\n"
                                 : "passes 2 and 3 did not hit vyre's cache for every example (see docs/cache.md).\n");
  if (failures == 0) {
    // Each cache's share, from the stages it skips, summed over the examples.
    std::cout << "vyre's cache: lowering " << ms(sum(passes[0], &Result::lower_ms)) << " in pass 1, "
              << ms(sum(passes[1], &Result::lower_ms)) << " in pass 2.\n"
              << "driver's pipeline cache: shader+pipe and dispatch " << ms(sum(passes[1], &Result::driver_stages_ms))
              << " with it off (pass 2), " << ms(sum(passes[2], &Result::driver_stages_ms))
              << " with it warm (pass 3); some drivers, lavapipe among them, compile at the first dispatch.\n"
              << "processes: " << ms(sum(passes[0], &Result::process_ms)) << ", " << ms(sum(passes[1], &Result::process_ms))
              << ", " << ms(sum(passes[2], &Result::process_ms))
              << " in passes 1, 2, 3; most of a process is starting the device, which no cache shortens.\n";
  }
  std::cout << "'process' is the wall time of the whole `vyre run` process: start, device, cache or lowering, "
               "shader and pipeline, dispatch, printing.\n";
  std::error_code ec;
  if (keep) {
    std::cout << "kept " << work.string() << " (the examples, their reports and the cache).\n";
  } else {
    fs::remove_all(work, ec);
  }
  return same && misses_then_hits ? kOk : kFailure;
}

}  // namespace

void add_demo(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "demo", "Run the bundled examples in fresh processes: cold, vyre's cache warm, both vyre's and the driver's warm");
  auto cache_dir = std::make_shared<std::string>();
  auto keep = std::make_shared<bool>(false);
  cmd->add_option("--cache-dir", *cache_dir, "Use this cache directory instead of a new empty one");
  cmd->add_flag("--keep", *keep, "Keep the temporary directory (examples, reports, cache) afterwards");
  cmd->callback([&action, cache_dir, keep] { action = [cache_dir, keep] { return demo(*cache_dir, *keep); }; });
}

}  // namespace vyre::cli
