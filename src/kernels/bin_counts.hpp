// Counting values into bins on the GPU, shared by bincount and histogram:
// each workgroup counts its span of workgroup * items values in workgroup
// memory (an atomic add there per value), then adds each non-empty bin to the
// result with one device atomic. Beyond kWorkgroupBins bins each value is a
// device atomic instead; the values no bin holds are still counted in
// workgroup memory first, so that they never all contend on one counter.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "vyre/builder.hpp"
#include "vyre/lib/reduce.hpp"

namespace vyre::lib::detail {

// The statements that set the local `b` to the bin of element `i` (a local)
// of buffer "values", or to `bins` for a value no bin holds.
using BinOf = std::function<std::vector<Stmt>()>;

// The body of a pass over buffer "values" into "counts" (u32, `bins`
// elements, zeroed) and "outside" (u32, one element), with the workgroup
// buffer declare_bin_memory adds. Workgroup g is wid.x + wid.y * nwg.x.
std::vector<Stmt> count_into_bins(uint32_t bins, const ReduceShape& shape, const BinOf& bin_of);

// Declares the workgroup buffer count_into_bins uses.
void declare_bin_memory(build::ProgramBuilder& builder, uint32_t bins);

}  // namespace vyre::lib::detail
