// vyre.lib's kernels in C++ (vyre::lib): each takes a DeviceArray and gives
// one, the GIL released while it runs. python/vyre/lib.py is the surface:
// NumPy arrays, argument checks in Python's terms, the default Backend.
#include <nanobind/stl/string.h>

#include "bind.hpp"
#include "device_array.hpp"
#include "vyre/lib/bincount.hpp"
#include "vyre/lib/reduce.hpp"
#include "vyre/lib/scan.hpp"
#include "vyre/lib/sort.hpp"

namespace vyre::python {
namespace {

using namespace nb::literals;

lib::ReduceOp op_named(const std::string& name) {
  const std::optional<lib::ReduceOp> op = lib::reduce_op_from_string(name);
  if (!op) input_error("op must be one of 'sum', 'min', 'max', 'and', 'or', 'xor', not '" + name + "'");
  return *op;
}

}  // namespace

void bind_lib(nb::module_& m) {
  m.def(
      "_lib_reduce",
      [](PyBackend& b, const PyDeviceArray& x, const std::string& op, uint32_t workgroup, uint32_t items) {
        const lib::ReduceOp chosen = op_named(op);
        std::shared_ptr<gpu::DeviceBuffer> out;
        {
          nb::gil_scoped_release release;
          out = lib::reduce(*b.backend, x.buffer, chosen, {workgroup, items});
        }
        return PyDeviceArray{std::move(out), {}};
      },
      "backend"_a, "x"_a, "op"_a, "workgroup"_a, "items"_a);
  m.def(
      "_lib_scan",
      [](PyBackend& b, const PyDeviceArray& x, const std::string& op, bool inclusive, uint32_t workgroup,
         uint32_t items) {
        const lib::ReduceOp chosen = op_named(op);
        std::shared_ptr<gpu::DeviceBuffer> out;
        {
          nb::gil_scoped_release release;
          out = lib::scan(*b.backend, x.buffer, chosen, inclusive ? lib::ScanKind::Inclusive : lib::ScanKind::Exclusive,
                          {workgroup, items});
        }
        return PyDeviceArray{std::move(out), {}};
      },
      "backend"_a, "x"_a, "op"_a, "inclusive"_a, "workgroup"_a, "items"_a);
  m.def(
      "_lib_sort",
      [](PyBackend& b, const PyDeviceArray& keys, const PyDeviceArray* values, bool descending, uint32_t workgroup,
         uint32_t items) {
        lib::SortedBuffers out;
        {
          nb::gil_scoped_release release;
          out = lib::sort(*b.backend, keys.buffer, values ? values->buffer : nullptr,
                          descending ? lib::SortOrder::Descending : lib::SortOrder::Ascending, {workgroup, items});
        }
        if (!out.values) return nb::make_tuple(PyDeviceArray{std::move(out.keys), {}}, nb::none());
        return nb::make_tuple(PyDeviceArray{std::move(out.keys), {}}, PyDeviceArray{std::move(out.values), {}});
      },
      "backend"_a, "keys"_a, "values"_a.none(), "descending"_a, "workgroup"_a, "items"_a);
  m.def(
      "_lib_bincount",
      [](PyBackend& b, const PyDeviceArray& x, uint32_t bins) {
        std::shared_ptr<gpu::DeviceBuffer> out;
        {
          nb::gil_scoped_release release;
          out = lib::bincount(*b.backend, x.buffer, bins);
        }
        return PyDeviceArray{std::move(out), {}};
      },
      "backend"_a, "x"_a, "bins"_a);
}

}  // namespace vyre::python
