#include "dispatch/plan.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <variant>

#include "util/concat.hpp"
#include "vyre/error.hpp"

namespace vyre {
namespace {


[[noreturn]] void refuse(const std::string& message) { throw Error(ErrorKind::invalid_input, message); }

std::string describe(const Buffer& b) {
  std::string s = "'" + b.name + "' (";
  if (b.binding) s += concat("binding ", std::to_string(*b.binding), ", ");
  s += std::string(to_string(b.access)) + " " + std::string(to_string(b.type));
  if (b.count != 0) s += concat("[", std::to_string(b.count), "]");
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
  const uint32_t size = element_bytes(b.type);
  if (bytes.size() % size != 0)
    refuse("input for " + describe(b) + " has " + std::to_string(bytes.size()) + " bytes, not a whole number of " +
           std::to_string(size) + "-byte " + std::string(to_string(b.type)) + " elements");
  const uint64_t elements = bytes.size() / size;
  if (elements > std::numeric_limits<uint32_t>::max())
    refuse("input for " + describe(b) + " has " + std::to_string(elements) +
           " elements; a buffer holds at most 4294967295");
  if (b.count != 0 && elements != b.count)
    refuse("input for " + describe(b) + " has " + std::to_string(elements) + " elements; the program fixes " +
           std::to_string(b.count));
  return static_cast<uint32_t>(elements);
}

// u32 values are the words of any buffer of 4-byte elements (exact f32 bits,
// NaN payloads included); other values must be the buffer's own type (a u8
// buffer takes uint8_t, never words of four elements).
bool fits_type(ScalarType given, ScalarType buffer) {
  return given == buffer || (given == ScalarType::U32 && element_bytes(buffer) == 4);
}

std::string type_mismatch(const Buffer& b, ScalarType given, bool on_device) {
  return "input for " + describe(b) + (on_device ? " is a DeviceBuffer of " : " is given as ") +
         std::string(to_string(given)) + " elements; the buffer holds " + std::string(to_string(b.type)) +
         (on_device ? ""
          : element_bytes(b.type) == 4
              ? ": give " + std::string(to_string(b.type)) + " values (or its bits as u32 values)"
              : ": give " + std::string(to_string(b.type)) + " values, " + std::to_string(element_bytes(b.type)) +
                    " byte(s) each");
}

void plan_buffer(const Buffer& b, const Inputs::Entry* entry, BufferPlan& plan) {
  plan.buffer = &b;
  plan.elements = b.count;
  plan.initial = {};
  plan.device = nullptr;
  plan.entry = entry;
  if (entry != nullptr && entry->type && !fits_type(*entry->type, b.type))
    refuse(type_mismatch(b, *entry->type, entry->on_device()));
  if (entry != nullptr && entry->on_device()) {
    if (b.access == Access::Uniform)
      refuse("input for " + describe(b) + " is a DeviceBuffer; a uniform takes host values: read() it and give "
             "its contents");
    const uint64_t bytes = entry->device->size_bytes();
    const uint32_t size = element_bytes(b.type);
    if (bytes % size != 0 || bytes / size > std::numeric_limits<uint32_t>::max())
      refuse("DeviceBuffer for " + describe(b) + " has " + std::to_string(bytes) + " bytes, not a whole number of " +
             std::to_string(size) + "-byte elements below 2^32");
    plan.elements = static_cast<uint32_t>(bytes / size);
    if (b.count != 0 && plan.elements != b.count)
      refuse("DeviceBuffer for " + describe(b) + " has " + std::to_string(plan.elements) +
             " elements; the program fixes " + std::to_string(b.count));
    plan.device = entry->device.get();
    return;
  }
  if (entry != nullptr && entry->has_contents()) {
    plan.elements = elements_of_contents(b, entry->contents());
    plan.initial = entry->contents();
    return;
  }
  if (needs_contents(b))
    refuse(std::string(entry ? "a size alone is not enough for " : "missing input for ") + describe(b) +
           ": give its contents");
  if (entry != nullptr) {
    if (b.count != 0 && *entry->elements != b.count)
      refuse("size " + std::to_string(*entry->elements) + " given for " + describe(b) +
             "; the program fixes its count at " + std::to_string(b.count));
    plan.elements = *entry->elements;
    return;
  }
  if (b.runtime_sized())
    refuse("runtime-sized " + std::string(b.output ? "output" : "buffer") + " '" + b.name +
           "' needs a length: give its contents or a size (" +
           in_caller_terms("Inputs::size(\"" + b.name + "\", n)", "--size " + b.name + "=N",
                           "sizes={\"" + b.name + "\": n}") + ")");
  // fixed-count read_write buffer, zero-filled
}

// One DeviceBuffer bound twice where one binding writes it is a data race the
// GPU API refuses.
void refuse_written_aliases(const std::vector<BufferPlan>& buffers) {
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].device == nullptr) continue;
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      if (buffers[j].device != buffers[i].device) continue;
      const bool written = buffers[i].buffer->access == Access::ReadWrite || buffers[j].buffer->access == Access::ReadWrite;
      if (written)
        refuse("one DeviceBuffer is bound to both '" + buffers[i].buffer->name + "' and '" + buffers[j].buffer->name +
               "', and the program writes one of them: give each written buffer a DeviceBuffer of its own");
    }
  }
}

