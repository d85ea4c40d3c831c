// vyre's WGSL on a second, independent WebGPU: Dawn in headless Chromium
// (SwiftShader), whose WGSL compiler Tint applies WGSL's full uniformity
// analysis and its own validation. Every conformance case, construct
// scenario, constant hazard, example and pass program of the standard
// kernels runs there, and its results are checked against the reference
// interpreter with the same rules as on wgpu-native. Chromium runs once for
// all of them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>

#include "lower/approximate_forms.hpp"
#include "samples/approximate_forms.hpp"
#include "support/conformance_cases.hpp"
#include "support/lib_pass_cases.hpp"
#include "support/programs.hpp"
#include "support/test_support.hpp"
#include "support/webgpu_job.hpp"
#include "vyre/json.hpp"
#include "vyre/reference.hpp"
#include "vyre/run_file.hpp"
#include "vyre/values.hpp"

using namespace vyre;
using namespace vyre::test;
using namespace vyre::test::conformance;

namespace {

const char* kExamples[] = {"xor",       "saxpy",        "collatz", "histogram",   "reduction",
                           "prefix_sum", "matmul_tiled", "softmax", "bitonic_sort", "byte_count", "find_pattern"};

struct Suite {
  std::vector<WebGpuJob> jobs;
  std::map<std::string, nlohmann::json> results;  // by job name
  std::string adapter;
  std::string skipped;  // why Dawn did not run, when it did not
};

Suite build_and_run() {
  Suite s;
  const Dim3 one{1, 1, 1};
  for (const auto& c : all_cases()) {
    s.jobs.push_back(make_webgpu_job(c->name + "/loaded", loaded_program(*c), loaded_inputs(*c)));
    s.jobs.push_back(make_webgpu_job(c->name + "/literal", literal_program(*c), literal_inputs(*c), {}, one));
  }
  for (const auto& sc : construct_scenarios())
    s.jobs.push_back(make_webgpu_job("scenario/" + sc.name, sc.program, sc.inputs, sc.options, sc.grid));
  for (const auto& p : constant_hazard_programs()) {
    Inputs in;
    if (p.find_buffer("out")->runtime_sized()) in.size("out", 1);
    s.jobs.push_back(make_webgpu_job("hazard/" + p.name, p, in, {}, one));
  }
  {
    Inputs in;
    in.set<uint32_t>("in", std::vector<uint32_t>(40, 3)).size("out", 40).size("fout", 40).set<uint32_t>("params", {1, 2, 3, 4, 5});
    const Program p = every_construct_program();
    // One invocation per element of `out` along x: the program is not element-wise, so it names its grid.
    const Dim3 grid{(40 + p.workgroup_size[0] - 1) / p.workgroup_size[0], 1, 1};
    s.jobs.push_back(make_webgpu_job("every_construct", p, in, {}, grid));
  }
  // Each ULP-budgeted form over a sample of its domain, at its bound.
  for (const lowering::ApproximateForm& form : lowering::approximate_forms()) {
    const std::vector<float> sample = samples::form_sample(form, 1u << 16);
    Inputs in;
    in.set("x", sample).size("out", sample.size());
    ShaderOptions options;
    options.ulp_budget = form.max_ulp;
    s.jobs.push_back(make_webgpu_job("form/" + std::string(op_info(form.op).json), samples::operator_program(form.op),
                                     in, options));
    const std::vector<float> gap = samples::gap_sample(form, 1u << 14);
    if (gap.empty()) continue;
    Inputs gap_in;
    gap_in.set("x", gap).size("out", gap.size());
    s.jobs.push_back(make_webgpu_job("form_gap/" + std::string(op_info(form.op).json),
                                     samples::operator_program(form.op), gap_in, options));
  }
  for (const char* name : kExamples) {
    const Program p = example(name);
    vyre::RunInputs run = vyre::read_run_file(p, source_path(std::string("examples/") + name + ".run.json"));
    s.jobs.push_back(make_webgpu_job(std::string("example/") + name, p, run.inputs, {}, run.grid));
  }

  // vyre::lib's pass programs (tests/support/lib_pass_cases.cpp).
  for (const LibPassCase& c : lib_pass_cases())
    s.jobs.push_back(make_webgpu_job("lib/" + c.name, c.program, c.inputs, {}, c.grid));

  TempDir dir;
  write_file(dir / "jobs.json", to_json(s.jobs).dump());
  auto r = run_process({"python3", VYRE_DAWN_RUNNER, (dir / "jobs.json").string(), (dir / "results.json").string()});
  if (r.exit_code == 77) {
    s.skipped = "Chromium is not installed (scripts/setup installs it)";
    return s;
  }
  if (r.exit_code != 0) throw std::runtime_error("the Chromium runner failed: " + r.err);
  const auto report = nlohmann::json::parse(read_file(dir / "results.json"));
  if (report.contains("error")) throw std::runtime_error("Dawn: " + report["error"].get<std::string>());
  s.adapter = report.value("adapter", "");
  for (const auto& result : report["results"]) s.results[result["name"].get<std::string>()] = result;
  return s;
}

const Suite& suite() {
  static const Suite s = build_and_run();
  return s;
}

// The outputs of a job, or a failure naming its error.
const nlohmann::json* outputs_of(const std::string& job) {
  auto it = suite().results.find(job);
  if (it == suite().results.end()) {
    ADD_FAILURE() << job << ": no result from Dawn";
    return nullptr;
  }
  if (it->second.contains("error")) {
    ADD_FAILURE() << job << ": " << it->second["error"].get<std::string>();
    return nullptr;
  }
  return &it->second["outputs"];
}

std::vector<uint32_t> words(const nlohmann::json& outputs, const std::string& name) {
  return outputs.at(name).get<std::vector<uint32_t>>();
}

std::vector<uint32_t> words(const std::vector<uint8_t>& bytes) {
  std::vector<uint32_t> w((bytes.size() + 3) / 4);  // narrow elements: the last word zero-padded
  if (!w.empty()) std::memcpy(w.data(), bytes.data(), bytes.size());
  return w;
}

#define SKIP_WITHOUT_DAWN()                                                                           \
  do {                                                                                                \
    if (!suite().skipped.empty()) {                                                                   \
      if (std::getenv("CI")) FAIL() << "CI must run the Dawn tests: " << suite().skipped;             \
      GTEST_SKIP() << suite().skipped;                                                                \
    }                                                                                                 \
  } while (0)

}  // namespace

