// Choosing a standard kernel's shape among a family of generated programs
// (docs/lib.md, "Shapes and tuning"): the caller's shape; else, tuning off,
// the device class's default; else the cache's shape record for this device,
// family and size class; else every candidate timed on the caller's data by
// running the whole call, the fastest recorded. A primitive describes its
// family (its shapes as named counts) and gives a function that runs one call
// with one shape, submitted and waited for.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vyre/gpu.hpp"
#include "vyre/lib/options.hpp"

namespace vyre::lib::detail {

// A shape as named counts in a fixed order: {{"workgroup", 256}, {"items", 4}}.
using ShapeValues = std::vector<std::pair<std::string, uint32_t>>;

// "workgroup=256 items=4".
std::string shape_text(const ShapeValues& shape);

// "2^20 elements": calls whose element counts round up to the same power of
// two share a record.
std::string size_class_of(uint64_t elements);
// ceil(log2(n)), 0 for n <= 1.
unsigned log2_ceil(uint64_t n);

// The device's class, for the defaults: "cpu" (a software rasterizer such as
// lavapipe), "nvidia", "amd", "intel", "apple", "arm", "qualcomm", or "gpu".
std::string device_class(const gpu::Backend& backend);

struct TunableFamily {
  std::string name;                     // "reduce f32 sum": with the size class, what a record is for
  std::string size_class;               // size_class_of(...), or a primitive's own
  std::vector<ShapeValues> candidates;  // every shape worth timing here, the default among them
  ShapeValues fallback;                 // the device class's default
};

// The family's candidate (or its fallback) whose shape_text is `text`, or
// nullopt. A family's shapes may name different counts (sort names
// radix_bits only where it is not 4).
std::optional<ShapeValues> shape_from_text(const std::string& text, const TunableFamily& family);

// The shape a call runs (see the file's comment), appended to
// options.report. `run` runs the whole call once with a shape; a candidate
// whose run throws Error is kept in the record as not run, with the message.
ShapeValues choose_shape(gpu::Backend& backend, const TunableFamily& family, const Options& options,
                         const std::function<void(const ShapeValues&)>& run);

// The caller's shape, reported as given.
void report_given(const TunableFamily& family, const ShapeValues& shape, const Options& options);

// choose_shape over a primitive's own shape type (ReduceShape, SortShape,
// ...): `values_of` and `shape_of` convert it to named counts and back.
// They are template parameters, not std::function: a std::function of a
// public type's signature would export that signature's typeinfo from
// libvyre (the export check, tests/CMakeLists.txt).
template <class Shape, class ValuesOf, class ShapeOf>
Shape choose(gpu::Backend& backend, const std::optional<Shape>& given, const TunableFamily& family,
             const Options& options, ValuesOf values_of, ShapeOf shape_of, const std::function<void(const Shape&)>& run) {
  if (given) {
    report_given(family, values_of(*given), options);
    return *given;
  }
  return shape_of(choose_shape(backend, family, options, [&](const ShapeValues& v) { run(shape_of(v)); }));
}

}  // namespace vyre::lib::detail
