// Reading the fields of a record's TOML table (tuning records, shape
// records), keeping the first problem: each reader returns false and names
// the field when it is missing or not what the record needs.
#pragma once

#include <toml++/toml.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

namespace vyre::aot {

struct RecordFields {
  const toml::table& table;
  std::string& problem;

  bool fail(std::string_view name, std::string_view what) {
    if (problem.empty()) problem = "field `" + std::string(name) + "` is missing or not " + std::string(what);
    return false;
  }
  bool text(std::string_view name, std::string& out, size_t longest = SIZE_MAX) {
    auto v = table[name].value<std::string>();
    if (!v || v->size() > longest)
      return fail(name, longest == SIZE_MAX ? "a string" : "a string of at most " + std::to_string(longest) + " bytes");
    out = std::move(*v);
    return true;
  }
  bool flag(std::string_view name, bool& out) {
    const toml::node* n = table.get(name);
    if (n == nullptr || !n->is_boolean()) return fail(name, "a boolean");
    out = n->as_boolean()->get();
    return true;
  }
  bool integer(std::string_view name, int64_t lo, int64_t hi, int64_t& out) {
    const toml::node* n = table.get(name);
    if (n == nullptr || !n->is_integer() || n->as_integer()->get() < lo || n->as_integer()->get() > hi)
      return fail(name, "an integer in range");
    out = n->as_integer()->get();
    return true;
  }
  bool number(std::string_view name, double& out) {
    const toml::node* n = table.get(name);
    if (n == nullptr || !(n->is_floating_point() || n->is_integer())) return fail(name, "a number");
    out = n->is_integer() ? static_cast<double>(n->as_integer()->get()) : n->as_floating_point()->get();
    if (!std::isfinite(out) || out < 0) return fail(name, "a finite number, at least 0");
    return true;
  }
};

}  // namespace vyre::aot
