// `vyre export web` end to end: every example and every conformance program
// exported by the command (`--all`, one process a folder), then run through
// its own kernel.js in headless Chromium (WebGPU on Dawn/SwiftShader), as a
// page would import it, and compared with the reference interpreter by the
// rules the GPU conformance suite uses. The module's refusals (wrong types,
// sizes, missing inputs, launches), its pipeline and buffer reuse, the
// shader each dispatch picks, and the target's own refusals (f64) are
// checked in the same Chromium session.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <tuple>

#include "support/conformance_cases.hpp"
#include "support/programs.hpp"
#include "support/test_support.hpp"
#include "vyre/half.hpp"
#include "vyre/json.hpp"
#include "vyre/reference.hpp"
#include "vyre/run_file.hpp"
#include "vyre/values.hpp"
#include "web/web_files.hpp"

using namespace vyre;
using namespace vyre::test;
using namespace vyre::test::conformance;
using nlohmann::json;

namespace {

const char* kExamples[] = {"xor",       "saxpy",        "collatz", "histogram",   "reduction",
                           "prefix_sum", "matmul_tiled", "softmax", "bitonic_sort", "byte_count", "find_pattern"};

std::vector<uint8_t> unbase64(const std::string& text) {
  std::vector<uint8_t> out;
  uint32_t n = 0;
  int bits = 0;
  for (const char c : text) {
    const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char* at = std::strchr(digits, c);
    if (c == '=' || at == nullptr) continue;
    n = n << 6 | static_cast<uint32_t>(at - digits);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>(n >> bits & 0xff));
    }
  }
  return out;
}

json typed(ScalarType type, std::span<const uint8_t> bytes) {
  return {{"array", web::typed_array(type)}, {"base64", web::base64(bytes)}};
}

const Buffer* buffer_of(const Program& p, const BufferRef& ref) {
  if (const auto* name = std::get_if<std::string>(&ref)) return p.find_buffer(*name);
  for (const Buffer& b : p.buffers)
    if (b.access != Access::Workgroup && b.binding == std::get<uint32_t>(ref)) return &b;
  return nullptr;
}

// A job: the folder's module, the inputs as the typed arrays of their
// buffers, and the launch.
json job(const std::string& name, const std::string& module, const Program& p, const Inputs& inputs,
         const std::optional<Dim3>& grid) {
  json j = {{"name", name}, {"module", "./" + module + "/kernel.js"}, {"inputs", json::object()},
            {"options", json::object()}};
  for (const Inputs::Entry& e : inputs.entries()) {
    const Buffer* b = buffer_of(p, e.buffer);
    if (e.has_contents())
      j["inputs"][b->name] = typed(b->type, e.contents());
    else
      j["options"]["sizes"][b->name] = *e.elements;
  }
  if (inputs.domain()) j["options"]["dim"] = *inputs.domain();
  if (grid) j["options"]["grid"] = *grid;
  return j;
}

Program f64_program() {
  return program_from_json_unchecked(R"({"vyre": 4, "name": "double_it", "workgroup_size": [64, 1, 1],
    "buffers": [{"name": "x", "binding": 0, "access": "read", "type": "f64"},
                {"name": "out", "binding": 1, "access": "read_write", "type": "f64", "output": true}],
    "body": [{"let": "i", "value": {"gid": "x"}},
             {"if": {"lt": [{"var": "i"}, {"len": "out"}]}, "then": [
               {"store": "out", "index": {"var": "i"},
                "value": {"add": [{"load": "x", "index": {"var": "i"}}, {"load": "x", "index": {"var": "i"}}]}}]}]})");
}

