// Parsing JSON text into a small document tree, with limits: a size cap, a
// nesting cap checked while parsing (deep input never recurses), duplicate
// keys refused, and every number kept as its source text, so that an f32
// literal is rounded once, from the decimal, and never through a double.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vyre/json.hpp"

namespace vyre::json_detail {

struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  std::string text;  // a string's value, or a number's source text
  std::vector<Value> items;
  std::vector<std::pair<std::string, Value>> members;  // in document order

  // Declared here, defined where Value is complete: clang before 16 would
  // otherwise instantiate the members' constexpr destructor inside the
  // class, on std::pair of an incomplete Value, and refuse it.
  Value();
  Value(const Value&);
  Value(Value&&) noexcept;
  Value& operator=(const Value&);
  Value& operator=(Value&&) noexcept;
  ~Value();

  const Value* find(std::string_view key) const;
};

std::string_view kind_name(Value::Kind kind);

// Throws ProgramError with one diagnostic saying where the text is wrong.
Value parse_document(std::string_view text, const JsonLimits& limits);

}  // namespace vyre::json_detail
