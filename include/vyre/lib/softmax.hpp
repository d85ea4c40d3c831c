// vyre::lib::softmax: the softmax of each row of a rows x cols row-major
// f32 matrix, on the GPU (docs/lib.md, "softmax").
//
//   std::vector<float> p = vyre::lib::softmax(backend, x, rows, cols);
//
// One dispatch: `lanes` invocations take a row, find its maximum, sum the
// exponentials of the row less it, and write each divided by the sum.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "vyre/export.hpp"
#include "vyre/gpu.hpp"
#include "vyre/lib/options.hpp"
#include "vyre/program.hpp"

namespace vyre::lib {

// A workgroup of `workgroup` invocations (a power of two, 1 to 256) takes
// workgroup / lanes rows, `lanes` invocations a row (a power of two, 1 to
// workgroup), each invocation every lanes-th element of it.
struct VYRE_API SoftmaxShape {
  uint32_t workgroup = 256;
  uint32_t lanes = 256;

  friend bool operator==(const SoftmaxShape&, const SoftmaxShape&) = default;
};

// The shape softmax runs on `backend` for rows of `cols` elements when given
// none and not tuned (lanes follow the row's length).
VYRE_API SoftmaxShape default_softmax_shape(const gpu::Backend& backend, uint32_t cols);

// The shapes tuning times for rows of `cols` elements.
VYRE_API std::vector<SoftmaxShape> softmax_candidates(uint32_t cols);

// The program: buffer `x` (rows x cols f32) and `dims` (two u32: rows, cols)
// to `out` (rows x cols f32). Workgroup g = wid.x + wid.y * nwg.x takes rows
// g * (workgroup / lanes) onwards.
VYRE_API Program softmax_pass(const SoftmaxShape& shape = {});

// out[r][c] = exp(x[r][c] - max_r) / sum_c' exp(x[r][c'] - max_r), along the
// last axis only (softmax along axis 0 is transpose, softmax, transpose), as
// scipy.special.softmax computes it: a row holding NaN, or +inf (inf - inf),
// or only -inf (0 / 0) is all NaN; -inf elements of another row give 0.
// Each element is within the relative error docs/lib.md derives. Zero rows
// or columns give an empty result. Throws Error(invalid_input) for a type
// other than f32 or a length other than rows * cols.
VYRE_API std::shared_ptr<gpu::DeviceBuffer> softmax(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& x,
                                                    uint32_t rows, uint32_t cols,
                                                    const std::optional<SoftmaxShape>& shape = std::nullopt,
                                                    const Options& options = Options::from_environment());

VYRE_API std::vector<float> softmax(gpu::Backend& backend, std::span<const float> x, uint32_t rows, uint32_t cols,
                                    const std::optional<SoftmaxShape>& shape = std::nullopt,
                                    const Options& options = Options::from_environment());

}  // namespace vyre::lib
