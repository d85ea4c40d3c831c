// Backend::tune: per-device autotuning (docs/tuning.md). Candidates are the
// program's own configuration, widening, and the workgroup shapes its results
// cannot depend on; each is compiled, dispatched `warmup` times untimed and
// `repetitions` times timed on the caller's data, and the median decides.
// The record of what was chosen goes to the AOT cache under a key naming the
// program, the size class and the device with its driver.
#include <algorithm>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "dispatch/plan.hpp"
#include "dispatch/retile.hpp"
#include "gpu/backend_state.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/handles.hpp"
#include "gpu/word_aligned.hpp"
#include "lower/widening.hpp"
#include "util/log.hpp"
#include "util/stopwatch.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"

namespace vyre::gpu {
namespace {

// ceil(log2(n)): dispatches whose invocation counts share these per axis
// share a record.
unsigned log2_bucket(uint64_t n) {
  unsigned b = 0;
  while ((uint64_t{1} << b) < n && b < 63) ++b;
  return b;
}

std::string size_class_of(const DispatchPlan& plan) {
  std::string out = "invocations";
  for (size_t a = 0; a < 3; ++a) {
    const uint64_t n = uint64_t{plan.grid[a]} * plan.workgroup_size[a];
    out += (a == 0 ? " 2^" : " x 2^") + std::to_string(log2_bucket(n));
  }
  return out;
}

// Workgroup shapes worth timing for a dispatch's active axes, within the
// device's limits: the usual sizes for large dispatches, small ones too for
// dispatches too small for those to divide.
std::vector<Dim3> shapes_to_try(const DispatchPlan& plan, const WGPULimits& limits) {
  bool active[3];
  uint64_t total = 1;
  for (size_t a = 0; a < 3; ++a) {
    const uint64_t n = uint64_t{plan.grid[a]} * plan.workgroup_size[a];
    active[a] = n > 1;
    total *= n;
  }
  const bool small = total < 1024;
  std::vector<Dim3> shapes;
  if (active[2]) {
    if (small)
      for (const Dim3& s : {Dim3{1, 1, 2}, Dim3{2, 2, 2}, Dim3{4, 2, 2}, Dim3{1, 2, 4}, Dim3{4, 4, 4}, Dim3{8, 8, 4}})
        shapes.push_back(s);
  } else if (active[1]) {
    for (uint32_t product : {4u, 16u, 64u, 256u}) {
      if (product < 64 && !small) continue;
      for (uint32_t x = 1; x <= product; x *= 2) shapes.push_back({x, product / x, 1});
    }
  } else {
    for (uint32_t x = small ? 1 : 32; x <= 1024; x *= 2) shapes.push_back({x, 1, 1});
  }
  std::erase_if(shapes, [&](const Dim3& s) {
    return s[0] > limits.maxComputeWorkgroupSizeX || s[1] > limits.maxComputeWorkgroupSizeY ||
           s[2] > limits.maxComputeWorkgroupSizeZ ||
           uint64_t{s[0]} * s[1] * s[2] > limits.maxComputeInvocationsPerWorkgroup || s == plan.workgroup_size;
  });
  return shapes;
}

// The inputs of the timed dispatches. Contents only read are uploaded once;
// every read_write buffer with contents is restored from a pristine copy
// before each dispatch (by a copy on the GPU that is waited for outside the
// timing), so each timed dispatch sees the caller's data and the caller's own
// device buffers are never written.
class TuningInputs {
 public:
  TuningInputs(Backend& backend, const DispatchPlan& plan) : device_(state_of(backend)->live().device) {
    for (const BufferPlan& b : plan.buffers) {
      if (b.entry == nullptr) continue;
      const std::string& name = b.buffer->name;
      const bool written = b.buffer->access == Access::ReadWrite;
      const bool size_only = b.device == nullptr && b.entry->elements.has_value();
      if (size_only) {
        base_.size(name, b.elements);
      } else if (b.buffer->access == Access::Uniform || (b.device == nullptr && b.initial.empty())) {
        // Host values: a uniform takes only those; empty contents cost nothing.
        base_.bytes(name, std::vector<uint8_t>(b.initial.begin(), b.initial.end()));
      } else if (b.device != nullptr && !written) {
        base_.device(name, b.entry->device);
      } else {
        const std::vector<uint8_t> bytes =
            b.device != nullptr ? b.device->read() : std::vector<uint8_t>(b.initial.begin(), b.initial.end());
        auto uploaded = backend.upload(bytes, b.buffer->type);
        if (written)
          pristine_.push_back({name, b.buffer->type, std::move(uploaded)});
        else
          base_.device(name, std::move(uploaded));
      }
    }
    pool_ = state_of(backend)->live().pool;
  }

