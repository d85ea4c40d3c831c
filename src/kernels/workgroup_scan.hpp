// An inclusive scan of a workgroup's W per-invocation totals in workgroup
// memory (Hillis-Steele: log2 W steps of stride 1, 2, ..., W/2), from one
// array to another in turn so that each step takes one barrier. Shared by
// scan's last pass and sort's scatter.
#pragma once

#include <string>
#include <vector>

#include "vyre/lib/reduce.hpp"
#include "vyre/program.hpp"

namespace vyre::lib::detail {

// A run of W elements of a workgroup buffer: `buffer[at + l]`.
struct TotalsArray {
  std::string buffer;
  uint32_t at = 0;
};

// buffer[at + i], as a load.
Expr load_total(const TotalsArray& array, Expr i);

struct ScannedTotals {
  std::vector<Stmt> steps;
  TotalsArray result;  // where invocation l finds the totals of 0..l after the steps
};

// The steps, for invocation "l" (a variable the caller declares): they read
// each invocation's total from `from` (stored, and a barrier passed, before
// them) and end with a barrier. `spare` may be any W elements no invocation
// reads or writes until the steps end. The steps' variables are named
// `names` + "s1", "s2", ...: a program that scans twice names them apart.
ScannedTotals scan_totals(ScalarType type, ReduceOp op, uint32_t w, const TotalsArray& from, const TotalsArray& spare,
                          const std::string& names = "");

}  // namespace vyre::lib::detail
