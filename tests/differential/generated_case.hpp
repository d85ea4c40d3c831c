// One differential test case: a program, what it is dispatched with, and how
// each of its outputs is compared between the reference interpreter and the
// GPU.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "vyre/dispatch.hpp"
#include "vyre/program.hpp"

namespace vyre::differential {

// How one output buffer is compared (docs/conformance.md, "Differential testing").
struct CompareRule {
  enum class Kind {
    exact,       // u32 and i32: equal values
    f32_bits,    // f32 computed exactly: equal bits, except that zeros of either sign are equal,
                 // any NaN equals any NaN, and a subnormal may read back as a zero
    f32_bounded  // f32 from an imprecise operation: |gpu - reference| <= abs + ulps * ulp(reference)
  };
  Kind kind = Kind::exact;
  double abs = 0;
  double ulps = 0;
  std::string why;  // for f32_bounded: the operation whose WGSL accuracy sets the bound

  friend bool operator==(const CompareRule&, const CompareRule&) = default;
};

struct GeneratedCase {
  uint64_t seed = 0;
  Program program;
  std::map<std::string, std::vector<uint32_t>> contents;  // buffers dispatched with contents (element_values.hpp)
  std::map<std::string, uint32_t> sizes;                  // runtime-sized buffers dispatched with a length only
  ShaderOptions options;
  std::optional<Dim3> grid;  // the launch's; none: the default grid
  std::map<std::string, CompareRule> compare;  // one per output buffer
  // Runtime-sized buffers the program only ever indexes modulo their
  // length, so that a shorter input keeps every access in bounds.
  std::set<std::string> shortenable;
  // What each f32 buffer may hold, in words (generator's domains; see
  // random_program.hpp).
  std::map<std::string, std::string> domains;
  // f32 buffers whose domain leaves out zero (a bitcast of their values may
  // not see the sign of a zero, which WGSL lets a GPU ignore).
  std::set<std::string> zero_free;

  Inputs inputs() const;
  // Statements and expressions, for reporting the size of a program.
  size_t node_count() const;
};

size_t count_nodes(const std::vector<Stmt>& body);

}  // namespace vyre::differential
