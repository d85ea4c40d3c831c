#include "vyre/lib/bincount.hpp"

#include <string>

#include "gpu/kept_pipeline.hpp"
#include "kernels/bin_counts.hpp"
#include "kernels/combine.hpp"
#include "kernels/passes.hpp"
#include "kernels/program_memo.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"

namespace vyre::lib {
namespace {

using namespace vyre::build;

void check(ScalarType type, uint32_t bins, const ReduceShape& shape) {
  if (type != ScalarType::U32 && type != ScalarType::I32 && type != ScalarType::U8 && type != ScalarType::I8 &&
      type != ScalarType::U16 && type != ScalarType::I16)
    throw Error(ErrorKind::invalid_input, "bincount takes u32, i32, u8, i8, u16 or i16 values, not " +
                                              std::string(vyre::to_string(type)));
  if (bins == 0) throw Error(ErrorKind::invalid_input, "bincount needs at least one bin");
  detail::check_shape("bincount", ScalarType::U32, shape, 0);
}

// The bin of value `v`, or `bins` for one outside [0, bins): a signed value
// (loaded as i32) is taken as its bits, so a negative one is 2^31 or more.
Expr bin_of(ScalarType type, Expr v, uint32_t bins) {
  Expr bits = value_type(type) == ScalarType::U32 ? std::move(v) : bitcast(ScalarType::U32, std::move(v));
  return min(std::move(bits), u32(bins));
}

CheckedProgram build_pass(const std::string& name, ScalarType type, uint32_t bins, const ReduceShape& shape) {
  ProgramBuilder builder(name);
  builder.workgroup_size(shape.workgroup)
      .input("values", 0, type)
      .output("counts", 1, ScalarType::U32)
      .output("outside", 2, ScalarType::U32);
  detail::declare_bin_memory(builder, bins);
  return builder
      .body(detail::count_into_bins(bins, shape, [&] {
        return std::vector<Stmt>{let("b", bin_of(type, load("values", var("i")), bins))};
      }))
      .build();
}

const CheckedProgram& checked_pass(ScalarType type, uint32_t bins, const ReduceShape& shape) {
  check(type, bins, shape);
  const std::string name = "bincount_" + std::string(vyre::to_string(type)) + "_b" + std::to_string(bins) + "_w" +
                           std::to_string(shape.workgroup) + "_i" + std::to_string(shape.items);
  return detail::memo_program(name, [&] { return build_pass(name, type, bins, shape); });
}

uint32_t read_one(const std::shared_ptr<gpu::DeviceBuffer>& buffer) { return buffer->read_as<uint32_t>()[0]; }

}  // namespace

Program bincount_pass(ScalarType type, uint32_t bins, const ReduceShape& shape) {
  return checked_pass(type, bins, shape).program();
}

namespace {

// One call with one shape and a number of bins: one dispatch, run and
// waited for; the values outside the bins are counted apart.
gpu::DeviceOutputs count_with(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& values, uint32_t bins,
                              const ReduceShape& shape) {
  gpu::Pipeline pipeline = gpu::detail::kept_pipeline(backend, checked_pass(values->type(), bins, shape));
  const uint32_t groups = detail::groups_for(values->elements(), shape);
  Inputs in;
  in.device("values", values).size("counts", bins).size("outside", 1);
  gpu::Batch batch(backend);
  gpu::DeviceOutputs out = batch.dispatch_resident(pipeline, in, detail::grid_for(groups));
  batch.run();
  return out;
}

detail::TunableFamily family_of(ScalarType type, uint32_t bins, uint64_t elements) {
  return {"bincount " + std::string(vyre::to_string(type)) + " 2^" + std::to_string(detail::log2_ceil(bins)) + " bins",
          detail::size_class_of(elements),
          detail::span_candidates(
              [&](const ReduceShape& s) { return detail::accepted([&] { check(type, bins, s); }); }),
          // Not measured per device yet: reduce's first default.
          detail::values_of(ReduceShape{256, 4})};
}

}  // namespace

std::shared_ptr<gpu::DeviceBuffer> bincount(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& values,
                                            std::optional<uint32_t> bins, const std::optional<ReduceShape>& shape,
                                            const Options& options) {
  if (!values) throw Error(ErrorKind::invalid_input, "bincount: the buffer is null");
  const ScalarType type = values->type();
  const uint32_t n = values->elements();
  check(type, n == 0 ? 1 : bins.value_or(1), shape.value_or(ReduceShape{}));
  // Nothing counted: the bins asked for, none by default (NumPy's).
  if (n == 0) return backend.upload(std::vector<uint32_t>(bins.value_or(0), 0));
  if (!bins) {
    if (value_type(type) == ScalarType::I32) {
      const auto lowest = static_cast<int32_t>(read_one(reduce(backend, values, ReduceOp::Min, std::nullopt, options)));
      if (lowest < 0)
        throw Error(ErrorKind::invalid_input, "bincount counts values from 0; it was given " + std::to_string(lowest));
    }
    const uint32_t highest = read_one(reduce(backend, values, ReduceOp::Max, std::nullopt, options));
    if (highest == UINT32_MAX)
      throw Error(ErrorKind::limit_exceeded, "bincount: the value 4294967295 would need 2^32 bins");
    bins = highest + 1;
  }
  const ReduceShape chosen = detail::choose<ReduceShape>(
      backend, shape, family_of(type, *bins, n), options, detail::values_of, detail::reduce_shape_of,
      [&](const ReduceShape& s) { (void)count_with(backend, values, *bins, s); });
  const gpu::DeviceOutputs out = count_with(backend, values, *bins, chosen);
  if (const uint32_t outside = read_one(out.get("outside")); outside != 0)
    throw Error(ErrorKind::invalid_input, "bincount: " + std::to_string(outside) + " of the " + std::to_string(n) +
                                              " values are not in [0, " + std::to_string(*bins) +
                                              "): give more bins, or none to count up to the largest value");
  return out.get("counts");
}

}  // namespace vyre::lib
