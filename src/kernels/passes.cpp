#include "kernels/passes.hpp"

#include <string>

#include "vyre/error.hpp"

namespace vyre::lib::detail {

uint32_t groups_for(uint64_t elements, const ReduceShape& shape) {
  const uint64_t per_group = uint64_t{shape.workgroup} * shape.items;
  return static_cast<uint32_t>((elements + per_group - 1) / per_group);
}

Dim3 grid_for(uint32_t groups) {
  constexpr uint32_t kMaxGroupsX = 65535;
  if (groups <= kMaxGroupsX) return {groups, 1, 1};
  return {kMaxGroupsX, (groups + kMaxGroupsX - 1) / kMaxGroupsX, 1};
}

ShapeValues values_of(const ReduceShape& shape) {
  return {{"workgroup", shape.workgroup}, {"items", shape.items}};
}

ReduceShape reduce_shape_of(const ShapeValues& values) { return {values.at(0).second, values.at(1).second}; }

bool accepted(const std::function<void()>& check) {
  try {
    check();
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::vector<ShapeValues> span_candidates(const std::function<bool(const ReduceShape&)>& fits) {
  std::vector<ShapeValues> out;
  for (uint32_t w : {64u, 128u, 256u, 512u})
    for (uint32_t items : {4u, 8u, 16u, 32u})
      if (fits({w, items})) out.push_back(values_of(ReduceShape{w, items}));
  return out;
}

uint32_t element_count(std::string_view primitive, size_t bytes, ScalarType type) {
  const uint32_t size = element_bytes(type);
  if (bytes % size != 0)
    throw Error(ErrorKind::invalid_input, std::string(primitive) + ": " + std::to_string(bytes) +
                                              " bytes are not whole " + std::string(vyre::to_string(type)) +
                                              " elements");
  const uint64_t n = bytes / size;
  if (n > UINT32_MAX)
    throw Error(ErrorKind::limit_exceeded, std::string(primitive) + " takes at most 4294967295 elements, not " +
                                               std::to_string(n));
  return static_cast<uint32_t>(n);
}

}  // namespace vyre::lib::detail