  // `count` independent sets of inputs, each with its own restored copies.
  std::vector<Inputs> fresh(unsigned count) {
    std::vector<Inputs> sets(count, base_);
    if (pristine_.empty()) return sets;
    wgpu::CommandEncoder encoder(wgpuDeviceCreateCommandEncoder(device_->device(), nullptr));
    for (Inputs& in : sets) {
      for (const Pristine& p : pristine_) {
        const uint64_t bytes = p.buffer->size_bytes();
        auto copy = make_device_buffer(pool_, bytes, p.type, "a tuning copy of '" + p.name + "'");
        // Both buffers hold whole words (narrow elements are packed): copy them all.
        if (bytes > 0)
          wgpuCommandEncoderCopyBufferToBuffer(encoder.get(), p.buffer->state(kStateKey).buffer.buffer.get(), 0,
                                               copy->state(kStateKey).buffer.buffer.get(), 0, word_rounded(bytes));
        in.device(p.name, std::move(copy));
      }
    }
    const wgpu::CommandBuffer commands(wgpuCommandEncoderFinish(encoder.get(), nullptr));
    device_->wait_for(device_->submit(commands.get()));
    return sets;
  }

  // Bytes one set's restored copies take.
  uint64_t copy_bytes() const {
    uint64_t total = 0;
    for (const Pristine& p : pristine_) total += p.buffer->size_bytes();
    return total;
  }

 private:
  struct Pristine {
    std::string name;
    ScalarType type;
    std::shared_ptr<DeviceBuffer> buffer;
  };
  std::shared_ptr<DeviceContext> device_;
  std::shared_ptr<BufferPool> pool_;
  Inputs base_;
  std::vector<Pristine> pristine_;
};

struct Candidate {
  ShaderOptions options;
  std::optional<Dim3> grid;  // what the caller's grid becomes on this shape
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One candidate being timed: its compiled pipeline, its samples, and the
// first error that took it out.
struct Trial {
  const Candidate* candidate = nullptr;
  aot::TuningCandidate result;
  std::optional<Pipeline> pipeline;
  std::vector<double> samples;
  std::exception_ptr failure;

  bool alive() const { return pipeline.has_value() && result.note.empty(); }

