#include "differential/dawn_batch.hpp"

#include <cstring>
#include <stdexcept>

#include "support/test_support.hpp"
#include "support/webgpu_job.hpp"

namespace vyre::differential {

DawnBatch run_on_dawn(const std::vector<const GeneratedCase*>& cases) {
  DawnBatch batch;
  std::vector<test::WebGpuJob> jobs;
  for (size_t i = 0; i < cases.size(); ++i)
    jobs.push_back(test::make_webgpu_job("case" + std::to_string(i), cases[i]->program, cases[i]->inputs(),
                                         cases[i]->options, cases[i]->grid));
  test::TempDir dir;
  test::write_file(dir / "jobs.json", test::to_json(jobs).dump());
  const auto r = test::run_process({"python3", VYRE_DAWN_RUNNER, (dir / "jobs.json").string(),
                                    (dir / "results.json").string(), "--timeout", "900"});
  if (r.exit_code == 77) {
    batch.skipped = "Chromium is not installed (scripts/setup installs it)";
    return batch;
  }
  if (r.exit_code != 0) throw std::runtime_error("the Chromium runner failed: " + r.err);
  const auto report = nlohmann::json::parse(test::read_file(dir / "results.json"));
  if (report.contains("error")) throw std::runtime_error("Dawn: " + report["error"].get<std::string>());
  batch.adapter = report.value("adapter", "");
  batch.results.resize(cases.size());
  for (const auto& result : report["results"]) {
    const std::string name = result["name"].get<std::string>();
    const size_t i = std::stoul(name.substr(4));
    if (i >= cases.size()) continue;
    if (result.contains("error")) {
      batch.results[i].error = result["error"].get<std::string>();
      continue;
    }
    std::map<std::string, std::vector<uint8_t>> out;
    for (const auto& [buffer, words] : result["outputs"].items()) {
      const auto values = words.get<std::vector<uint32_t>>();
      std::vector<uint8_t> bytes(values.size() * kElementBytes);
      if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
      // Packed narrow elements: the words' padding after the last element is not output.
      for (const auto& b : jobs[i].bindings)
        if (b.output == buffer && b.output_bytes < bytes.size()) bytes.resize(b.output_bytes);
      out[buffer] = std::move(bytes);
    }
    batch.results[i].outputs = Outputs(std::move(out));
  }
  for (size_t i = 0; i < cases.size(); ++i)
    if (!batch.results[i].outputs && batch.results[i].error.empty()) batch.results[i].error = "no result from Dawn";
  return batch;
}

}  // namespace vyre::differential
