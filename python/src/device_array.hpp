// vyre.DeviceArray's state, shared by the files that take or give one
// (bind_gpu.cpp binds the class; bind_lib.cpp's kernels return them), and
// NumPy arrays that own the bytes a read filled.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <memory>
#include <vector>

#include "vyre/gpu.hpp"

namespace vyre::python {

namespace nb = nanobind;

struct PyDeviceArray {
  std::shared_ptr<gpu::DeviceBuffer> buffer;
  std::vector<size_t> shape;  // an upload's array's shape; empty: one dimension of every element

  nb::object numpy() const;
  nb::tuple shape_tuple() const;
};

// NumPy's element type for a buffer's.
nb::dlpack::dtype dlpack_of(ScalarType t);

// A 1-D NumPy array of `type` owning `bytes` (no copy).
nb::object owned_array(std::vector<uint8_t>&& bytes, ScalarType type);

}  // namespace vyre::python