  // `count` dispatches in one submission, waited for: milliseconds per
  // dispatch from submission to completion. A failure ends the candidate
  // (and is kept, for a dispatch no candidate runs).
  std::optional<double> dispatch(Backend& backend, TuningInputs& inputs, unsigned count) {
    try {
      const std::vector<Inputs> sets = inputs.fresh(count);
      Batch batch(backend);
      for (const Inputs& in : sets) batch.dispatch_resident(*pipeline, in, candidate->grid);
      DispatchReport report;
      const auto start = Clock::now();
      batch.run(&report);
      const double ms = ms_since(start) / count;
      if (report.vector_width != candidate->options.vector_width) {
        result.note = "this dispatch's lengths or grid do not allow the widened shader";
        return std::nullopt;
      }
      return ms;
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::device_lost) throw;
      result.note = e.what();
      failure = std::current_exception();
      return std::nullopt;
    }
  }
};

// Dispatches per timed sample: enough that a sample spans about a
// millisecond, so that submitting and waiting do not drown a short kernel,
// at most 16, and within 512 MiB of restored copies.
unsigned dispatches_per_sample(double one_ms, uint64_t copy_bytes) {
  constexpr double kSampleMs = 1.0;
  constexpr uint64_t kCopyBudget = 512ull << 20;
  unsigned count = one_ms > 0 ? static_cast<unsigned>(std::clamp(kSampleMs / one_ms, 1.0, 16.0)) : 16;
  if (copy_bytes > 0) count = static_cast<unsigned>(std::min<uint64_t>(count, std::max<uint64_t>(1, kCopyBudget / copy_bytes)));
  return count;
}

// Compiles and warms every candidate, then times them in rounds, one sample
// of each per round in a rotating order, so that drift of the device's
// clocks and of the host falls on all candidates alike. A sample is `batch`
// dispatches in one submission, each on its own restored inputs.
std::vector<Trial> time_candidates(Backend& backend, const CheckedProgram& program,
                                   const std::vector<Candidate>& candidates, TuningInputs& inputs,
                                   const TuneOptions& tuning, unsigned& batch) {
  std::vector<Trial> trials(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    Trial& t = trials[i];
    t.candidate = &candidates[i];
    t.result.workgroup = effective_workgroup_size(program.program(), candidates[i].options);
    t.result.vector_width = candidates[i].options.vector_width;
    try {
      t.pipeline.emplace(compile_exact(state_of(backend), program, candidates[i].options));
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::device_lost) throw;
      t.result.note = e.what();
      t.failure = std::current_exception();
      continue;
    }
    for (unsigned w = 0; w < tuning.warmup && t.alive(); ++w) (void)t.dispatch(backend, inputs, 1);
  }
  // The sample size, from one dispatch of the first candidate that runs.
  batch = 1;
  for (Trial& t : trials) {
    if (!t.alive()) continue;
    if (const std::optional<double> ms = t.dispatch(backend, inputs, 1))
      batch = dispatches_per_sample(*ms, inputs.copy_bytes());
    break;
  }
  for (unsigned round = 0; round < tuning.repetitions; ++round) {
    for (size_t k = 0; k < trials.size(); ++k) {
      Trial& t = trials[(k + round) % trials.size()];
      if (!t.alive()) continue;
      if (const std::optional<double> ms = t.dispatch(backend, inputs, batch)) t.samples.push_back(*ms);
    }
  }
  for (Trial& t : trials) {
    if (!t.alive() || t.samples.empty()) continue;
    t.result.ran = true;
    t.result.median_ms = median(t.samples);
    t.result.min_ms = *std::min_element(t.samples.begin(), t.samples.end());
  }
  return trials;
}

// The candidates for one dispatch: the own configuration first.
std::vector<Candidate> candidates_for(const CheckedProgram& program, const ShaderOptions& own,
                                      const std::optional<Dim3>& grid, const DispatchPlan& plan,
                                      const WGPULimits& limits, std::string& fixed_shape) {
  ShaderOptions wide = own;
  wide.vector_width = kWideWidth;
  const std::optional<Widening> widening = find_widening(program, wide);
  std::vector<Candidate> out{{own, grid}};
  if (widening) out.push_back({wide, grid});
  const std::optional<std::string> dependence = workgroup_dependence(program);
  if (dependence) {
    fixed_shape = "the workgroup shape is part of the program's meaning: " + *dependence;
    return out;
  }
  const std::vector<Dim3> shapes = shapes_to_try(plan, limits);
  if (shapes.empty()) fixed_shape = "no other workgroup shape fits this dispatch and device";
  for (const Dim3& shape : shapes) {
    const std::optional<Dim3> retiled = retiled_grid(program.program(), plan, shape, widening);
    if (!retiled) continue;  // would run other invocations
    ShaderOptions o = own;
    o.workgroup_override = shape;
    out.push_back({o, retiled});
    if (widening) {
      o.vector_width = kWideWidth;
      if (find_widening(program, o)) out.push_back({o, retiled});
    }
  }
  return out;
}

aot::TuningRecord run_tuning(Backend& backend, const CheckedProgram& program, const ShaderOptions& own,
                             const std::optional<Dim3>& grid, const DispatchPlan& plan, const std::string& size_class,
                             const TuneOptions& tuning) {
  const auto start = Clock::now();
  const std::shared_ptr<DeviceContext> device = state_of(backend)->live().device;
  aot::TuningRecord record;
  record.size_class = size_class;
  record.own_workgroup = plan.workgroup_size;
  record.workgroup = plan.workgroup_size;
  record.warmup = tuning.warmup;
  record.repetitions = std::max(tuning.repetitions, 1u);
  TuneOptions used = tuning;
  used.repetitions = record.repetitions;
  std::string fixed_shape;
  const std::vector<Candidate> candidates = candidates_for(program, own, grid, plan, device->limits(), fixed_shape);
  std::exception_ptr own_failure;  // why the own configuration did not run
  {
    TuningInputs inputs(backend, plan);
    std::vector<Trial> trials = time_candidates(backend, program, candidates, inputs, used, record.batch);
    own_failure = trials.front().failure;
    for (Trial& t : trials) record.candidates.push_back(std::move(t.result));
  }

  const aot::TuningCandidate& mine = record.candidates.front();
  const aot::TuningCandidate* best = nullptr;
  for (const aot::TuningCandidate& c : record.candidates)
    if (c.ran && (best == nullptr || c.median_ms < best->median_ms)) best = &c;
  // Nothing ran: the dispatch cannot run at all, and says why as it would untuned.
  if (best == nullptr && own_failure) std::rethrow_exception(own_failure);
  if (best == nullptr) throw Error(ErrorKind::gpu, "tuning '" + program.name() + "': no candidate ran (" + mine.note + ")");
  if (!mine.ran || best->median_ms < mine.median_ms * (1 - tuning.min_gain)) {
    record.workgroup = best->workgroup;
    record.vector_width = best->vector_width;
  }
  if (record.chose_own()) {
    record.reason = candidates.size() == 1 ? (fixed_shape.empty() ? "nothing to tune" : fixed_shape)
                                           : "no candidate was faster by the minimum gain";
    if (!fixed_shape.empty() && candidates.size() > 1) record.reason += "; " + fixed_shape;
  }
  record.tuning_ms = ms_since(start);
  log::info("tuned '{}' for {}: workgroup {}, {} per invocation ({} candidates, {:.1f} ms){}", program.name(),
            size_class, dim3_text(record.workgroup), int{record.vector_width}, record.candidates.size(),
            record.tuning_ms, record.reason.empty() ? "" : "; " + record.reason);
  return record;
}

}  // namespace

