#include "kernels/shape_tuning.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <sstream>

#include "gpu/backend_cache.hpp"
#include "sys/environment.hpp"
#include "util/log.hpp"
#include "util/stopwatch.hpp"
#include "vyre/aot.hpp"
#include "vyre/error.hpp"

namespace vyre::lib {

std::string_view to_string(ShapeSource source) {
  switch (source) {
    case ShapeSource::Given: return "given";
    case ShapeSource::Default: return "default";
    case ShapeSource::Record: return "record";
    case ShapeSource::Tuned: return "tuned";
  }
  return "?";
}

Options Options::from_environment() {
  Options options;
  if (const auto tune = sys::environment_value("VYRE_TUNE")) {
    if (*tune != "0" && *tune != "1") throw Error(ErrorKind::invalid_input, "VYRE_TUNE='" + *tune + "': 0 (off) or 1 (on)");
    options.tune = *tune == "1";
  }
  return options;
}

namespace detail {
namespace {

// A candidate replaces the default only when this much faster, so that
// noise does not change shapes between runs (Backend::tune's rule).
constexpr double kMinGain = 0.03;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Choices made with tuning on, per process: a call after the first pays no
// lookup in the cache.
struct Memo {
  std::mutex mutex;
  std::map<std::string, ShapeValues> choices;  // by the cache's directory and the record's key
};
Memo& memo() {
  static Memo* m = new Memo();  // never freed: used until exit
  return *m;
}

void report(const Options& options, const TunableFamily& family, const ShapeValues& shape, ShapeSource source,
            double ms, std::string record_key) {
  if (options.report == nullptr) return;
  options.report->push_back({family.name, family.size_class, shape_text(shape), source, ms, std::move(record_key)});
}

// Every candidate, run once untimed (which compiles its pipelines), then timed
// in rounds, one call of each per round in a rotating order, so that drift
// of the device's clocks and of the host falls on all alike.
aot::ShapeRecord time_candidates(const TunableFamily& family, const std::function<void(const ShapeValues&)>& run) {
  const auto start = Clock::now();
  const gpu::TuneOptions tuning = gpu::TuneOptions::from_environment();
  aot::ShapeRecord record;
  record.family = family.name;
  record.size_class = family.size_class;
  record.fallback = shape_text(family.fallback);
  record.warmup = std::max(tuning.warmup, 1u);
  record.repetitions = std::max(tuning.repetitions, 1u);
  std::vector<std::vector<double>> samples(family.candidates.size());
  for (const ShapeValues& c : family.candidates) record.candidates.push_back({shape_text(c), false, 0, 0, ""});
  const auto attempt = [&](size_t i) -> std::optional<double> {
    aot::ShapeCandidate& c = record.candidates[i];
    if (!c.note.empty()) return std::nullopt;
    try {
      const auto t = Clock::now();
      run(family.candidates[i]);
      return ms_since(t);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::device_lost) throw;
      c.note = e.what();
      return std::nullopt;
    }
  };
  for (size_t i = 0; i < family.candidates.size(); ++i)
    for (unsigned w = 0; w < record.warmup; ++w) (void)attempt(i);
  for (unsigned round = 0; round < record.repetitions; ++round)
    for (size_t k = 0; k < family.candidates.size(); ++k) {
      const size_t i = (k + round) % family.candidates.size();
      if (const std::optional<double> ms = attempt(i)) samples[i].push_back(*ms);
    }
  const aot::ShapeCandidate* best = nullptr;
  const aot::ShapeCandidate* fallback = nullptr;
  for (size_t i = 0; i < record.candidates.size(); ++i) {
    aot::ShapeCandidate& c = record.candidates[i];
    if (!c.note.empty() || samples[i].empty()) continue;
    c.ran = true;
    c.median_ms = median(samples[i]);
    c.min_ms = *std::min_element(samples[i].begin(), samples[i].end());
    if (best == nullptr || c.median_ms < best->median_ms) best = &c;
    if (c.shape == record.fallback) fallback = &c;
  }
  if (best == nullptr)
    throw Error(ErrorKind::gpu, "tuning " + family.name + ": no candidate ran (" + record.candidates.front().note + ")");
  record.shape = fallback != nullptr && best->median_ms >= fallback->median_ms * (1 - kMinGain) ? fallback->shape
                                                                                                : best->shape;
  record.tuning_ms = ms_since(start);
  log::info("tuned {} for {}: {} ({} candidates, {:.1f} ms)", family.name, family.size_class, record.shape,
            record.candidates.size(), record.tuning_ms);
  return record;
}

bool is_candidate(const TunableFamily& family, const ShapeValues& shape) {
  return std::find(family.candidates.begin(), family.candidates.end(), shape) != family.candidates.end();
}

}  // namespace

std::string shape_text(const ShapeValues& shape) {
  std::string out;
  for (const auto& [name, value] : shape) out += (out.empty() ? "" : " ") + name + "=" + std::to_string(value);
  return out;
}

std::optional<ShapeValues> shape_from_text(const std::string& text, const TunableFamily& family) {
  for (const ShapeValues& candidate : family.candidates)
    if (shape_text(candidate) == text) return candidate;
  if (shape_text(family.fallback) == text) return family.fallback;
  return std::nullopt;
}

unsigned log2_ceil(uint64_t n) {
  unsigned b = 0;
  while ((uint64_t{1} << b) < n && b < 63) ++b;
  return b;
}

std::string size_class_of(uint64_t elements) { return "2^" + std::to_string(log2_ceil(elements)) + " elements"; }

std::string device_class(const gpu::Backend& backend) {
  const gpu::AdapterInfo& a = backend.adapter();
  if (a.type == "cpu") return "cpu";
  switch (a.vendor_id) {
    case 0x10de: return "nvidia";
    case 0x1002: return "amd";
    case 0x8086: return "intel";
    case 0x106b: return "apple";
    case 0x13b5: return "arm";
    case 0x5143: return "qualcomm";
    default: return "gpu";
  }
}

void report_given(const TunableFamily& family, const ShapeValues& shape, const Options& options) {
  report(options, family, shape, ShapeSource::Given, 0, "");
}

ShapeValues choose_shape(gpu::Backend& backend, const TunableFamily& family, const Options& options,
                         const std::function<void(const ShapeValues&)>& run) {
  if (!options.tune && !options.retune) {
    report(options, family, family.fallback, ShapeSource::Default, 0, "");
    return family.fallback;
  }
  const auto start = Clock::now();
  const aot::KeyParts parts = aot::shape_record_key_parts(family.name, family.size_class, backend.fingerprint());
  const std::string key = parts.key();
  aot::Cache& cache = gpu::cache_of(backend);
  // Backends on one cache directory share their records, and so the memo.
  const std::string memo_key = cache.directory().value_or("").string() + "\n" + key;
  if (!options.retune) {
    std::lock_guard<std::mutex> lock(memo().mutex);
    if (auto found = memo().choices.find(memo_key); found != memo().choices.end()) {
      report(options, family, found->second, ShapeSource::Record, ms_since(start), key);
      return found->second;
    }
  }
  const std::string label = "vyre::lib " + family.name + " (shape)";
  std::optional<aot::ShapeRecord> record;
  const auto tune_now = [&] { return aot::encode_shape_record(record.emplace(time_candidates(family, run))); };
  bool tuned = false;
  if (options.retune) {
    log::info("tuning {} again for {} (retune)", family.name, family.size_class);
    cache.replace(parts, tune_now, label);
    tuned = true;
  } else {
    const aot::Artifact artifact = cache.load_or_compile(parts, tune_now, label);
    tuned = record.has_value();
    if (!tuned) {
      std::string problem;
      record = aot::decode_shape_record(artifact.text, &problem);
      if (record && record->family != family.name) problem = "it is the record of " + record->family;
      std::optional<ShapeValues> shape = record ? shape_from_text(record->shape, family) : std::nullopt;
      if (problem.empty() && !(shape && is_candidate(family, *shape)))
        problem = "its shape '" + (record ? record->shape : "") + "' is not one of this family's";
      if (!problem.empty()) {
        log::warn("the cached shape record of {} for {} is unusable ({}); tuning again", family.name,
                  family.size_class, problem);
        record.reset();
        cache.replace(parts, tune_now, label);
        tuned = true;
      }
    }
  }
  ShapeValues chosen = shape_from_text(record->shape, family).value_or(family.fallback);
  {
    std::lock_guard<std::mutex> lock(memo().mutex);
    memo().choices[memo_key] = chosen;
  }
  report(options, family, chosen, tuned ? ShapeSource::Tuned : ShapeSource::Record, ms_since(start), key);
  return chosen;
}

}  // namespace detail
}  // namespace vyre::lib
