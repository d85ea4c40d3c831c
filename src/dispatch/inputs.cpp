#include <algorithm>

#include "vyre/dispatch.hpp"
#include "vyre/error.hpp"

namespace vyre {

Inputs::Entry& Inputs::upsert(BufferRef buffer) {
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.buffer == buffer; });
  if (it != entries_.end()) {
    // Reset field by field: the entry keeps its name's storage.
    it->owned.clear();
    it->borrowed = {};
    it->is_borrowed = false;
    it->elements.reset();
    it->type.reset();
    it->device.reset();
    return *it;
  }
  entries_.push_back(Entry{});
  entries_.back().buffer = std::move(buffer);
  return entries_.back();
}

Inputs::Entry& Inputs::put_bytes(BufferRef buffer, std::vector<uint8_t> data) {
  Entry& e = upsert(std::move(buffer));
  e.owned = std::move(data);
  return e;
}

Inputs::Entry& Inputs::put_view(BufferRef buffer, std::span<const uint8_t> data) {
  Entry& e = upsert(std::move(buffer));
  e.borrowed = data;
  e.is_borrowed = true;
  return e;
}

Inputs& Inputs::bytes(BufferRef buffer, std::vector<uint8_t> data) {
  put_bytes(std::move(buffer), std::move(data));
  return *this;
}

Inputs& Inputs::view(BufferRef buffer, std::span<const uint8_t> data) {
  put_view(std::move(buffer), data);
  return *this;
}

Inputs& Inputs::size(BufferRef buffer, uint32_t elements) {
  upsert(std::move(buffer)).elements = elements;
  return *this;
}

Inputs& Inputs::device(BufferRef buffer, std::shared_ptr<DeviceContents> contents) {
  if (!contents) throw Error(ErrorKind::invalid_input, "Inputs::device was given no buffer (a null pointer)");
  Entry& e = upsert(std::move(buffer));
  e.type = contents->type();
  e.device = std::move(contents);
  return *this;
}

Inputs& Inputs::dim(Dim3 invocations) {
  domain_ = invocations;
  return *this;
}

OutputViews::Entry& OutputViews::put(BufferRef buffer, std::span<uint8_t> destination) {
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.buffer == buffer; });
  if (it == entries_.end()) {
    entries_.push_back(Entry{std::move(buffer), {}, {}});
    it = entries_.end() - 1;
  }
  it->bytes = destination;
  it->type.reset();
  return *it;
}

OutputViews& OutputViews::bytes(BufferRef buffer, std::span<uint8_t> destination) {
  put(std::move(buffer), destination);
  return *this;
}

const std::vector<uint8_t>& Outputs::bytes(const std::string& name) const {
  auto it = buffers_.find(name);
  if (it == buffers_.end()) throw Error(ErrorKind::invalid_input, "no output buffer named '" + name + "'");
  return it->second;
}

void Outputs::throw_not_whole(const std::string& name, size_t bytes, size_t element_bytes) {
  throw Error(ErrorKind::invalid_input, "output '" + name + "' has " + std::to_string(bytes) +
                                            " bytes, not a whole number of " + std::to_string(element_bytes) +
                                            "-byte elements: read it with bytes()");
}

}  // namespace vyre
