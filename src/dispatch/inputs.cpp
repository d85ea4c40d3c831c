#include <algorithm>

#include "vyre/dispatch.hpp"
#include "vyre/error.hpp"

namespace vyre {

Inputs::Entry& Inputs::upsert(BufferRef buffer) {
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.buffer == buffer; });
  if (it != entries_.end()) {
    *it = Entry{};
    it->buffer = std::move(buffer);
    return *it;
  }
  entries_.push_back(Entry{});
  entries_.back().buffer = std::move(buffer);
  return entries_.back();
}

Inputs& Inputs::bytes(BufferRef buffer, std::vector<uint8_t> data) {
  Entry& e = upsert(std::move(buffer));
  e.owned = std::move(data);
  return *this;
}

Inputs& Inputs::view(BufferRef buffer, std::span<const uint8_t> data) {
  Entry& e = upsert(std::move(buffer));
  e.borrowed = data;
  e.is_borrowed = true;
  return *this;
}

Inputs& Inputs::size(BufferRef buffer, uint32_t elements) {
  upsert(std::move(buffer)).elements = elements;
  return *this;
}

const std::vector<uint8_t>& Outputs::bytes(const std::string& name) const {
  auto it = buffers_.find(name);
  if (it == buffers_.end()) throw Error(ErrorKind::invalid_input, "no output buffer named '" + name + "'");
  return it->second;
}

}  // namespace vyre
