// Kernels the figure programs time (samples/programs.hpp), with inputs
// resident on the GPU, and how they time one: dispatches in a Batch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vyre/gpu.hpp"

namespace vyre::bench {

struct Kernel {
  std::string name;
  CheckedProgram program;
  Inputs inputs;  // contents as device buffers (a read_write one is written in place); outputs by size
  std::optional<Dim3> grid;
  std::string output;
  Inputs check;   // host contents, for comparing results (empty: `inputs`)
};

std::vector<float> random_floats(size_t n, uint32_t seed);

// The first stage of a sum, a matrix product, a row softmax, a saxpy and a
// 16-tap builder-unrolled stencil, at sizes for a GPU, or with `quick` for a
// CPU device (lavapipe).
std::vector<Kernel> sample_kernels(gpu::Backend& backend, bool quick);

// Where two runs of a kernel differ beyond what a driver's choice to fuse a
// multiply and an add may change: the first index whose values are more
// than 2^-20 of the largest magnitude apart (docs/tuning.md); nullopt when
// none is.
std::optional<size_t> first_difference(const std::vector<float>& a, const std::vector<float>& b);

// Seconds per dispatch of `pipeline`: `per` dispatches in one Batch, waited for.
double batch_seconds(gpu::Backend& backend, gpu::Pipeline& pipeline, const Kernel& k, const std::optional<Dim3>& grid,
                     int per);

}  // namespace vyre::bench
