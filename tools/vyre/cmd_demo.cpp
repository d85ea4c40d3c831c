// vyre demo: runs every bundled example in a fresh `vyre run` process, twice,
// against one cache directory: the first pass misses and lowers, the second
// hits. Prints each result and where the time went.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
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

// Runs this same executable with `args`, with VYRE_AOT_CACHE_DIR set.
Child run_self(const std::vector<std::string>& args, const fs::path& cache_dir) {
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
};

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

  std::cout << "vyre demo: each bundled example runs in a fresh process, twice, on one AOT cache.\n"
            << "cache directory: " << cache_dir.string()
            << (cache_dir_option.empty() ? " (new and empty)" : "") << "\n";

  std::vector<std::vector<Result>> passes(2);
  std::string adapter;
  int failures = 0;
  for (int pass = 0; pass < 2; ++pass) {
    std::cout << "\n"
              << (pass == 0 ? "pass 1: a cold cache, so each program is lowered to WGSL and the WGSL published\n"
                            : "pass 2: a warm cache, so each program's WGSL is read back and verified, not lowered\n")
              << "  " << pad("example", 14) << pad("cache", 7) << pad("lowering", 12) << pad("shader+pipe", 12)
              << pad("dispatch", 12) << pad("process", 12) << "outputs\n";
    for (const auto& ex : examples) {
      const fs::path report = work / (ex.name + ".report.json");
      Child c = run_self({"run", (work / (ex.name + ".json")).string(), "--inputs", (work / (ex.name + ".run.json")).string(),
                          "--check", "--report-json", report.string()},
                         cache_dir);
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
      adapter = rep["adapter"].get<std::string>();
      std::cout << "  " << pad(ex.name, 14) << pad(r.hit ? "hit" : "miss", 7)
                << pad(r.hit ? "        -" : ms(t["lower"].get<double>()), 12)
                << pad(ms(t["shader"].get<double>() + t["pipeline"].get<double>()), 12)
                << pad(ms(t["upload"].get<double>() + t["dispatch"].get<double>() + t["readback"].get<double>()), 12)
                << pad(ms(c.wall_ms), 12) << abbreviate(r.outputs, 48) << " as expected\n";
      passes[pass].push_back(r);
    }
  }

  bool same = failures == 0;
  for (size_t i = 0; same && i < examples.size(); ++i) same = passes[0][i].outputs == passes[1][i].outputs;
  bool misses_then_hits = failures == 0;
  for (size_t i = 0; misses_then_hits && i < examples.size(); ++i)
    misses_then_hits = (!passes[0][i].hit || !cache_dir_option.empty()) && passes[1][i].hit;

  std::cout << "\n"
            << "device: " << adapter << "\n"
            << (same ? "both passes printed identical outputs, each equal to the example's expected outputs.\n"
                     : "the passes disagree or failed: see above.\n")
            << (misses_then_hits ? "the second pass hit the cache for every example.\n"
                                 : "the second pass did not hit the cache for every example (see docs/cache.md).\n")
            << "'process' is the wall time of the whole `vyre run` process: start, device, cache or lowering, "
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
  auto* cmd = app.add_subcommand("demo", "Run the bundled examples twice in fresh processes: a cache miss, then a hit");
  auto cache_dir = std::make_shared<std::string>();
  auto keep = std::make_shared<bool>(false);
  cmd->add_option("--cache-dir", *cache_dir, "Use this cache directory instead of a new empty one");
  cmd->add_flag("--keep", *keep, "Keep the temporary directory (examples, reports, cache) afterwards");
  cmd->callback([&action, cache_dir, keep] { action = [cache_dir, keep] { return demo(*cache_dir, *keep); }; });
}

}  // namespace vyre::cli