// An f16 program: exported (f16 is a web type), and run where the page's
// adapter has shader-f16; where it has not, createKernel must say so.
Program f16_program() {
  return program_from_json_unchecked(R"({"vyre": 4, "name": "twice_f16", "workgroup_size": [64, 1, 1],
    "buffers": [{"name": "x", "binding": 0, "access": "read", "type": "f16"},
                {"name": "out", "binding": 1, "access": "read_write", "type": "f16", "output": true}],
    "body": [{"let": "i", "value": {"gid": "x"}},
             {"if": {"lt": [{"var": "i"}, {"len": "out"}]}, "then": [
               {"store": "out", "index": {"var": "i"},
                "value": {"add": [{"mul": [{"load": "x", "index": {"var": "i"}}, {"f16": 2}]}, {"f16": 0.25}]}}]}]})");
}

Inputs f16_inputs() {
  Inputs in;
  std::vector<half> x;
  for (double v : {0.0, 1.5, -2.25, 1024.0, 0.0009765625, -0.125, 30000.0, 100.0}) x.push_back(to_half(v));
  in.set("x", x).size("out", x.size());
  return in;
}

struct Suite {
  std::map<std::string, json> results;  // by job name
  bool adapter_f16 = false;             // the page's adapter has shader-f16
  ProcessResult f16_export;
  ProcessResult examples, conformance, single_f64;
  json conformance_report;
  bool single_f64_wrote = false;
  std::string adapter;
  std::string skipped;
  TempDir site;
};

std::string case_folder(size_t i, const char* variant) { return "case" + std::to_string(i) + "_" + variant; }

void add_module_jobs(json& jobs) {
  const Program saxpy = example("saxpy");
  const std::vector<float> four{1, 2, -4, 0.5f}, five{1, 2, 3, 4, 5};
  auto saxpy_job = [&](const std::string& name, const std::vector<float>& x, json options) {
    Inputs in;
    in.set<float>("alpha", {2.5f}).set("x", x).set("y", x);
    json j = job(name, "examples/saxpy", saxpy, in, std::nullopt);
    j["options"] = std::move(options);
    return j;
  };
  // Pipeline mode: one kernel, dispatched again with sizes that fit, then larger.
  json first = saxpy_job("reuse/1", four, {{"sizes", {{"out", 4}}}});
  first["keep"] = true;
  jobs.push_back(first);
  json second = saxpy_job("reuse/2", four, {{"sizes", {{"out", 4}}}});
  second["keep"] = true;
  jobs.push_back(second);
  json larger = saxpy_job("reuse/3", five, {{"sizes", {{"out", 5}}}});
  larger["keep"] = true;
  jobs.push_back(larger);
  json domain = saxpy_job("shader/guard", five, {{"sizes", {{"out", 5}}}, {"dim", 3}});
  jobs.push_back(domain);

  // Refusals, each with what to do.
  json missing = saxpy_job("refuse/missing", four, {{"sizes", {{"out", 4}}}});
  missing["inputs"].erase("y");
  jobs.push_back(missing);
  json wrong_type = saxpy_job("refuse/type", four, {{"sizes", {{"out", 4}}}});
  wrong_type["inputs"]["x"]["array"] = "Int32Array";
  jobs.push_back(wrong_type);
  json plain = saxpy_job("refuse/plain_array", four, {{"sizes", {{"out", 4}}}});
  plain["inputs"]["x"] = {{"plain", {1, 2, 3, 4}}};
  jobs.push_back(plain);
  json fixed = saxpy_job("refuse/fixed_count", four, {{"sizes", {{"out", 4}}}});
  fixed["inputs"]["alpha"] = typed(ScalarType::F32, std::vector<uint8_t>(8, 0));
  jobs.push_back(fixed);
  jobs.push_back(saxpy_job("refuse/no_size", four, json::object()));
  jobs.push_back(saxpy_job("refuse/unknown_buffer", four, {{"sizes", {{"out", 4}, {"outt", 4}}}}));
  jobs.push_back(saxpy_job("refuse/dim_and_grid", four, {{"sizes", {{"out", 4}}}, {"dim", 4}, {"grid", {1, 1, 1}}}));
  jobs.push_back(saxpy_job("refuse/option", four, {{"sizes", {{"out", 4}}}, {"grids", 1}}));
  json no_device = saxpy_job("refuse/device", four, {{"sizes", {{"out", 4}}}});
  no_device["device"] = "none";
  jobs.push_back(no_device);
  json disposed = saxpy_job("refuse/disposed", four, {{"sizes", {{"out", 4}}}});
  disposed["dispose"] = true;
  jobs.push_back(disposed);
  // A program whose default grid is not proven safe: it needs a launch.
  const Program reduction = example("reduction");
  RunInputs run = read_run_file(reduction, source_path("examples/reduction.run.json").string());
  jobs.push_back(job("refuse/default_grid", "examples/reduction", reduction, run.inputs, std::nullopt));
}