// What to give instead of the default grid, in the caller's words.
std::string launch_remedy() {
  return in_caller_terms("give a launch domain (Inputs::dim, the invocations to run) or a grid (the dispatch's grid "
                         "argument)",
                         "give --dim X[,Y,Z] (the invocations to run) or --grid X,Y,Z (workgroups)",
                         "give dim= (the invocations to run, n or (x, y, z)) or grid= (workgroups)");
}

// The program's declared domain over its buffer of `elements` elements: flat
// along x, or in the declared row-major shape (x along the last extent). The
// checker has proven a shape's product equals the buffer's fixed count.
Dim3 declared_domain(const Program& program, uint32_t elements) {
  const auto& shape = program.domain_shape;
  if (shape.empty()) return Dim3{elements, 1, 1};
  if (shape.size() == 2) return Dim3{shape[1], shape[0], 1};
  return Dim3{shape[2], shape[1], shape[0]};
}

uint32_t groups_for(uint64_t invocations, uint32_t workgroup) {
  return static_cast<uint32_t>((invocations + workgroup - 1) / workgroup);
}

// lavapipe counts a dispatch's workgroups in 32 bits: with 2^32 or more it
// runs some other number of them and returns wrong results, silently. No
// real program needs that many, so every device refuses it alike.
void refuse_oversized_grid(const Dim3& grid) {
  const uint64_t xy = uint64_t{grid[0]} * grid[1];  // fits: both below 2^32
  if (xy == 0 || grid[2] <= kMaxWorkgroupsPerDispatch / xy) return;
  refuse("grid " + dim3_text(grid) +
         " has more than " + std::to_string(kMaxWorkgroupsPerDispatch) +
         " workgroups, the most one dispatch may have on any device. Use a larger workgroup size, several elements "
         "per invocation (a grid-stride loop), or several dispatches.");
}

}  // namespace

DispatchPlanner::DispatchPlanner(const CheckedProgram& program, const ShaderOptions& options)
    : program_(program),
      workgroup_size_(effective_workgroup_size(program, options)),
      fixed_lengths_(checked_fixed_lengths(program, options)),
      default_grid_(prove_default_grid(program, options)) {}

Dim3 DispatchPlanner::default_grid(const DispatchPlan& plan) const {
  const Program& program = program_.program();
  // The buffers are in canonical order, so the first output found is the first by binding.
  const auto& buffers = plan.buffers;
  auto first_output = std::find_if(buffers.begin(), buffers.end(), [](const BufferPlan& p) { return p.buffer->output; });
  if (first_output == buffers.end())
    refuse(label(program) + " has no output buffer to size a default grid from: " + launch_remedy());
  // Messages are made on refusal only: a warm dispatch allocates nothing.
  auto given_neither = [&] { return label(program) + " is given neither a launch domain nor a grid, and "; };
  if (!default_grid_.proven)
    refuse(given_neither() + "one invocation per element of its first output '" + first_output->buffer->name +
           "' may leave part of its data undone: " + default_grid_.why_not + ". To run every invocation it needs, " +
           launch_remedy());
  const Dim3 grid{groups_for(first_output->elements, workgroup_size_[0]), 1, 1};
  const uint64_t runs = uint64_t{grid[0]} * workgroup_size_[0];
  auto elements = [&](uint32_t index) {
    for (const BufferPlan& p : buffers)
      if (p.buffer == &program.buffers[index]) return uint64_t{p.elements};
    return uint64_t{0};
  };
  for (const auto& checks : default_grid_.store_checks) {
    if (std::any_of(checks.begin(), checks.end(), [&](uint32_t b) { return elements(b) <= runs; })) continue;
    const std::string& name = program.buffers[checks.back()].name;
    refuse(given_neither() + "the default grid (" + std::to_string(runs) + " invocations, from its first output '" +
           first_output->buffer->name + "') stops before `i < len(" + name + ")` does (" +
           std::to_string(elements(checks.back())) + " elements), so part of the data would be left undone. " +
           "To run every invocation it needs, " + launch_remedy());
  }
  return grid;
}