TEST(Dawn, RunsOnSwiftShader) {
  SKIP_WITHOUT_DAWN();
  EXPECT_NE(suite().adapter.find("swiftshader"), std::string::npos) << suite().adapter;
  EXPECT_EQ(suite().results.size(), suite().jobs.size());
}

TEST(Dawn, EveryOperatorCaseAgreesWithTheReference) {
  SKIP_WITHOUT_DAWN();
  for (const auto& c : all_cases()) {
    for (const char* variant : {"/loaded", "/literal"}) {
      const auto* out = outputs_of(c->name + variant);
      if (!out) continue;
      const auto got = words(*out, "out");
      ASSERT_EQ(got.size(), c->tuples.size()) << c->name << variant;
      int reported = 0;
      for (size_t k = 0; k < c->tuples.size() && reported < 4; ++k) {
        const uint32_t ref = evaluate(*c, c->tuples[k]);
        if (!c->accept(c->tuples[k], ref, got[k])) {
          ADD_FAILURE() << describe(*c, c->tuples[k]) << variant << ": reference 0x" << std::hex << ref << ", Dawn 0x"
                        << got[k];
          ++reported;
        }
      }
    }
  }
}

TEST(Dawn, EachApproximateFormStaysWithinItsBound) {
  SKIP_WITHOUT_DAWN();
  for (const lowering::ApproximateForm& form : lowering::approximate_forms()) {
    const std::string name(op_info(form.op).json);
    const auto* out = outputs_of("form/" + name);
    if (!out) continue;
    const std::vector<float> sample = samples::form_sample(form, 1u << 16);
    const std::vector<uint32_t> bits = words(*out, "out");
    std::vector<float> got(bits.size());
    std::memcpy(got.data(), bits.data(), bits.size() * 4);
    ASSERT_EQ(got.size(), sample.size()) << name;
    const double worst = samples::max_ulp_error(form.op, sample, got);
    EXPECT_LE(worst, form.max_ulp) << name << " on Dawn";
    std::printf("%s on Dawn: largest error %.3f ULP over %zu samples (bound %u)\n", name.c_str(), worst, got.size(),
                static_cast<unsigned>(form.max_ulp));
    const std::vector<float> gap = samples::gap_sample(form, 1u << 14);
    if (gap.empty()) continue;
    const auto* gap_out = outputs_of("form_gap/" + name);
    if (!gap_out) continue;
    const std::vector<uint32_t> gap_bits = words(*gap_out, "out");
    std::vector<float> in_gap(gap_bits.size());
    std::memcpy(in_gap.data(), gap_bits.data(), gap_bits.size() * 4);
    const double gap_worst = samples::max_abs_error(form.op, gap, in_gap);
    EXPECT_LE(gap_worst, form.gap_max_abs) << name << " on Dawn, between the domain's intervals";
    std::printf("%s on Dawn: largest absolute error between the intervals %.3g\n", name.c_str(), gap_worst);
  }
}