Suite* build_and_run() {
  auto* s = new Suite;  // owned by suite()
  const std::string cache = (s->site / "cache").string();
  const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", cache}};
  s->examples = run_vyre({"export", "web", "--all", source_path("examples").string(), "-o",
                          (s->site / "examples").string(), "--json"}, env);

  // Every conformance program as a file; one f64 program among them, refused.
  const auto conf = s->site / "conformance_programs";
  std::filesystem::create_directories(conf);
  const auto& cases = all_cases();
  for (size_t i = 0; i < cases.size(); ++i) {
    write_file(conf / (case_folder(i, "loaded") + ".json"), program_to_json(loaded_program(*cases[i])));
    write_file(conf / (case_folder(i, "literal") + ".json"), program_to_json(literal_program(*cases[i])));
  }
  for (const auto& sc : construct_scenarios())
    write_file(conf / ("scenario_" + sc.name + ".json"), program_to_json(sc.program));
  write_file(conf / "double_it.json", program_to_json(f64_program()));
  s->conformance = run_vyre({"export", "web", "--all", conf.string(), "-o", (s->site / "conformance").string(),
                             "--json"}, env);
  if (!s->conformance.out.empty()) s->conformance_report = json::parse(s->conformance.out);
  s->single_f64 = run_vyre({"export", "web", (conf / "double_it.json").string(), "-o", (s->site / "f64").string()}, env);
  s->single_f64_wrote = std::filesystem::exists(s->site / "f64");
  write_file(s->site / "twice_f16.json", program_to_json(f16_program()));
  s->f16_export = run_vyre({"export", "web", (s->site / "twice_f16.json").string(), "-o", (s->site / "f16").string()},
                           env);

  json jobs = json::array();
  const Dim3 one{1, 1, 1};
  for (size_t i = 0; i < cases.size(); ++i) {
    jobs.push_back(job(case_folder(i, "loaded"), "conformance/" + case_folder(i, "loaded"), loaded_program(*cases[i]),
                       loaded_inputs(*cases[i]), std::nullopt));
    jobs.push_back(job(case_folder(i, "literal"), "conformance/" + case_folder(i, "literal"),
                       literal_program(*cases[i]), literal_inputs(*cases[i]), one));
  }
  for (const auto& sc : construct_scenarios())
    jobs.push_back(job("scenario_" + sc.name, "conformance/scenario_" + sc.name, sc.program, sc.inputs, sc.grid));
  for (const char* name : kExamples) {
    const Program p = example(name);
    RunInputs run = read_run_file(p, source_path(std::string("examples/") + name + ".run.json").string());
    jobs.push_back(job(std::string("example/") + name, std::string("examples/") + name, p, run.inputs, run.grid));
  }
  jobs.push_back(job("f16/twice", "f16", f16_program(), f16_inputs(), std::nullopt));
  add_module_jobs(jobs);
  write_file(s->site / "jobs.json", jobs.dump());
  write_file(s->site / "kernels.html", read_file(source_path("tests/web/kernels.html")));

  const auto results = s->site / "results.json";
  auto r = run_process({"python3", source_path("tests/web/run_web.py").string(), "results", s->site.path().string(),
                        "kernels.html", results.string()});
  if (r.exit_code == 77) {
    s->skipped = "Chromium is not installed (scripts/setup --all installs it)";
    return s;
  }
  if (r.exit_code != 0) throw std::runtime_error("the Chromium runner failed: " + r.err);
  const json report = json::parse(read_file(results));
  if (report.contains("error")) throw std::runtime_error("Chromium: " + report["error"].get<std::string>());
  s->adapter = report.value("adapter", "");
  s->adapter_f16 = report.value("f16", false);
  for (const auto& result : report["results"]) s->results[result["name"].get<std::string>()] = result;
  return s;
}

