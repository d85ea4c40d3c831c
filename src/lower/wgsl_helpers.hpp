// The small WGSL functions the lowering calls instead of bare operators,
// where a bare operator would not give the program format's semantics or
// could be rejected at shader creation:
// - integer div/rem: the format defines x/0, x%0 and MIN/-1 for every value;
// - f32 -> integer casts: saturating, NaN -> 0;
// - special f32 values (NaN, infinities, -0, subnormals) have no literal;
// - "opaque" identity functions: WGSL evaluates an expression made only of
//   constants when the shader is created, and rejects overflow, division by
//   zero or an out-of-range constant index there; passing the constants
//   through a function call makes the expression an ordinary runtime one;
// - faster forms of transcendentals within a ULP budget (approximate_forms.hpp);
// - per-buffer functions for uniform arrays (packed four to a 16-byte row)
//   and for a strong compare-exchange on top of WGSL's weak one.
#pragma once

#include <map>
#include <set>
#include <string>

#include "vyre/program.hpp"

namespace vyre::wgsl {

class HelperSet {
 public:
  // Fixed helpers, by name (e.g. "vyre_div_u32"); returns the name.
  const std::string& use(const std::string& name);
  // The uniform-array loader for a buffer; returns its name.
  std::string use_uniform_loader(const std::string& wgsl_buffer, ScalarType type);
  // The strong compare-exchange for an atomic buffer; returns its name.
  std::string use_compare_exchange(const std::string& wgsl_buffer, ScalarType type);
  // A function whose text the caller supplies (an approximate form); once
  // per name.
  void define(const std::string& name, std::string definition);

  // WGSL text of every helper used, in a fixed order.
  std::string definitions() const;

 private:
  std::set<std::string> fixed_;
  std::map<std::string, std::string> generated_;  // name -> definition
};

std::string wgsl_type(ScalarType t);

}  // namespace vyre::wgsl
