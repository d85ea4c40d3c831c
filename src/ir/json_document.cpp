#include "ir/json_document.hpp"

#include <nlohmann/json.hpp>

#include <optional>

#include "util/concat.hpp"
#include "vyre/error.hpp"

namespace vyre::json_detail {
namespace {

// Builds the tree from nlohmann's SAX events (its parser keeps its own stack
// on the heap, so nesting costs no recursion until our limit stops it).
class Builder {
 public:
  explicit Builder(const JsonLimits& limits) : limits_(limits) {}

  Value root;
  std::optional<Diagnostic> error;

  bool null() { return put(Value{}); }
  bool boolean(bool b) {
    Value v;
    v.kind = Value::Kind::Bool;
    v.boolean = b;
    return put(std::move(v));
  }
  bool number_integer(int64_t n) { return number(std::to_string(n)); }
  bool number_unsigned(uint64_t n) { return number(std::to_string(n)); }
  bool number_float(double, const std::string& text) { return number(text); }
  bool string(std::string& s) {
    Value v;
    v.kind = Value::Kind::String;
    v.text = std::move(s);
    return put(std::move(v));
  }
  bool binary(std::vector<uint8_t>&) { return fail("binary values are not JSON"); }
  bool start_object(size_t) { return open(Value::Kind::Object); }
  bool key(std::string& k) {
    Value& obj = *stack_.back();
    if (obj.find(k)) {
      std::string at = path_here();
      return fail("duplicate key '" + k + "'", at.empty() ? k : at + "." + k);
    }
    pending_key_ = std::move(k);
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(size_t) { return open(Value::Kind::Array); }
  bool end_array() { return close(); }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception& ex) {
    std::string message = ex.what();
    // Drop nlohmann's "[json.exception.parse_error.101] " prefix; keep its line and column.
    if (message.rfind("[json.exception", 0) == 0) {
      if (auto close = message.find("] "); close != std::string::npos) message = message.substr(close + 2);
    }
    error = Diagnostic{"", "malformed JSON: " + message};
    return false;
  }

 private:
  bool fail(std::string message, std::string path = {}) {
    error = Diagnostic{path.empty() ? path_here() : std::move(path), std::move(message)};
    return false;
  }

  std::string path_here() const {
    std::string path;
    for (size_t i = 0; i < stack_.size(); ++i) {
      const Value& v = *stack_[i];
      if (v.kind == Value::Kind::Array) {
        if (i + 1 < stack_.size()) path += concat("[", std::to_string(v.items.size() - 1), "]");
      } else if (v.kind == Value::Kind::Object && !v.members.empty() && i + 1 < stack_.size()) {
        path += (path.empty() ? "" : ".") + v.members.back().first;
      }
    }
    return path;
  }

  // Places a finished value in its parent (or as the root).
  Value* place(Value v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    Value& parent = *stack_.back();
    if (parent.kind == Value::Kind::Array) {
      parent.items.push_back(std::move(v));
      return &parent.items.back();
    }
    parent.members.emplace_back(std::move(pending_key_), std::move(v));
    return &parent.members.back().second;
  }

  bool put(Value v) {
    place(std::move(v));
    return true;
  }

  bool number(std::string text) {
    Value v;
    v.kind = Value::Kind::Number;
    v.text = std::move(text);
    return put(std::move(v));
  }

  bool open(Value::Kind kind) {
    if (stack_.size() >= limits_.max_depth)
      return fail("nested deeper than " + std::to_string(limits_.max_depth) + " levels");
    Value v;
    v.kind = kind;
    stack_.push_back(place(std::move(v)));
    return true;
  }

  bool close() {
    stack_.pop_back();
    return true;
  }

  const JsonLimits& limits_;
  std::vector<Value*> stack_;  // pointers stay valid: a parent's vector only grows after its child closes
  std::string pending_key_;
};

}  // namespace

Value::Value() = default;
Value::Value(const Value&) = default;
Value::Value(Value&&) noexcept = default;
Value& Value::operator=(const Value&) = default;
Value& Value::operator=(Value&&) noexcept = default;
Value::~Value() = default;

const Value* Value::find(std::string_view key) const {
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

std::string_view kind_name(Value::Kind kind) {
  switch (kind) {
    case Value::Kind::Null: return "null";
    case Value::Kind::Bool: return "a boolean";
    case Value::Kind::Number: return "a number";
    case Value::Kind::String: return "a string";
    case Value::Kind::Array: return "an array";
    case Value::Kind::Object: return "an object";
  }
  return "a value";
}

Value parse_document(std::string_view text, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes)
    throw ProgramError({{"", "the document is " + std::to_string(text.size()) + " bytes; the limit is " +
                                 std::to_string(limits.max_bytes)}});
  Builder builder(limits);
  const bool ok = nlohmann::json::sax_parse(text, &builder, nlohmann::json::input_format_t::json, true);
  if (!ok || builder.error) throw ProgramError({builder.error.value_or(Diagnostic{"", "malformed JSON"})});
  return std::move(builder.root);
}

}  // namespace vyre::json_detail