const Suite& suite() {
  static const std::unique_ptr<Suite> s(build_and_run());  // its folder goes at exit
  return *s;
}

const json* result_of(const std::string& name) {
  auto it = suite().results.find(name);
  if (it == suite().results.end()) {
    ADD_FAILURE() << name << ": no result from Chromium";
    return nullptr;
  }
  return &it->second;
}

// The bytes of one output, checked to come as its buffer's typed array.
std::optional<std::vector<uint8_t>> output_of(const std::string& job_name, const Program& p, const std::string& buffer) {
  const json* r = result_of(job_name);
  if (!r) return std::nullopt;
  if (r->contains("error")) {
    ADD_FAILURE() << job_name << ": " << (*r)["error"].get<std::string>();
    return std::nullopt;
  }
  if (!(*r)["outputs"].contains(buffer)) {
    ADD_FAILURE() << job_name << ": no output '" << buffer << "'";
    return std::nullopt;
  }
  const json& out = (*r)["outputs"][buffer];
  EXPECT_EQ(out["array"], web::typed_array(p.find_buffer(buffer)->type)) << job_name << ": " << buffer;
  return unbase64(out["base64"].get<std::string>());
}

// The message a job rejected with.
std::string error_of(const std::string& name) {
  const json* r = result_of(name);
  if (!r) return {};
  if (!r->contains("error")) {
    ADD_FAILURE() << name << " was not refused";
    return {};
  }
  EXPECT_EQ((*r)["error_class"], "Error") << name;
  return (*r)["error"].get<std::string>();
}

uint32_t word(const std::vector<uint8_t>& bytes, size_t k) {
  uint32_t w = 0;
  std::memcpy(&w, bytes.data() + 4 * k, 4);
  return w;
}

#define SKIP_WITHOUT_CHROMIUM()                                                                      \
  do {                                                                                               \
    if (!suite().skipped.empty()) {                                                                  \
      if (std::getenv("CI")) FAIL() << "CI must run the web export tests: " << suite().skipped;     \
      GTEST_SKIP() << suite().skipped;                                                               \
    }                                                                                                \
  } while (0)

}  // namespace

TEST(WebExport, TheCommandExportsEveryExampleAndConformanceProgram) {
  const Suite& s = suite();
  EXPECT_EQ(s.examples.exit_code, 0) << s.examples.err;
  const json examples = json::parse(s.examples.out);
  EXPECT_EQ(examples["kernels"].size(), std::size(kExamples));
  EXPECT_EQ(examples["target"], "web/webgpu-1");
  for (const char* name : kExamples) {
    for (const char* file : {"kernel.js", "kernel.d.ts", "package.json", "index.html"})
      EXPECT_TRUE(std::filesystem::exists(s.site / "examples" / name / file)) << name << "/" << file;
  }
  EXPECT_TRUE(std::filesystem::exists(s.site / "examples" / "index.html"));
  // The f64 program among the conformance programs is refused, the others exported: exit 1.
  EXPECT_EQ(s.conformance.exit_code, 1) << s.conformance.err;
  EXPECT_EQ(s.conformance_report["kernels"].size(), 2 * all_cases().size() + construct_scenarios().size());
  ASSERT_EQ(s.conformance_report["refused"].size(), 1u);
  EXPECT_EQ(s.conformance_report["refused"][0]["program"], "double_it");
}

