// How a standard kernel's call chooses its shape (docs/lib.md, "Shapes and
// tuning"), and what it tells of the choice.
//
//   std::vector<vyre::lib::ShapeChoice> report;
//   vyre::lib::Options options{.tune = true, .report = &report};
//   float total = vyre::lib::reduce<float>(backend, values, vyre::lib::ReduceOp::Sum, {}, options);
//   // report[0]: "reduce f32 sum", "2^20 elements", "workgroup=64 items=32", ShapeSource::Tuned
//
// A shape given by the caller runs as given. Otherwise, without tuning, the
// documented default of the device's class runs (nothing timed, nothing
// looked up); with tuning (Options::tune, VYRE_TUNE=1), the shape recorded
// in the AOT cache for this device and driver and this size class runs, and
// where there is none yet every candidate is timed on the caller's data and
// the fastest recorded, so that the next process times nothing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vyre/export.hpp"

namespace vyre::lib {

// Where a call's shape came from.
enum class ShapeSource : uint8_t {
  Given,    // the caller's
  Default,  // the device class's default (tuning off)
  Record,   // a tuning record of the cache: nothing was timed
  Tuned,    // timed now, and recorded
};

VYRE_API std::string_view to_string(ShapeSource source);

// One tunable family a call ran, and the shape it ran with.
struct VYRE_API ShapeChoice {
  std::string family;      // what the shape is for: "reduce f32 sum"
  std::string size_class;  // the dispatches it is for: "2^20 elements"
  std::string shape;       // "workgroup=64 items=32"
  ShapeSource source = ShapeSource::Default;
  double ms = 0;           // choosing it: the record's lookup, or the timing with its compiles
  std::string record_key;  // the tuning record's cache key (vyre cache show KEY); empty for Given and Default
};

struct VYRE_API Options {
  // Use the cache's tuning record of this device and size class, timing the
  // candidates first where there is none. Default: VYRE_TUNE=1.
  bool tune = false;
  // Time the candidates again and replace the record (implies tune).
  bool retune = false;
  // Where to append what each tunable family of the call ran with; may be null.
  std::vector<ShapeChoice>* report = nullptr;

  // tune from VYRE_TUNE ("1", "true", "yes", "on"; anything else is off).
  static Options from_environment();
};

}  // namespace vyre::lib