TEST(Dawn, ConstructScenariosAgreeWithTheReference) {
  SKIP_WITHOUT_DAWN();
  for (const auto& sc : construct_scenarios()) {
    const auto* out = outputs_of("scenario/" + sc.name);
    if (!out) continue;
    const Outputs ref = reference::run(sc.program, sc.inputs, sc.options, sc.grid);
    for (const auto& [name, bytes] : ref.all()) EXPECT_EQ(words(*out, name), words(bytes)) << sc.name << ": " << name;
  }
}

TEST(Dawn, ConstantHazardsCompileAndIntegerResultsAgree) {
  SKIP_WITHOUT_DAWN();
  const Dim3 one{1, 1, 1};
  for (const auto& p : constant_hazard_programs()) {
    const auto* out = outputs_of("hazard/" + p.name);
    if (!out) continue;
    // f32 results and out-of-range stores are unspecified (docs/conformance.md).
    if (p.find_buffer("out")->type == ScalarType::F32 || p.name.rfind("const_index_", 0) == 0) continue;
    Inputs in;
    if (p.find_buffer("out")->runtime_sized()) in.size("out", 1);
    EXPECT_EQ(words(*out, "out"), words(reference::run(p, in, {}, one).bytes("out"))) << p.name;
  }
}

TEST(Dawn, AProgramWithEveryConstructCompilesAndRuns) {
  SKIP_WITHOUT_DAWN();
  const auto* out = outputs_of("every_construct");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(words(*out, "out").size(), 40u);
}

TEST(Dawn, EveryStandardKernelPassAgreesWithTheReference) {
  SKIP_WITHOUT_DAWN();
  for (const LibPassCase& c : lib_pass_cases()) {
    const auto* out = outputs_of("lib/" + c.name);
    if (!out) continue;
    const Outputs ref = reference::run(c.program, c.inputs, {}, c.grid);
    for (const auto& [name, want] : ref.all()) {
      const std::vector<uint32_t> got_words = words(*out, name);
      std::vector<uint8_t> got(got_words.size() * 4);
      if (!got.empty()) std::memcpy(got.data(), got_words.data(), got.size());
      std::string why;
      EXPECT_TRUE(lib_pass_output_agrees(c, name, got, want, why)) << c.name << " on Dawn: " << why;
    }
  }
}

TEST(Dawn, EveryExampleGivesItsExpectedOutputs) {
  SKIP_WITHOUT_DAWN();
  for (const char* name : kExamples) {
    const auto* out = outputs_of(std::string("example/") + name);
    if (!out) continue;
    const Program p = example(name);
    const vyre::RunInputs run = vyre::read_run_file(p, source_path(std::string("examples/") + name + ".run.json"));
    for (const auto& [buffer, want] : run.expect) {
      const auto got = words(*out, buffer);
      std::vector<uint8_t> bytes(got.size() * 4);
      if (!bytes.empty()) std::memcpy(bytes.data(), got.data(), bytes.size());
      const vyre::Tolerance tol = run.tolerance.count(buffer) ? run.tolerance.at(buffer) : vyre::Tolerance{};
      EXPECT_TRUE(vyre::values_equal(p.find_buffer(buffer)->type, bytes, want, tol.abs, tol.rel))
          << name << ": " << buffer << " = " << vyre::format_values(p.find_buffer(buffer)->type, bytes);
    }
  }
}