Tuned Backend::tune(const CheckedProgram& program, const Inputs& inputs, const std::optional<Dim3>& grid,
                    const ShaderOptions& options, const TuneOptions& tuning) {
  const auto start = Clock::now();
  const std::shared_ptr<BackendState>& impl = state_of(*this);
  ShaderOptions own = options;
  own.vector_width = 1;  // tuning chooses the width
  DispatchPlan plan;
  DispatchPlanner(program, own).plan(inputs, grid, plan);  // refuses inputs the program cannot take
  const std::string size_class = size_class_of(plan);

  Tuned out;
  const aot::KeyParts parts = aot::tuning_key_parts(program, impl->fingerprint, size_class, own);
  out.record_key = parts.key();
  std::optional<aot::TuningRecord> tuned;
  auto tune_now = [&] {
    return encode_tuning_record(tuned.emplace(run_tuning(*this, program, own, grid, plan, size_class, tuning)));
  };
  if (tuning.retune) {
    log::info("tuning '{}' again for {} (retune)", program.name(), size_class);
    impl->cache->replace(parts, tune_now, program.name());
  } else {
    const aot::Artifact artifact = impl->cache->load_or_compile(parts, tune_now, program.name());
    if (!tuned) {
      std::string problem;
      tuned = aot::decode_tuning_record(artifact.text, &problem);
      out.reused = tuned.has_value();
      if (!tuned) {
        log::warn("the cached tuning record of '{}' is unusable ({}); tuning again", program.name(), problem);
        impl->cache->replace(parts, tune_now, program.name());
      }
    }
  }
  out.record = std::move(*tuned);

  // Apply the choice to this dispatch, if its grid re-tiles onto the shape.
  const aot::TuningRecord& r = out.record;
  ShaderOptions chosen = own;
  chosen.vector_width = r.vector_width;
  out.grid = grid;
  out.applied = true;
  if (r.workgroup != plan.workgroup_size) {
    std::optional<std::string> why = workgroup_dependence(program);
    std::optional<Dim3> retiled;
    if (!why) {
      ShaderOptions wide = own;
      wide.vector_width = kWideWidth;
      retiled = retiled_grid(program.program(), plan, r.workgroup, find_widening(program, wide));
      if (!retiled) why = "its grid does not re-tile onto workgroups of " + dim3_text(r.workgroup);
    }
    if (retiled) {
      chosen.workgroup_override = r.workgroup;
      out.grid = retiled;
    } else {
      chosen = own;
      out.applied = false;
      out.not_applied = *why;
      log::info("tuned configuration of '{}' not applied: {}", program.name(), out.not_applied);
    }
  }
  out.pipeline = compile_exact(impl, program, chosen);
  out.tune_ms = ms_since(start);
  return out;
}

}  // namespace vyre::gpu