TEST(WebExport, AnF64ProgramIsRefusedSayingWhatToDo) {
  const Suite& s = suite();
  EXPECT_EQ(s.single_f64.exit_code, 3);
  EXPECT_TRUE(contains(s.single_f64.err, "program 'double_it' computes in f64")) << s.single_f64.err;
  EXPECT_TRUE(contains(s.single_f64.err, "no shader-f64 feature")) << s.single_f64.err;
  EXPECT_TRUE(contains(s.single_f64.err, "Convert the f64 data to f32")) << s.single_f64.err;
  EXPECT_FALSE(s.single_f64_wrote) << "a refused program's folder was written";
  EXPECT_TRUE(contains(s.conformance.err, "double_it.json: not exported: program 'double_it' computes in f64"))
      << s.conformance.err;
  const std::string index = read_file(suite().site / "conformance" / "index.html");
  EXPECT_TRUE(contains(index, "<li data-program=\"double_it\"><b>double_it</b>: program 'double_it' computes in f64"))
      << index.substr(0, 2000);
}

TEST(WebExport, RunsOnSwiftShader) {
  SKIP_WITHOUT_CHROMIUM();
  EXPECT_NE(suite().adapter.find("swiftshader"), std::string::npos) << suite().adapter;
}

TEST(WebExport, EveryConformanceCaseAgreesWithTheReference) {
  SKIP_WITHOUT_CHROMIUM();
  const auto& cases = all_cases();
  size_t compared = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = *cases[i];
    for (const char* variant : {"loaded", "literal"}) {
      const Program p = std::string(variant) == "loaded" ? loaded_program(c) : literal_program(c);
      const auto got = output_of(case_folder(i, variant), p, "out");
      if (!got) continue;
      ASSERT_EQ(got->size(), c.tuples.size() * 4) << c.name << " " << variant;
      int reported = 0;
      for (size_t k = 0; k < c.tuples.size() && reported < 4; ++k) {
        const uint32_t ref = evaluate(c, c.tuples[k]);
        ++compared;
        if (!c.accept(c.tuples[k], ref, word(*got, k))) {
          ADD_FAILURE() << describe(c, c.tuples[k]) << " " << variant << ": reference 0x" << std::hex << ref
                        << ", Chromium through kernel.js 0x" << word(*got, k);
          ++reported;
        }
      }
    }
  }
  std::printf("%zu values of %zu operator cases compared\n", compared, cases.size());
}

TEST(WebExport, AnF16ProgramRunsWhereTheAdapterHasShaderF16AndIsRefusedClearlyElsewhere) {
  const Suite& s = suite();
  ASSERT_EQ(s.f16_export.exit_code, 0) << s.f16_export.err;
  SKIP_WITHOUT_CHROMIUM();
  const Program p = f16_program();
  if (s.adapter_f16) {
    const Outputs ref = reference::run(p, f16_inputs(), {}, std::nullopt);
    const auto got = output_of("f16/twice", p, "out");
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(*got, ref.all().at("out")) << "f16 in Chromium against the reference (" << s.adapter << ")";
    std::cout << "f16 ran on " << s.adapter << " (shader-f16) and agrees with the reference\n";
  } else {
    std::cout << "f16 refused on " << s.adapter << " (no shader-f16), as it must be\n";
    EXPECT_TRUE(contains(error_of("f16/twice"), "shader-f16")) << "no shader-f16 on " << s.adapter;
  }
}

TEST(WebExport, ConstructScenariosAgreeWithTheReference) {
  SKIP_WITHOUT_CHROMIUM();
  for (const auto& sc : construct_scenarios()) {
    const Outputs ref = reference::run(sc.program, sc.inputs, sc.options, sc.grid);
    for (const auto& [name, bytes] : ref.all()) {
      const auto got = output_of("scenario_" + sc.name, sc.program, name);
      if (got) {
        EXPECT_EQ(*got, bytes) << sc.name << ": " << name;
      }
    }
  }
}

