#include "device_array.hpp"

namespace vyre::python {

nb::tuple PyDeviceArray::shape_tuple() const {
  if (shape.empty()) return nb::make_tuple(buffer->elements());
  nb::list extents;
  for (size_t d : shape) extents.append(d);
  return nb::tuple(extents);
}

nb::object PyDeviceArray::numpy() const {
  std::vector<uint8_t> bytes;
  {
    nb::gil_scoped_release release;
    bytes = buffer->read();
  }
  nb::object array = owned_array(std::move(bytes), buffer->type());
  return shape.empty() ? array : array.attr("reshape")(shape_tuple());
}

nb::dlpack::dtype dlpack_of(ScalarType t) {
  switch (t) {
    case ScalarType::I32: return nb::dtype<int32_t>();
    case ScalarType::F32: return nb::dtype<float>();
    case ScalarType::U8: return nb::dtype<uint8_t>();
    case ScalarType::I8: return nb::dtype<int8_t>();
    case ScalarType::U16: return nb::dtype<uint16_t>();
    case ScalarType::I16: return nb::dtype<int16_t>();
    case ScalarType::F16: return {static_cast<uint8_t>(nb::dlpack::dtype_code::Float), 16, 1};
    case ScalarType::F64: return nb::dtype<double>();
    case ScalarType::Bool: return nb::dtype<bool>();
    default: return nb::dtype<uint32_t>();
  }
}

nb::object owned_array(std::vector<uint8_t>&& bytes, ScalarType type) {
  auto* holder = new std::vector<uint8_t>(std::move(bytes));
  nb::capsule owner(holder, [](void* p) noexcept { delete static_cast<std::vector<uint8_t>*>(p); });
  size_t shape[1] = {holder->size() / element_bytes(type)};
  return nb::ndarray<nb::numpy>(holder->data(), 1, shape, owner, nullptr, dlpack_of(type)).cast();
}

}  // namespace vyre::python
