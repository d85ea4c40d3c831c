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