TEST(WebExport, EveryExampleAgreesWithTheReferenceAndItsRunFile) {
  SKIP_WITHOUT_CHROMIUM();
  for (const char* name : kExamples) {
    const Program p = example(name);
    const RunInputs run = read_run_file(p, source_path(std::string("examples/") + name + ".run.json").string());
    const Outputs ref = reference::run(p, run.inputs, {}, run.grid);
    for (const auto& [buffer, want] : ref.all()) {
      const auto got = output_of(std::string("example/") + name, p, buffer);
      if (!got) continue;
      const ScalarType type = p.find_buffer(buffer)->type;
      const Tolerance tol = run.tolerance.count(buffer) ? run.tolerance.at(buffer) : Tolerance{};
      EXPECT_TRUE(values_equal(type, *got, want, tol.abs, tol.rel))
          << name << ": " << buffer << " = " << format_values(type, *got) << "; reference " << format_values(type, want);
      if (run.expect.count(buffer)) {
        EXPECT_TRUE(values_equal(type, *got, run.expect.at(buffer), tol.abs, tol.rel)) << name << ": " << buffer;
      }
    }
  }
}

TEST(WebExport, ADispatchWhoseSizesFitReusesThePipelineBuffersAndBindGroups) {
  SKIP_WITHOUT_CHROMIUM();
  const json* first = result_of("reuse/1");
  const json* second = result_of("reuse/2");
  const json* third = result_of("reuse/3");
  ASSERT_TRUE(first && second && third);
  ASSERT_FALSE(first->contains("error")) << (*first)["error"];
  ASSERT_FALSE(second->contains("error")) << (*second)["error"];
  ASSERT_FALSE(third->contains("error")) << (*third)["error"];
  const json& a = (*first)["stats"];
  const json& b = (*second)["stats"];
  const json& c = (*third)["stats"];
  EXPECT_EQ(a["dispatches"], 1);
  EXPECT_EQ(b["dispatches"], 2);
  EXPECT_EQ(b["pipelines"], a["pipelines"]);
  EXPECT_EQ(b["buffers"], a["buffers"]) << "the second dispatch of the same sizes made buffers";
  EXPECT_EQ(b["bindGroups"], a["bindGroups"]) << "the second dispatch of the same sizes made bind groups";
  // Four elements run the widened shader; five cannot (not a multiple of 4), and need larger buffers.
  EXPECT_EQ(a["shader"], "wide");
  EXPECT_EQ(c["shader"], "base");
  EXPECT_GT(c["buffers"].get<int>(), b["buffers"].get<int>());
  EXPECT_EQ(result_of("shader/guard")->at("stats")["shader"], "guard");
  // Each dispatch's values are the reference's.
  const Program saxpy = example("saxpy");
  const std::vector<std::tuple<std::string, uint32_t, uint32_t>> runs{
      {"reuse/2", 4, 0}, {"reuse/3", 5, 0}, {"shader/guard", 5, 3}};
  for (const auto& [name, n, dim] : runs) {
    const std::vector<float> x = n == 4 ? std::vector<float>{1, 2, -4, 0.5f} : std::vector<float>{1, 2, 3, 4, 5};
    Inputs in;
    in.set<float>("alpha", {2.5f}).set("x", x).set("y", x).size("out", n);
    if (dim) in.dim(dim);
    const auto got = output_of(name, saxpy, "out");
    if (got) {
      EXPECT_EQ(*got, reference::run(saxpy, in).bytes("out")) << name;
    }
  }
}