void DispatchPlanner::plan(const Inputs& inputs, const std::optional<Dim3>& grid, DispatchPlan& out) const {
  const Program& program = program_.program();
  const std::vector<const Buffer*>& bound = program_.bound_buffers();
  // Each input entry names one bound buffer, and no buffer twice.
  out.buffers.resize(bound.size());
  for (auto& p : out.buffers) p.entry = nullptr;
  for (const auto& entry : inputs.entries()) {
    const Buffer* b = resolve(program, entry.buffer);
    if (b == nullptr)
      refuse("no buffer " + describe(entry.buffer) + " in " + label(program) + "; its buffers: " +
             list_buffers(program));
    if (b->access == Access::Workgroup)
      refuse("'" + b->name + "' is a workgroup buffer: it lives on the GPU only and takes no input");
    const size_t i = std::find(bound.begin(), bound.end(), b) - bound.begin();
    if (out.buffers[i].entry != nullptr)
      refuse("input for " + describe(*b) + " is given twice (by name and by binding)");
    out.buffers[i].entry = &entry;
  }

  out.workgroup_size = workgroup_size_;
  for (size_t i = 0; i < bound.size(); ++i) plan_buffer(*bound[i], out.buffers[i].entry, out.buffers[i]);
  refuse_written_aliases(out.buffers);
  for (const auto& fixed : fixed_lengths_) {
    auto it = std::find_if(out.buffers.begin(), out.buffers.end(),
                           [&fixed](const BufferPlan& p) { return p.buffer->name == fixed.first; });
    if (it->elements != fixed.second)
      refuse(describe(*it->buffer) + " has " + std::to_string(it->elements) + " elements; the shader was specialized for " +
             std::to_string(fixed.second) + " (ShaderOptions::fixed_lengths): dispatch it with that length, or compile "
             "without the specialization");
  }

  out.domain = inputs.domain();
  if (!out.domain && !grid && !program.domain.empty()) {  // the declared domain (format version 2)
    for (const BufferPlan& p : out.buffers)
      if (p.buffer->name == program.domain) out.domain = declared_domain(program, p.elements);
  }
  if (out.domain) {
    if (grid)
      refuse(label(program) + " is given both a launch domain and a grid: " +
             in_caller_terms("give one (Inputs::dim or the grid argument)", "give --dim or --grid, not both",
                             "give dim= or grid=, not both"));
    for (size_t a = 0; a < 3; ++a) out.grid[a] = groups_for((*out.domain)[a], workgroup_size_[a]);
  } else {
    out.grid = grid ? *grid : default_grid(out);
  }
  refuse_oversized_grid(out.grid);
}

void resolve_output_views(const Program& program, const DispatchPlan& plan, const OutputViews& views,
                          std::vector<std::span<uint8_t>>& destinations) {
  const auto& entries = views.entries();
  for (size_t v = 0; v < entries.size(); ++v) {
    const auto& view = entries[v];
    const Buffer* b = resolve(program, view.buffer);
    auto it = std::find_if(plan.buffers.begin(), plan.buffers.end(), [&](const BufferPlan& p) { return p.buffer == b; });
    if (b == nullptr || it == plan.buffers.end())
      refuse("no buffer " + describe(view.buffer) + " to read an output into in " + label(program) +
             "; its buffers: " + list_buffers(program));
    if (!b->output)
      refuse("an output view is given for " + describe(*b) + ", which is not an output; only outputs are read back");
    for (size_t earlier = 0; earlier < v; ++earlier)
      if (resolve(program, entries[earlier].buffer) == b)
        refuse("output view for " + describe(*b) + " is given twice (by name and by binding)");
    if (view.type && !fits_type(*view.type, b->type))
      refuse("output view for " + describe(*b) + " holds " + std::string(to_string(*view.type)) +
             " elements; the buffer holds " + std::string(to_string(b->type)));
    const uint64_t bytes = uint64_t{it->elements} * element_bytes(b->type);
    if (view.bytes.size() != bytes)
      refuse("output view for " + describe(*b) + " has " + std::to_string(view.bytes.size()) +
             " bytes; this dispatch's output has " + std::to_string(it->elements) + " elements (" +
             std::to_string(bytes) + " bytes): give a view of exactly that size");
    destinations[static_cast<size_t>(it - plan.buffers.begin())] = view.bytes;
  }
}

DispatchPlan plan_dispatch(const CheckedProgram& program, const ShaderOptions& options, const Inputs& inputs,
                           const std::optional<Dim3>& grid) {
  DispatchPlan plan;
  DispatchPlanner(program, options).plan(inputs, grid, plan);
  return plan;
}

}  // namespace vyre
