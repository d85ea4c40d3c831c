// vyre.lib's kernels in C++ (vyre::lib): each takes DeviceArrays and gives
// DeviceArrays, the GIL released while it runs. python/vyre/lib.py is the
// surface: NumPy arrays, argument checks in Python's terms, the default
// Backend. Every kernel takes the same three last arguments: its shape
// (None: chosen for the device), `tune` (None: VYRE_TUNE) and `report` (a
// list that receives one dict per shape the call chose, or None).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bind.hpp"
#include "device_array.hpp"
#include "vyre/lib/bincount.hpp"
#include "vyre/lib/compact.hpp"
#include "vyre/lib/find.hpp"
#include "vyre/lib/histogram.hpp"
#include "vyre/lib/matmul.hpp"
#include "vyre/lib/options.hpp"
#include "vyre/lib/reduce.hpp"
#include "vyre/lib/scan.hpp"
#include "vyre/lib/softmax.hpp"
#include "vyre/lib/sort.hpp"
#include "vyre/lib/transpose.hpp"

namespace vyre::python {
namespace {

using namespace nb::literals;

lib::ReduceOp op_named(const std::string& name) {
  const std::optional<lib::ReduceOp> op = lib::reduce_op_from_string(name);
  if (!op) input_error("op must be one of 'sum', 'min', 'max', 'and', 'or', 'xor', not '" + name + "'");
  return *op;
}

// What a call chooses its shapes by, and what it says of them.
struct Choosing {
  lib::Options options;
  std::vector<lib::ShapeChoice> choices;

  Choosing(std::optional<bool> tune, bool retune) : options(lib::Options::from_environment()) {
    if (tune) options.tune = *tune;
    options.retune = retune;
    options.report = &choices;
  }