TEST(WebExport, TheModuleRefusesWhatDoesNotFitSayingWhatToDo) {
  SKIP_WITHOUT_CHROMIUM();
  const std::pair<const char*, const char*> cases[] = {
      {"refuse/missing", "missing input for 'y' (binding 2, read f32): give its contents as a Float32Array (inputs.y)"},
      {"refuse/type", "input for 'x' (binding 1, read f32) is a Int32Array; the buffer holds f32: give a Float32Array "
                      "(or its bits as a Uint32Array)"},
      {"refuse/plain_array", "input for 'x' (binding 1, read f32) is an Array; the buffer holds f32: give a "
                             "Float32Array (or its bits as a Uint32Array), for example Float32Array.from(values)"},
      {"refuse/fixed_count", "input for 'alpha' (binding 0, read f32[1]) has 2 elements; the program fixes 1"},
      {"refuse/no_size", "runtime-sized output 'out' needs a length: give its contents or a size (options.sizes = "
                         "{out: n})"},
      {"refuse/unknown_buffer", "no buffer named 'outt' (given in options.sizes); its buffers: 'alpha'"},
      {"refuse/dim_and_grid", "is given both a launch domain and a grid: give options.dim or options.grid, not both"},
      {"refuse/option", "unknown dispatch option 'grids': the options are sizes ({name: elements}), dim and grid"},
      {"refuse/device", "createKernel(device) takes a GPUDevice"},
      {"refuse/disposed", "dispose() was called: create the kernel again (createKernel(device))"},
      {"refuse/default_grid", "is given neither a launch domain nor a grid"},
  };
  for (const auto& [name, message] : cases) {
    const std::string error = error_of(name);
    EXPECT_TRUE(contains(error, message)) << name << ": " << error;
    EXPECT_TRUE(error.rfind("vyre kernel '", 0) == 0) << name << ": " << error;
  }
  EXPECT_TRUE(contains(error_of("refuse/default_grid"), "give options.dim (the invocations to run"));
}

TEST(WebExport, TheCacheWarmsAndExplainsTheWebTargetAndSharesItsEntriesWithNative) {
  TempDir dir;
  const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", (dir / "cache").string()}};
  const std::string saxpy = source_path("examples/saxpy.json").string();
  const auto warm = run_vyre({"cache", "warm", "--target", "web", saxpy}, env);
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  EXPECT_TRUE(contains(warm.out, "1 programs (3 web shaders): 3 lowered")) << warm.out;
  // The export takes all three from the cache, under the keys warm printed.
  const auto exported = run_vyre({"export", "web", saxpy, "-o", (dir / "saxpy").string(), "--json"}, env);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const json kernel = json::parse(exported.out)["kernels"][0];
  EXPECT_EQ(kernel["cache_hits"], 3);
  for (const auto& shader : kernel["shaders"])
    EXPECT_TRUE(contains(warm.out, shader["key"].get<std::string>().substr(0, 16) + "  " + saxpy + " (" +
                                       shader["role"].get<std::string>() + ")"))
        << shader << "\n" << warm.out;
  const auto explain = run_vyre({"cache", "explain", "--target", "web", "--json", saxpy}, env);
  ASSERT_EQ(explain.exit_code, 0) << explain.err;
  const json x = json::parse(explain.out);
  EXPECT_EQ(x["key"], kernel["shaders"][0]["key"]) << x;
  EXPECT_EQ(x["hit"], true) << explain.out;
  // A native build keys saxpy's widened shader the same way: one entry for both.
  const auto native = run_vyre({"cache", "explain", "--json", saxpy}, env);
  if (native.exit_code == 4) GTEST_SKIP() << "no adapter for the native key: " << native.err;
  ASSERT_EQ(native.exit_code, 0) << native.err;
  EXPECT_EQ(json::parse(native.out)["key"], kernel["shaders"][0]["key"]);
  // An f64 program has no web key.
  write_file(dir / "double_it.json", program_to_json(f64_program()));
  const auto refused = run_vyre({"cache", "explain", "--target", "web", (dir / "double_it.json").string()}, env);
  EXPECT_EQ(refused.exit_code, 3);
  EXPECT_TRUE(contains(refused.err, "computes in f64")) << refused.err;
}
