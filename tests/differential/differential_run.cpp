#include "differential/differential_run.hpp"

#include "vyre/error.hpp"
#include "vyre/reference.hpp"
#include "vyre/validate.hpp"

namespace vyre::differential {
namespace {

constexpr size_t kDifferencesShown = 8;

std::string diagnostics_text(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const auto& d : diagnostics) out += (out.empty() ? "" : "; ") + d.path + ": " + d.message;
  return out;
}

}  // namespace

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::agree: return "agree";
    case Outcome::mismatch: return "mismatch";
    case Outcome::gpu_error: return "gpu error";
    case Outcome::reference_error: return "reference error";
    case Outcome::invalid_program: return "invalid program";
    case Outcome::dawn_mismatch: return "Dawn mismatch";
    case Outcome::dawn_error: return "Dawn error";
  }
  return "?";
}

RunResult run_reference(const GeneratedCase& c) {
  RunResult r;
  if (auto diagnostics = validate(c.program); !diagnostics.empty()) {
    r.outcome = Outcome::invalid_program;
    r.detail = diagnostics_text(diagnostics);
    return r;
  }
  try {
    r.reference = reference::run(c.program, c.inputs(), c.options, c.grid);
  } catch (const std::exception& e) {
    r.outcome = Outcome::reference_error;
    r.detail = e.what();
  }
  return r;
}

namespace {

void describe_differences(RunResult& r) {
  for (size_t i = 0; i < r.differences.size() && i < kDifferencesShown; ++i)
    r.detail += (i ? "\n" : "") + r.differences[i].text;
  if (r.differences.size() > kDifferencesShown)
    r.detail += "\n... " + std::to_string(r.differences.size() - kDifferencesShown) + " more";
}

}  // namespace

RunResult judge_dawn(const GeneratedCase& c, const Outputs& reference, const DawnResult& dawn) {
  RunResult r;
  r.reference = reference;
  if (!dawn.outputs) {
    r.outcome = Outcome::dawn_error;
    r.detail = dawn.error;
    return r;
  }
  r.gpu = dawn.outputs;
  r.differences = compare_outputs(c.program, c.compare, reference, *dawn.outputs);
  if (!r.differences.empty()) {
    r.outcome = Outcome::dawn_mismatch;
    describe_differences(r);
  }
  return r;
}

RunResult run_reference_and_dawn(const GeneratedCase& c) {
  RunResult r = run_reference(c);
  if (r.outcome != Outcome::agree) return r;
  DawnBatch batch = run_on_dawn({&c});
  if (!batch.skipped.empty()) {
    r.outcome = Outcome::dawn_error;
    r.detail = batch.skipped;
    return r;
  }
  return judge_dawn(c, *r.reference, batch.results.at(0));
}

RunResult run_differential(gpu::Backend& backend, const GeneratedCase& c, bool tuned) {
  RunResult r = run_reference(c);
  if (r.outcome != Outcome::agree) return r;
  try {
    if (tuned) {
      gpu::TuneOptions once;
      once.warmup = 0;
      once.repetitions = 1;
      gpu::Tuned t = backend.tune(c.program, c.inputs(), c.grid, c.options, once);
      r.retuned = t.applied && !t.record.chose_own();
      r.wgsl = t.pipeline.wgsl();
      r.gpu = t.pipeline.dispatch(c.inputs(), t.grid);
    } else {
      gpu::Pipeline pipeline = backend.compile(c.program, c.options);
      r.wgsl = pipeline.wgsl();
      r.gpu = pipeline.dispatch(c.inputs(), c.grid);
    }
  } catch (const Error& e) {
    r.detail = std::string(vyre::to_string(e.kind())) + ": " + e.what();
    if (e.kind() == ErrorKind::limit_exceeded &&
        std::string_view(e.what()).find("ended a loop before its condition or a break did") != std::string_view::npos) {
      r.refused_by_loop_guard = true;  // loud, not wrong: what the guard promises
      return r;
    }
    r.outcome = Outcome::gpu_error;
    r.device_lost = e.kind() == ErrorKind::device_lost;
    return r;
  }
  r.differences = compare_outputs(c.program, c.compare, *r.reference, *r.gpu);
  if (!r.differences.empty()) {
    r.outcome = Outcome::mismatch;
    describe_differences(r);
  }
  return r;
}

}  // namespace vyre::differential
