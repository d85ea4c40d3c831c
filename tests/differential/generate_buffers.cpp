// The dispatch shape and the buffers of a generated program, their inputs
// and how each output is compared.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>

#include "differential/element_values.hpp"
#include "differential/program_generator.hpp"

namespace vyre::differential::detail {
namespace {

constexpr std::array<Dim3, 18> kWorkgroupSizes{{{1, 1, 1},
                                               {4, 1, 1},
                                               {8, 1, 1},
                                               {2, 2, 1},
                                               {3, 1, 1},
                                               {16, 1, 1},
                                               {2, 2, 2},
                                               {5, 3, 1},
                                               {1, 4, 1},
                                               {1, 1, 3},
                                               {32, 1, 1},
                                               {64, 1, 1},
                                               {7, 2, 1},
                                               {1, 2, 4},
                                               {6, 1, 1},
                                               {4, 4, 1},
                                               {128, 1, 1},
                                               {16, 8, 1}}};

// Names that a naive lowering would clash with WGSL keywords, builtins or
// its own helpers.
constexpr std::array<const char*, 24> kBufferNames{"a",     "b",      "out",  "data", "tile", "acc",   "hist", "src",
                                                   "dst",   "x",      "var",  "loop", "fn",   "main",  "array", "u32",
                                                   "f32",   "select", "let",  "vyre", "vyre_lengths", "b_a", "l_x", "_"};

uint32_t product(const Dim3& d) { return d[0] * d[1] * d[2]; }

}  // namespace

ProgramGenerator::ProgramGenerator(ChoiceStream& choices, const GeneratorOptions& options)
    : choices_(choices), options_(options) {}

void ProgramGenerator::plan_dispatch() {
  workgroup_ = kWorkgroupSizes[choices_.below(kWorkgroupSizes.size())];
  group_size_ = product(workgroup_);
  program_.workgroup_size = workgroup_;
  // Sometimes the dispatch overrides the program's own size.
  if (choices_.coin(10)) {
    program_.workgroup_size = kWorkgroupSizes[choices_.below(kWorkgroupSizes.size())];
    if (program_.workgroup_size != workgroup_) shader_options_.workgroup_override = workgroup_;
  }
  default_grid_ = choices_.coin(25);
  if (!default_grid_) {
    for (int attempt = 0; attempt < 4; ++attempt) {
      grid_ = {choices_.range(1, 3), choices_.coin(30) ? choices_.range(1, 2) : 1u,
               choices_.coin(20) ? choices_.range(1, 2) : 1u};
      if (product(grid_) * group_size_ <= options_.max_invocations) break;
      grid_ = {1, 1, 1};
    }
    launch_grid_ = grid_;
  }
  // With the default grid, the grid follows the first output's length (set in plan_buffers).
  invocations_ = product(grid_) * group_size_;
}

std::string ProgramGenerator::fresh_buffer_name() {
  for (int attempt = 0; attempt < 6; ++attempt) {
    std::string name = kBufferNames[choices_.below(kBufferNames.size())];
    bool used = false;
    for (const auto& b : buffers_) used = used || b.decl.name == name;
    if (!used) return name;
  }
  return "buf" + std::to_string(buffers_.size());
}

ExactRange ProgramGenerator::pick_exact_range() {
  static const ExactRange kRanges[] = {
      {-16, 16, 1.0 / 16},    {0, 255, 1},        {-1024, 1024, 0.25},     {0.5, 8, 1.0 / 64},
      {-3, 3, 1.0 / 1024},    {1, 65536, 1},      {-1048576, 1048576, 1}, {-8, -0.125, 0.125},
  };
  return kRanges[choices_.below(std::size(kRanges))];
}

F32Class ProgramGenerator::pick_f32_class(bool allow_bounded, bool allow_special) {
  F32Class c;
  const size_t kind = choices_.weighted({6, allow_special ? 3u : 0u, allow_bounded ? 3u : 0u});
  if (kind == 0) {
    c.kind = F32Class::Kind::exact;
    c.range = pick_exact_range();
  } else if (kind == 1) {
    c.kind = F32Class::Kind::special;
    switch (choices_.below(5)) {
      case 0: c.special = {true, true}; break;
      case 1: c.special = {true, false}; break;
      case 2: c.special = {false, true}; break;
      case 3: c.special = {false, false}; break;
      default: c.special = {false, false}; c.zero = false; break;  // finite nonzero normals only
    }
  } else {
    c.kind = F32Class::Kind::bounded;
  }
  return c;
}

BufferInfo& ProgramGenerator::add_buffer(const std::string& name, Access access, ScalarType type, Role role) {
  BufferInfo b;
  b.decl.name = name;
  b.decl.access = access;
  b.decl.type = type;
  b.role = role;
  buffers_.push_back(std::move(b));
  return buffers_.back();
}

void ProgramGenerator::plan_buffers() {
  static const ScalarType kTypes[] = {ScalarType::U32, ScalarType::I32, ScalarType::F32};
  auto any_type = [&] { return kTypes[choices_.below(3)]; };
  auto int_type = [&] { return choices_.coin(50) ? ScalarType::I32 : ScalarType::U32; };
  // Inputs and plain outputs may also hold bytes, half-words or bools
  // (format version 4), packed into words on the GPU.
  static const ScalarType kPacked[] = {ScalarType::U8, ScalarType::I8, ScalarType::U16, ScalarType::I16,
                                       ScalarType::Bool};
  auto storage_type = [&] { return choices_.coin(options_.packed_percent) ? kPacked[choices_.below(5)] : any_type(); };

  // With the default grid the first output (by binding) sets the grid, so it
  // is one whose length need not cover every invocation.
  if (default_grid_) {
    const bool counter = choices_.coin(30);
    const ScalarType type = counter ? int_type() : any_type();  // before the name, as every buffer below
    BufferInfo& first = add_buffer(fresh_buffer_name(), Access::ReadWrite, type, counter ? Role::counter : Role::guarded);
    first.decl.output = true;
    first.length = counter ? choices_.range(1, 8) : choices_.below(3 * workgroup_[0] + 1);
    grid_ = {(first.length + workgroup_[0] - 1) / workgroup_[0], 1, 1};
    invocations_ = product(grid_) * group_size_;
    // Dispatched with that grid written out: the planner takes the default
    // grid only for programs proven element-wise, which these rarely are.
    launch_grid_ = grid_;
  }

  // Outputs.
  const uint32_t outputs = (default_grid_ ? 0 : 1) + choices_.count(default_grid_ ? 4 : 3);
  for (uint32_t i = 0; i < outputs; ++i) {
    const size_t role = choices_.weighted({6, 2, 2});
    if (role == 2) {
      const ScalarType type = int_type();
      BufferInfo& b = add_buffer(fresh_buffer_name(), Access::ReadWrite, type, Role::counter);
      b.length = choices_.range(1, 8);
    } else {
      const ScalarType type = storage_type();
      BufferInfo& b = add_buffer(fresh_buffer_name(), Access::ReadWrite, type, role == 0 ? Role::owned : Role::guarded);
      b.per_owner = choices_.coin(25) ? 2 : 1;
      b.length = role == 0 ? invocations_ * b.per_owner + choices_.below(3)
                           : choices_.below(invocations_ * b.per_owner + 3);
    }
    buffers_.back().decl.output = true;
  }
  // Inputs, a uniform buffer, a read_write buffer nobody writes, owned scratch.
  const uint32_t inputs = choices_.count(3);
  for (uint32_t i = 0; i < inputs; ++i) {
    const ScalarType type = storage_type();
    BufferInfo& b = add_buffer(fresh_buffer_name(), Access::Read, type, Role::input);
    b.length = choices_.coin(5) ? 0 : choices_.range(1, 24);
  }
  if (choices_.coin(40)) {
    const ScalarType type = any_type();
    BufferInfo& b = add_buffer(fresh_buffer_name(), Access::Uniform, type, Role::uniform);
    b.length = choices_.range(1, 9);
  }
  if (choices_.coin(15)) {
    const ScalarType type = any_type();
    BufferInfo& b = add_buffer(fresh_buffer_name(), Access::ReadWrite, type, Role::stable);
    b.length = choices_.range(1, 16);
  }
  if (choices_.coin(25)) {
    const ScalarType type = any_type();
    BufferInfo& b = add_buffer(fresh_buffer_name(), Access::ReadWrite, type, Role::owned);
    b.per_owner = choices_.coin(25) ? 2 : 1;
    b.length = invocations_ * b.per_owner + choices_.below(2);
  }
  // Storage that each workgroup shares through storage barriers, in one slice per workgroup.
  if (choices_.coin(20)) {
    const ScalarType type = any_type();
    BufferInfo& b = add_buffer(fresh_buffer_name(), Access::ReadWrite, type, Role::group_shared);
    b.per_owner = choices_.coin(25) ? 2 : 1;
    b.length = invocations_ * b.per_owner + choices_.below(2);
    b.decl.output = choices_.coin(50);
  }
  // Workgroup memory.
  const uint32_t workgroup_buffers = choices_.count(3);
  for (uint32_t i = 0; i < workgroup_buffers; ++i) {
    const ScalarType type = any_type();
    BufferInfo& b = add_buffer(fresh_buffer_name(), Access::Workgroup, type, Role::workgroup);
    b.per_owner = choices_.coin(25) ? 2 : 1;
    b.length = group_size_ * b.per_owner + choices_.below(3);
  }

  // Per-buffer details: atomics, f32 classes, fixed counts, initial contents.
  for (auto& b : buffers_) {
    const bool integer = b.decl.type != ScalarType::F32;
    const bool word_integer = b.decl.type == ScalarType::U32 || b.decl.type == ScalarType::I32;  // atomics' types
    switch (b.role) {
      case Role::counter:
        b.atomic = true;
        b.family = static_cast<Family>(choices_.below(6));
        break;
      case Role::owned:
      case Role::workgroup:
      case Role::group_shared:
        b.atomic = word_integer && choices_.coin(35);
        break;
      default: break;
    }
    if (!integer) {
      const bool output = b.decl.output;
      b.f32 = pick_f32_class(output && (b.role == Role::owned || b.role == Role::guarded), true);
    }
    if (b.f32.kind == F32Class::Kind::bounded) b.imprecise = static_cast<Imprecise>(choices_.below(17));
    // Fixed counts: always for uniform and workgroup buffers, sometimes for the others.
    const bool fixed = b.role == Role::uniform || b.role == Role::workgroup || (b.length > 0 && choices_.coin(25));
    if (fixed) b.decl.count = b.length;
    switch (b.role) {
      case Role::input:
      case Role::uniform:
      case Role::stable: b.given_contents = true; break;
      case Role::workgroup: break;
      default: b.given_contents = choices_.coin(40); break;
    }
    // Workgroup memory and read_write buffers given no contents start as
    // zeros: their domain must hold zero.
    if (b.decl.type == ScalarType::F32 && (b.role == Role::workgroup || !b.given_contents)) {
      b.f32.range.lo = std::min(b.f32.range.lo, 0.0);
      b.f32.range.hi = std::max(b.f32.range.hi, 0.0);
      b.f32.zero = true;
    }
  }
  assign_bindings();
  // Declaration order is not identity: shuffle it.
  for (size_t i = buffers_.size(); i > 1; --i) std::swap(buffers_[i - 1], buffers_[choices_.below(i)]);
}

void ProgramGenerator::assign_bindings() {
  std::vector<BufferInfo*> bound;
  for (auto& b : buffers_)
    if (b.role != Role::workgroup) bound.push_back(&b);
  std::vector<uint32_t> free;
  for (uint32_t i = 0; i < 12; ++i) free.push_back(i);
  std::vector<uint32_t> bindings;
  for (size_t k = 0; k < bound.size(); ++k) {
    // The largest binding the format allows, now and then.
    if (choices_.coin(3) && std::find(bindings.begin(), bindings.end(), 999u) == bindings.end()) {
      bindings.push_back(999);
      continue;
    }
    const size_t i = choices_.below(static_cast<uint32_t>(free.size()));
    bindings.push_back(free[i]);
    free.erase(free.begin() + static_cast<long>(i));
  }
  if (default_grid_) {
    // bound[0] sizes the default grid: it must be the output with the lowest binding.
    size_t lowest = 0;
    for (size_t k = 0; k < bound.size(); ++k)
      if (bound[k]->decl.output && bindings[k] < bindings[lowest]) lowest = k;
    std::swap(bindings[0], bindings[lowest]);
  }
  for (size_t k = 0; k < bound.size(); ++k) bound[k]->decl.binding = bindings[k];
}

uint32_t ProgramGenerator::content_bits(const BufferInfo& b) {
  if (b.decl.type == ScalarType::Bool) return choices_.coin(50) ? 1u : 0u;
  if (b.decl.type != ScalarType::F32)
    return element_value(b.decl.type, pick_integer_bits(choices_, value_type(b.decl.type)));
  switch (b.f32.kind) {
    case F32Class::Kind::exact: return std::bit_cast<uint32_t>(pick_exact_f32(choices_, b.f32.range));
    case F32Class::Kind::special:
      if (!b.f32.zero) return pick_normal_f32_bits(choices_);
      return pick_special_f32_bits(choices_, b.f32.special);
    case F32Class::Kind::bounded: break;
  }
  // Bounded outputs are never read: their initial contents only show where nothing is stored.
  return std::bit_cast<uint32_t>(static_cast<float>(choices_.below(64)) / 4.0f);
}

void ProgramGenerator::fill_contents(GeneratedCase& out) {
  for (const auto& b : buffers_) {
    if (b.role == Role::workgroup) continue;
    if (b.given_contents) {
      std::vector<uint32_t> values(b.length);
      for (auto& v : values) v = content_bits(b);
      out.contents[b.decl.name] = std::move(values);
    } else if (b.decl.runtime_sized()) {
      out.sizes[b.decl.name] = b.length;
    }
    if ((b.role == Role::input || b.role == Role::stable) && b.decl.runtime_sized() && b.length > 0)
      out.shortenable.insert(b.decl.name);
  }
}

std::string describe(const F32Class& c) {
  switch (c.kind) {
    case F32Class::Kind::exact: {
      char text[128];
      std::snprintf(text, sizeof text, "exact: multiples of %g in [%g, %g]", c.range.quantum, c.range.lo, c.range.hi);
      return text;
    }
    case F32Class::Kind::special:
      return std::string("any f32") + (c.special.nan_inf ? "" : " but NaN and infinities") +
             (c.special.subnormal ? "" : (c.special.nan_inf ? " but subnormals" : ", subnormals")) +
             (c.zero ? "" : ", zeros");
    case F32Class::Kind::bounded: return "results of an imprecise operation, never read";
  }
  return "";
}

void ProgramGenerator::set_compare_rules(GeneratedCase& out) {
  for (const auto& b : buffers_)
    if (b.decl.type == ScalarType::F32) {
      out.domains[b.decl.name] = describe(b.f32);
      const bool zero = b.f32.kind == F32Class::Kind::exact ? b.f32.range.contains_zero() : b.f32.zero;
      if (!zero) out.zero_free.insert(b.decl.name);
    }
  for (const auto& b : buffers_) {
    if (!b.decl.output) continue;
    CompareRule rule = b.rule;  // bounded outputs: the bound, gathered as their values were made
    if (b.decl.type == ScalarType::F32)
      rule.kind = b.f32.kind == F32Class::Kind::bounded ? CompareRule::Kind::f32_bounded : CompareRule::Kind::f32_bits;
    out.compare[b.decl.name] = rule;
  }
}

}  // namespace vyre::differential::detail
