#include "dispatch/plan.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <variant>

#include "vyre/error.hpp"

namespace vyre {
namespace {

constexpr uint64_t kElementBytes = 4;  // u32, i32 and f32 alike

[[noreturn]] void refuse(const std::string& message) { throw Error(ErrorKind::invalid_input, message); }

std::string describe(const Buffer& b) {
  std::string s = "'" + b.name + "' (";
  if (b.binding) s += "binding " + std::to_string(*b.binding) + ", ";
  s += std::string(to_string(b.access)) + " " + std::string(to_string(b.type));
  if (b.count != 0) s += "[" + std::to_string(b.count) + "]";
  if (b.output) s += ", output";
  return s + ")";
}

std::string label(const Program& program) {
  return program.name.empty() ? std::string("the program") : "program '" + program.name + "'";
}

std::string list_buffers(const Program& program) {
  std::string s;
  for (const Buffer* b : canonical_buffer_order(program)) s += (s.empty() ? "" : ", ") + describe(*b);
  return s.empty() ? std::string("none") : s;
}

std::string describe(const BufferRef& ref) {
  if (const auto* name = std::get_if<std::string>(&ref)) return "named '" + *name + "'";
  return "at binding " + std::to_string(std::get<uint32_t>(ref));
}

const Buffer* resolve(const Program& program, const BufferRef& ref) {
  if (const auto* name = std::get_if<std::string>(&ref)) return program.find_buffer(*name);
  const uint32_t binding = std::get<uint32_t>(ref);
  for (const auto& b : program.buffers)
    if (b.access != Access::Workgroup && b.binding == binding) return &b;
  return nullptr;
}

bool needs_contents(const Buffer& b) { return b.access == Access::Read || b.access == Access::Uniform; }

uint32_t elements_of_contents(const Buffer& b, std::span<const uint8_t> bytes) {
  if (bytes.size() % kElementBytes != 0)
    refuse("input for " + describe(b) + " has " + std::to_string(bytes.size()) +
           " bytes, not a whole number of 4-byte " + std::string(to_string(b.type)) + " elements");
  const uint64_t elements = bytes.size() / kElementBytes;
  if (elements > std::numeric_limits<uint32_t>::max())
    refuse("input for " + describe(b) + " has " + std::to_string(elements) +
           " elements; a buffer holds at most 4294967295");
  if (b.count != 0 && elements != b.count)
    refuse("input for " + describe(b) + " has " + std::to_string(elements) + " elements; the program fixes " +
           std::to_string(b.count));
  return static_cast<uint32_t>(elements);
}

BufferPlan plan_buffer(const Buffer& b, const Inputs::Entry* entry) {
  BufferPlan plan{&b, b.count, {}};
  if (entry != nullptr && entry->has_contents()) {
    plan.elements = elements_of_contents(b, entry->contents());
    plan.initial = entry->contents();
    return plan;
  }
  if (needs_contents(b))
    refuse(std::string(entry ? "a size alone is not enough for " : "missing input for ") + describe(b) +
           ": give its contents");
  if (entry != nullptr) {
    if (b.count != 0 && *entry->elements != b.count)
      refuse("size " + std::to_string(*entry->elements) + " given for " + describe(b) +
             "; the program fixes its count at " + std::to_string(b.count));
    plan.elements = *entry->elements;
    return plan;
  }
  if (b.runtime_sized())
    refuse("runtime-sized " + std::string(b.output ? "output" : "buffer") + " '" + b.name +
           "' needs a length: give its contents or a size (--size " + b.name + "=N)");
  return plan;  // fixed-count read_write buffer, zero-filled
}

Dim3 default_grid(const Program& program, const Dim3& workgroup, const std::vector<BufferPlan>& buffers) {
  // `buffers` is in canonical order, so the first output found is the first by binding.
  auto first_output = std::find_if(buffers.begin(), buffers.end(), [](const BufferPlan& p) { return p.buffer->output; });
  if (first_output == buffers.end())
    refuse(label(program) + " has no output buffer to size the grid from: give a grid (DispatchConfig::grid or "
           "--grid X,Y,Z)");
  const uint64_t n = first_output->elements;
  return {static_cast<uint32_t>((n + workgroup[0] - 1) / workgroup[0]), 1, 1};
}

}  // namespace

DispatchPlan plan_dispatch(const Program& program, const DispatchConfig& config, const Inputs& inputs,
                           const std::optional<Dim3>& grid_override) {
  std::vector<const Buffer*> bound;
  for (const Buffer* b : canonical_buffer_order(program))
    if (b->access != Access::Workgroup) bound.push_back(b);

  // Each input entry names one bound buffer, and no buffer twice.
  std::vector<const Inputs::Entry*> entry_of(bound.size(), nullptr);
  for (const auto& entry : inputs.entries()) {
    const Buffer* b = resolve(program, entry.buffer);
    if (b == nullptr)
      refuse("no buffer " + describe(entry.buffer) + " in " + label(program) + "; its buffers: " +
             list_buffers(program));
    if (b->access == Access::Workgroup)
      refuse("'" + b->name + "' is a workgroup buffer: it lives on the GPU only and takes no input");
    const size_t i = std::find(bound.begin(), bound.end(), b) - bound.begin();
    if (entry_of[i] != nullptr)
      refuse("input for " + describe(*b) + " is given twice (by name and by binding)");
    entry_of[i] = &entry;
  }

  DispatchPlan plan;
  plan.workgroup_size = config.workgroup_override.value_or(program.workgroup_size);
  if (std::find(plan.workgroup_size.begin(), plan.workgroup_size.end(), 0u) != plan.workgroup_size.end())
    refuse("workgroup size " + std::to_string(plan.workgroup_size[0]) + "x" + std::to_string(plan.workgroup_size[1]) +
           "x" + std::to_string(plan.workgroup_size[2]) + " has a zero component; each must be at least 1");
  plan.buffers.reserve(bound.size());
  for (size_t i = 0; i < bound.size(); ++i) plan.buffers.push_back(plan_buffer(*bound[i], entry_of[i]));

  if (grid_override) plan.grid = *grid_override;
  else if (config.grid) plan.grid = *config.grid;
  else plan.grid = default_grid(program, plan.workgroup_size, plan.buffers);
  return plan;
}

}  // namespace vyre
