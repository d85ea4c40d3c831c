// The figures of the ULP-budgeted forms (docs/lowering.md, "ULP-budgeted
// forms"; docs/benchmarks.md): for each form, its largest error in ULP over
// a dense sample of its domain, on the reference (its C++ mirror) and on
// this device, beside the builtin's on the same sample; and the kernel time
// of a compute-bound kernel (samples::operator_throughput_program) with the
// builtin over with the form, measured side by side, alternating. Prints
// JSON lines {"name", "value", "unit"}.
//
//   approximate_forms_figures [--quick]   --quick: smaller sizes for a CPU device
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "samples/approximate_forms.hpp"
#include "support/json_lines.hpp"
#include "support/kernels.hpp"
#include "vyre/gpu.hpp"
#include "vyre/lower.hpp"

namespace {

using vyre::bench::emit;
using vyre::bench::median;
using vyre::lowering::ApproximateForm;

[[noreturn]] void fail(const std::string& why) {
  (void)std::fprintf(stderr, "approximate_forms_figures: %s\n", why.c_str());
  std::exit(1);
}

vyre::ShaderOptions with_budget(uint8_t ulp) {
  vyre::ShaderOptions o;
  o.ulp_budget = ulp;
  return o;
}

vyre::Inputs sample_inputs(const std::vector<float>& x) {
  vyre::Inputs in;
  in.set("x", x).size("out", x.size());
  return in;
}

void accuracy(vyre::gpu::Backend& backend, const ApproximateForm& form, const std::string& name) {
  const std::vector<float> s = vyre::samples::form_sample(form, 1u << 20);
  std::vector<float> mirrored(s.size());
  for (size_t i = 0; i < s.size(); ++i) mirrored[i] = form.mirror(s[i]);
  const vyre::CheckedProgram p = vyre::samples::operator_program(form.op);
  const vyre::Inputs in = sample_inputs(s);
  const auto builtin = backend.compile(p).dispatch(in).get<float>("out");
  const auto fast = backend.compile(p, with_budget(255)).dispatch(in).get<float>("out");
  emit(name + ".samples", static_cast<double>(s.size()), "");
  emit(name + ".bound_ulp", form.max_ulp, "ULP");
  emit(name + ".reference_form_ulp", vyre::samples::max_ulp_error(form.op, s, mirrored), "ULP");
  emit(name + ".device_form_ulp", vyre::samples::max_ulp_error(form.op, s, fast), "ULP");
  emit(name + ".device_builtin_ulp", vyre::samples::max_ulp_error(form.op, s, builtin), "ULP");
  const std::vector<float> gap = vyre::samples::gap_sample(form, 1u << 18);
  if (gap.empty()) return;
  std::vector<float> gap_mirrored(gap.size());
  for (size_t i = 0; i < gap.size(); ++i) gap_mirrored[i] = form.mirror(gap[i]);
  const vyre::Inputs gap_in = sample_inputs(gap);
  emit(name + ".gap_bound_abs", form.gap_max_abs, "");
  emit(name + ".gap_reference_form_abs", vyre::samples::max_abs_error(form.op, gap, gap_mirrored), "");
  emit(name + ".gap_device_form_abs",
       vyre::samples::max_abs_error(form.op, gap, backend.compile(p, with_budget(255)).dispatch(gap_in).get<float>("out")), "");
  emit(name + ".gap_device_builtin_abs",
       vyre::samples::max_abs_error(form.op, gap, backend.compile(p).dispatch(gap_in).get<float>("out")), "");
}

void speed(vyre::gpu::Backend& backend, const ApproximateForm& form, const std::string& name, bool quick) {
  const std::vector<float> s = vyre::samples::form_sample(form, quick ? 1u << 18 : 1u << 22);
  vyre::bench::Kernel k{name, vyre::samples::operator_throughput_program(form.op), {}, std::nullopt, "out", {}};
  const size_t n = s.size();
  k.inputs.device("x", backend.upload(s)).size("out", n);
  const uint64_t groups = (n + 255) / 256;
  const uint32_t gx = static_cast<uint32_t>(std::min<uint64_t>(groups, 32768));
  k.grid = vyre::Dim3{gx, static_cast<uint32_t>((groups + gx - 1) / gx), 1};
  vyre::gpu::Pipeline builtin = backend.compile(k.program);
  vyre::gpu::Pipeline fast = backend.compile(k.program, with_budget(255));
  const double one = vyre::bench::batch_seconds(backend, builtin, k, k.grid, 2);
  const int per = std::clamp(static_cast<int>(std::ceil(2e-3 / std::max(one, 1e-7))), 2, quick ? 5 : 200);
  const int rounds = quick ? 7 : 15;
  std::vector<double> b, f;
  for (int round = 0; round < rounds; ++round) {
    const bool builtin_first = round % 2 == 0;
    (builtin_first ? b : f).push_back(vyre::bench::batch_seconds(backend, builtin_first ? builtin : fast, k, k.grid, per));
    (builtin_first ? f : b).push_back(vyre::bench::batch_seconds(backend, builtin_first ? fast : builtin, k, k.grid, per));
  }
  emit(name + ".elements", static_cast<double>(n), "");
  emit(name + ".dispatches_per_sample", per, "");
  emit(name + ".builtin_ms", median(b) * 1e3, "ms");
  emit(name + ".form_ms", median(f) * 1e3, "ms");
  emit(name + ".builtin_over_form", median(b) / median(f), "x");
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick")
      quick = true;
    else
      fail("usage: approximate_forms_figures [--quick]");
  }
  try {
    vyre::gpu::BackendOptions options;
    options.cache = std::make_shared<vyre::aot::Cache>(vyre::aot::CacheOptions{});  // in memory
    vyre::gpu::Backend backend(options);
    for (const ApproximateForm& form : vyre::lowering::approximate_forms()) {
      const std::string name = "form." + std::string(vyre::op_info(form.op).json);
      accuracy(backend, form, name);
      speed(backend, form, name, quick);
    }
  } catch (const std::exception& e) {
    fail(e.what());
  }
  return 0;
}