  // The choices as dicts, appended to `report` when it is a list.
  void tell(nb::handle report) const {
    if (report.is_none()) return;
    nb::list out = nb::borrow<nb::list>(report);
    for (const lib::ShapeChoice& c : choices) {
      nb::dict d;
      d["family"] = c.family;
      d["size_class"] = c.size_class;
      d["shape"] = c.shape;
      d["source"] = std::string(lib::to_string(c.source));
      d["ms"] = c.ms;
      d["record_key"] = c.record_key;
      out.append(d);
    }
  }
};

// A span shape from the keywords: none of them, the device's choice; one,
// the other from the device class's default.
std::optional<lib::ReduceShape> span_shape(std::optional<uint32_t> workgroup, std::optional<uint32_t> items,
                                           const lib::ReduceShape& fallback) {
  if (!workgroup && !items) return std::nullopt;
  return lib::ReduceShape{workgroup.value_or(fallback.workgroup), items.value_or(fallback.items)};
}

}  // namespace

void bind_lib(nb::module_& m) {
  m.def(
      "_lib_reduce",
      [](PyBackend& b, const PyDeviceArray& x, const std::string& op, std::optional<uint32_t> workgroup,
         std::optional<uint32_t> items, std::optional<bool> tune, bool retune, nb::handle report) {
        const lib::ReduceOp chosen = op_named(op);
        const std::optional<lib::ReduceShape> shape = span_shape(workgroup, items, lib::default_reduce_shape(*b.backend));
        Choosing choosing(tune, retune);
        std::shared_ptr<gpu::DeviceBuffer> out;
        {
          nb::gil_scoped_release release;
          out = lib::reduce(*b.backend, x.buffer, chosen, shape, choosing.options);
        }
        choosing.tell(report);
        return PyDeviceArray{std::move(out), {}};
      },
      "backend"_a, "x"_a, "op"_a, "workgroup"_a.none(), "items"_a.none(), "tune"_a.none(), "retune"_a,
      "report"_a.none());
  m.def(
      "_lib_scan",
      [](PyBackend& b, const PyDeviceArray& x, const std::string& op, bool inclusive, std::optional<uint32_t> workgroup,
         std::optional<uint32_t> items, std::optional<bool> tune, bool retune, nb::handle report) {
        const lib::ReduceOp chosen = op_named(op);
        const std::optional<lib::ReduceShape> shape =
            span_shape(workgroup, items, lib::default_scan_shape(*b.backend, x.buffer->type()));
        Choosing choosing(tune, retune);
        std::shared_ptr<gpu::DeviceBuffer> out;
        {
          nb::gil_scoped_release release;
          out = lib::scan(*b.backend, x.buffer, chosen, inclusive ? lib::ScanKind::Inclusive : lib::ScanKind::Exclusive,
                          shape, choosing.options);
        }
        choosing.tell(report);
        return PyDeviceArray{std::move(out), {}};
      },
      "backend"_a, "x"_a, "op"_a, "inclusive"_a, "workgroup"_a.none(), "items"_a.none(), "tune"_a.none(), "retune"_a,
      "report"_a.none());
  m.def(
      "_lib_sort",
      [](PyBackend& b, const PyDeviceArray& keys, const PyDeviceArray* values, bool descending,
         std::optional<uint32_t> workgroup, std::optional<uint32_t> items, std::optional<uint32_t> radix_bits,
         std::optional<bool> tune, bool retune, nb::handle report) {
        std::optional<lib::SortShape> shape;
        if (workgroup || items || radix_bits) {
          // What is not given comes from the device's default for these
          // keys and values, except the radix: 4 bits beside a given
          // workgroup or items (docs/lib.md, "sort").
          const lib::SortShape fallback = lib::default_sort_shape(
              *b.backend, keys.buffer->type(), values ? std::optional(values->buffer->type()) : std::nullopt);
          shape = lib::SortShape{workgroup.value_or(fallback.workgroup), items.value_or(fallback.items),
                                 radix_bits.value_or(workgroup || items ? 4u : fallback.radix_bits)};
        }
        Choosing choosing(tune, retune);
        lib::SortedBuffers out;
        {
          nb::gil_scoped_release release;
          out = lib::sort(*b.backend, keys.buffer, values ? values->buffer : nullptr,
                          descending ? lib::SortOrder::Descending : lib::SortOrder::Ascending, shape, choosing.options);
        }
        choosing.tell(report);
        if (!out.values) return nb::make_tuple(PyDeviceArray{std::move(out.keys), {}}, nb::none());
        return nb::make_tuple(PyDeviceArray{std::move(out.keys), {}}, PyDeviceArray{std::move(out.values), {}});
      },
      "backend"_a, "keys"_a, "values"_a.none(), "descending"_a, "workgroup"_a.none(), "items"_a.none(),
      "radix_bits"_a.none(), "tune"_a.none(), "retune"_a, "report"_a.none());
  m.def(
      "_lib_bincount",
      [](PyBackend& b, const PyDeviceArray& x, uint32_t bins, std::optional<bool> tune, bool retune,
         nb::handle report) {
        Choosing choosing(tune, retune);
        std::shared_ptr<gpu::DeviceBuffer> out;
        {
          nb::gil_scoped_release release;
          out = lib::bincount(*b.backend, x.buffer, bins, std::nullopt, choosing.options);
        }
        choosing.tell(report);
        return PyDeviceArray{std::move(out), {}};
      },
      "backend"_a, "x"_a, "bins"_a, "tune"_a.none(), "retune"_a, "report"_a.none());
  m.def(
      "_lib_find",
      [](PyBackend& b, const PyDeviceArray& haystack, const nb::list& patterns, std::optional<uint32_t> workgroup,
         std::optional<uint32_t> chunk, std::optional<bool> tune, bool retune, nb::handle report) {
        std::vector<std::string> bytes;  // vyre/lib.py gives bytes only
        bytes.reserve(patterns.size());
        for (nb::handle p : patterns) {
          const auto pattern = nb::borrow<nb::bytes>(p);
          bytes.emplace_back(pattern.c_str(), pattern.size());
        }
        std::optional<lib::FindShape> shape;
        if (workgroup || chunk) {
          const lib::FindShape fallback = lib::default_find_shape(*b.backend);
          shape = lib::FindShape{workgroup.value_or(fallback.workgroup), chunk.value_or(fallback.chunk)};
        }
        Choosing choosing(tune, retune);
        lib::MatchBuffers out;
        {
          nb::gil_scoped_release release;
          out = lib::find(*b.backend, haystack.buffer, bytes, shape, choosing.options);
        }
        choosing.tell(report);
        return nb::make_tuple(PyDeviceArray{std::move(out.pattern), {}}, PyDeviceArray{std::move(out.position), {}});
      },
      "backend"_a, "haystack"_a, "patterns"_a, "workgroup"_a.none(), "chunk"_a.none(), "tune"_a.none(), "retune"_a,
      "report"_a.none());
  m.def(
      "_lib_compact",
      [](PyBackend& b, const PyDeviceArray& x, const PyDeviceArray* mask, std::optional<uint32_t> workgroup,
         std::optional<uint32_t> items, std::optional<bool> tune, bool retune, nb::handle report) {
        // No mask: nonzero(x), the indices.
        const std::optional<lib::ReduceShape> shape = span_shape(workgroup, items, lib::default_compact_shape(*b.backend));
        Choosing choosing(tune, retune);
        lib::Compacted out;
        {
          nb::gil_scoped_release release;
          out = mask ? lib::compact(*b.backend, x.buffer, mask->buffer, shape, choosing.options)
                     : lib::nonzero(*b.backend, x.buffer, shape, choosing.options);
        }
        choosing.tell(report);
        return PyDeviceArray{std::move(out.buffer), {}};
      },
      "backend"_a, "x"_a, "mask"_a.none(), "workgroup"_a.none(), "items"_a.none(), "tune"_a.none(), "retune"_a,
      "report"_a.none());
  m.def(
      "_lib_histogram",
      [](PyBackend& b, const PyDeviceArray& x, uint32_t bins, double lo, double hi, std::optional<std::vector<double>> edges,
         std::optional<uint32_t> workgroup, std::optional<uint32_t> items, std::optional<bool> tune, bool retune,
         nb::handle report) {
        // With `edges`, those (bins and the range unused); else bins over [lo, hi].
        const std::optional<lib::ReduceShape> shape = span_shape(workgroup, items, lib::ReduceShape{});
        Choosing choosing(tune, retune);
        lib::DeviceHistogram out;
        {
          nb::gil_scoped_release release;
          out = edges ? lib::histogram(*b.backend, x.buffer, std::span<const double>(*edges), shape, choosing.options)
                      : lib::histogram(*b.backend, x.buffer, bins, lo, hi, shape, choosing.options);
        }
        choosing.tell(report);
        return nb::make_tuple(PyDeviceArray{std::move(out.counts), {}}, PyDeviceArray{std::move(out.outside), {}});
      },
      "backend"_a, "x"_a, "bins"_a, "lo"_a, "hi"_a, "edges"_a.none(), "workgroup"_a.none(), "items"_a.none(),
      "tune"_a.none(), "retune"_a, "report"_a.none());
  m.def(
      "_lib_matmul",
      [](PyBackend& b, const PyDeviceArray& a, const PyDeviceArray& bm, uint32_t m, uint32_t n, uint32_t k,
         std::optional<uint32_t> tile_m, std::optional<uint32_t> tile_n, std::optional<uint32_t> tile_k,
         std::optional<uint32_t> thread_m, std::optional<uint32_t> thread_n, std::optional<bool> tune, bool retune,
         nb::handle report) {
        // The shape's fields given, the rest from the device class's default.
        std::optional<lib::MatmulShape> shape;
        if (tile_m || tile_n || tile_k || thread_m || thread_n) {
          const lib::MatmulShape d = lib::default_matmul_shape(*b.backend);
          shape = lib::MatmulShape{tile_m.value_or(d.tile_m), tile_n.value_or(d.tile_n), tile_k.value_or(d.tile_k),
                                   thread_m.value_or(d.thread_m), thread_n.value_or(d.thread_n)};
        }
        Choosing choosing(tune, retune);
        std::shared_ptr<gpu::DeviceBuffer> out;
        {
          nb::gil_scoped_release release;
          out = lib::matmul(*b.backend, a.buffer, bm.buffer, m, n, k, shape, choosing.options);
        }
        choosing.tell(report);
        return PyDeviceArray{std::move(out), {m, n}};
      },
      "backend"_a, "a"_a, "b"_a, "m"_a, "n"_a, "k"_a, "tile_m"_a.none(), "tile_n"_a.none(), "tile_k"_a.none(),
      "thread_m"_a.none(), "thread_n"_a.none(), "tune"_a.none(), "retune"_a, "report"_a.none());
  m.def(
      "_lib_transpose",
      [](PyBackend& b, const PyDeviceArray& x, uint32_t rows, uint32_t cols, std::optional<uint32_t> tile,
         std::optional<uint32_t> rows_per_invocation, std::optional<bool> tune, bool retune, nb::handle report) {
        std::optional<lib::TransposeShape> shape;
        if (tile || rows_per_invocation) {
          const lib::TransposeShape d = lib::default_transpose_shape(*b.backend);
          shape = lib::TransposeShape{tile.value_or(d.tile), rows_per_invocation.value_or(d.rows_per_invocation)};
        }
        Choosing choosing(tune, retune);
        std::shared_ptr<gpu::DeviceBuffer> out;
        {
          nb::gil_scoped_release release;
          out = lib::transpose(*b.backend, x.buffer, rows, cols, shape, choosing.options);
        }
        choosing.tell(report);
        return PyDeviceArray{std::move(out), {cols, rows}};
      },
      "backend"_a, "x"_a, "rows"_a, "cols"_a, "tile"_a.none(), "rows_per_invocation"_a.none(), "tune"_a.none(),
      "retune"_a, "report"_a.none());
  m.def(
      "_lib_softmax",
      [](PyBackend& b, const PyDeviceArray& x, uint32_t rows, uint32_t cols, std::optional<uint32_t> workgroup,
         std::optional<uint32_t> lanes, std::optional<bool> tune, bool retune, nb::handle report) {
        std::optional<lib::SoftmaxShape> shape;
        if (workgroup || lanes) {
          const lib::SoftmaxShape d = lib::default_softmax_shape(*b.backend, cols);
          shape = lib::SoftmaxShape{workgroup.value_or(d.workgroup), lanes.value_or(d.lanes)};
        }
        Choosing choosing(tune, retune);
        std::shared_ptr<gpu::DeviceBuffer> out;
        {
          nb::gil_scoped_release release;
          out = lib::softmax(*b.backend, x.buffer, rows, cols, shape, choosing.options);
        }
        choosing.tell(report);
        return PyDeviceArray{std::move(out), x.shape};  // x's shape: the rows are along its last axis
      },
      "backend"_a, "x"_a, "rows"_a, "cols"_a, "workgroup"_a.none(), "lanes"_a.none(), "tune"_a.none(), "retune"_a,
      "report"_a.none());
}

}  // namespace vyre::python
