#include "differential/reproducer_files.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "differential/element_values.hpp"
#include "ir/json_document.hpp"
#include "util/f32_text.hpp"
#include "vyre/error.hpp"
#include "vyre/json.hpp"

namespace vyre::differential {
namespace {

namespace fs = std::filesystem;
using json_detail::Value;

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

std::string value_text(ScalarType type, uint32_t bits) {
  switch (value_type(type)) {
    case ScalarType::I32: return std::to_string(static_cast<int32_t>(bits));
    case ScalarType::F32: {
      const float f = std::bit_cast<float>(bits);
      return f32_needs_word(f) ? "\"" + format_f32(f) + "\"" : format_f32(f);
    }
    default: return std::to_string(bits);
  }
}

std::string values_text(ScalarType type, const std::vector<uint32_t>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + value_text(type, values[i]);
  return out + "]";
}

std::string outputs_text(const Program& p, const Outputs& outputs, const std::string& indent) {
  std::string out = "{";
  bool first = true;
  for (const Buffer* b : canonical_buffer_order(p)) {
    if (!b->output || !outputs.has(b->name)) continue;
    out += (first ? "\n" : ",\n") + indent + "  " + quoted(b->name) + ": " +
           values_text(b->type, element_values_of(b->type, outputs.bytes(b->name)));
    first = false;
  }
  return out + (first ? "}" : "\n" + indent + "}");
}

std::string dim3_text(const Dim3& d) {
  return "[" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + "]";
}

std::string rule_name(CompareRule::Kind k) {
  switch (k) {
    case CompareRule::Kind::exact: return "exact";
    case CompareRule::Kind::f32_bits: return "f32_bits";
    case CompareRule::Kind::f32_bounded: return "f32_bounded";
  }
  return "exact";
}

std::string number_text(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw Error(ErrorKind::io, "cannot write " + path.string());
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::io, "cannot read " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ---- reading ----

[[noreturn]] void bad(const fs::path& file, const std::string& what) {
  throw Error(ErrorKind::invalid_input, file.string() + ": " + what);
}

uint32_t value_bits(ScalarType type, const Value& v, const fs::path& file) {
  if (v.kind != Value::Kind::Number && v.kind != Value::Kind::String) bad(file, "a value must be a number or a string");
  if (type == ScalarType::F32) {
    float f = 0;
    if (parse_f32(v.text, f) != F32ParseError::none) bad(file, "'" + v.text + "' is not an f32");
    return std::bit_cast<uint32_t>(f);
  }
  if (value_type(type) == ScalarType::I32) {
    int32_t i = 0;
    auto res = std::from_chars(v.text.data(), v.text.data() + v.text.size(), i);
    if (res.ec != std::errc() || res.ptr != v.text.data() + v.text.size()) bad(file, "'" + v.text + "' is not an i32");
    return element_value(type, static_cast<uint32_t>(i));
  }
  uint32_t u = 0;
  auto res = std::from_chars(v.text.data(), v.text.data() + v.text.size(), u);
  if (res.ec != std::errc() || res.ptr != v.text.data() + v.text.size()) bad(file, "'" + v.text + "' is not a u32");
  return element_value(type, u);
}

std::vector<uint32_t> values_of(const Program& p, const std::string& name, const Value& array, const fs::path& file) {
  const Buffer* b = p.find_buffer(name);
  if (!b) bad(file, "no buffer named '" + name + "'");
  if (array.kind != Value::Kind::Array) bad(file, "'" + name + "' must be an array");
  std::vector<uint32_t> out;
  for (const auto& v : array.items) out.push_back(value_bits(b->type, v, file));
  return out;
}

Outputs outputs_of(const Program& p, const Value& object, const fs::path& file) {
  std::map<std::string, std::vector<uint8_t>> out;
  for (const auto& [name, array] : object.members) {
    out[name] = element_bytes_of(p.find_buffer(name)->type, values_of(p, name, array, file));
  }
  return Outputs(std::move(out));
}

double number_of(const Value& v, const fs::path& file) {
  double d = 0;
  auto res = std::from_chars(v.text.data(), v.text.data() + v.text.size(), d);
  if (v.kind != Value::Kind::Number || res.ec != std::errc()) bad(file, "'" + v.text + "' is not a number");
  return d;
}

Dim3 dim3_of(const Value& v, const fs::path& file) {
  if (v.kind != Value::Kind::Array || v.items.size() != 3) bad(file, "expected [x, y, z]");
  Dim3 d{};
  for (size_t i = 0; i < 3; ++i) d[i] = static_cast<uint32_t>(number_of(v.items[i], file));
  return d;
}

fs::path sibling(const fs::path& program_file, const std::string& suffix) {
  fs::path p = program_file;
  p.replace_extension("");
  return p.string() + suffix;
}

}  // namespace

fs::path save_reproducer(const fs::path& folder, const std::string& name, const Reproducer& r) {
  fs::create_directories(folder);
  const Program& p = r.c.program;
  const fs::path program_file = folder / (name + ".json");
  write_text(program_file, program_to_json(p) + "\n");

  // The run file, in `vyre run --inputs` form.
  std::string run = "{\n  \"description\": " + quoted(r.description);
  run += ",\n  \"inputs\": {";
  bool first = true;
  for (const Buffer* b : canonical_buffer_order(p)) {
    auto it = r.c.contents.find(b->name);
    if (it == r.c.contents.end()) continue;
    run += (first ? "\n" : ",\n") + std::string("    ") + quoted(b->name) + ": " + values_text(b->type, it->second);
    first = false;
  }
  run += first ? "}" : "\n  }";
  run += ",\n  \"sizes\": {";
  first = true;
  for (const auto& [buffer, n] : r.c.sizes) {
    run += (first ? "" : ", ") + quoted(buffer) + ": " + std::to_string(n);
    first = false;
  }
  run += "}";
  if (r.c.grid) run += ",\n  \"grid\": " + dim3_text(*r.c.grid);
  if (r.expect) run += ",\n  \"expect\": " + outputs_text(p, *r.expect, "  ");
  std::string tolerance;
  for (const auto& [buffer, rule] : r.c.compare) {
    if (rule.kind != CompareRule::Kind::f32_bounded) continue;
    // ulps * ulp(x) <= ulps * 2^-23 * |x|: a relative bound at least as loose.
    tolerance += (tolerance.empty() ? "" : ", ") + quoted(buffer) + ": {\"abs\": " + number_text(rule.abs) +
                 ", \"rel\": " + number_text(rule.ulps * std::ldexp(1.0, -23)) + "}";
  }
  if (!tolerance.empty()) run += ",\n  \"tolerance\": {" + tolerance + "}";
  run += "\n}\n";
  write_text(sibling(program_file, ".run.json"), run);

  // What the differential tester knows besides.
  std::string found = "{\n  \"seed\": " + std::to_string(r.c.seed);
  if (r.c.options.workgroup_override) found += ",\n  \"workgroup_override\": " + dim3_text(*r.c.options.workgroup_override);
  found += ",\n  \"compare\": {";
  first = true;
  for (const auto& [buffer, rule] : r.c.compare) {
    found += (first ? "\n" : ",\n") + std::string("    ") + quoted(buffer) + ": {\"rule\": " +
             quoted(rule_name(rule.kind));
    if (rule.kind == CompareRule::Kind::f32_bounded)
      found += ", \"abs\": " + number_text(rule.abs) + ", \"ulps\": " + number_text(rule.ulps) +
               ", \"why\": " + quoted(rule.why);
    found += "}";
    first = false;
  }
  found += first ? "}" : "\n  }";
  found += ",\n  \"shortenable\": [";
  first = true;
  for (const auto& buffer : r.c.shortenable) {
    found += (first ? "" : ", ") + quoted(buffer);
    first = false;
  }
  found += "]";
  found += ",\n  \"domains\": {";
  first = true;
  for (const auto& [buffer, text] : r.c.domains) {
    found += (first ? "\n" : ",\n") + std::string("    ") + quoted(buffer) + ": " + quoted(text);
    first = false;
  }
  found += first ? "}" : "\n  }";
  found += ",\n  \"outcome\": " + quoted(r.outcome);
  found += ",\n  \"detail\": " + quoted(r.detail);
  if (r.gpu) found += ",\n  \"gpu\": " + outputs_text(p, *r.gpu, "  ");
  found += "\n}\n";
  write_text(sibling(program_file, ".found.json"), found);
  return program_file;
}

Reproducer load_reproducer(const fs::path& program_file) {
  Reproducer r;
  r.c.program = program_from_json_file(program_file);
  const Program& p = r.c.program;

  const fs::path run_file = sibling(program_file, ".run.json");
  const Value run = json_detail::parse_document(read_text(run_file), JsonLimits{});
  for (const auto& [key, v] : run.members) {
    if (key == "description") {
      r.description = v.text;
    } else if (key == "inputs") {
      for (const auto& [name, array] : v.members) r.c.contents[name] = values_of(p, name, array, run_file);
    } else if (key == "sizes") {
      for (const auto& [name, n] : v.members) r.c.sizes[name] = static_cast<uint32_t>(number_of(n, run_file));
    } else if (key == "grid") {
      r.c.grid = dim3_of(v, run_file);
    } else if (key == "expect") {
      r.expect = outputs_of(p, v, run_file);
    } else if (key != "tolerance") {
      bad(run_file, "unknown key '" + key + "'");
    }
  }

  const fs::path found_file = sibling(program_file, ".found.json");
  const Value found = json_detail::parse_document(read_text(found_file), JsonLimits{});
  for (const auto& [key, v] : found.members) {
    if (key == "seed") {
      r.c.seed = static_cast<uint64_t>(number_of(v, found_file));
    } else if (key == "workgroup_override") {
      r.c.options.workgroup_override = dim3_of(v, found_file);
    } else if (key == "compare") {
      for (const auto& [name, rule] : v.members) {
        CompareRule c;
        const Value* kind = rule.find("rule");
        if (!kind) bad(found_file, "'" + name + "' has no rule");
        if (kind->text == "f32_bits") c.kind = CompareRule::Kind::f32_bits;
        else if (kind->text == "f32_bounded") c.kind = CompareRule::Kind::f32_bounded;
        else if (kind->text != "exact") bad(found_file, "unknown rule '" + kind->text + "'");
        if (const Value* a = rule.find("abs")) c.abs = number_of(*a, found_file);
        if (const Value* u = rule.find("ulps")) c.ulps = number_of(*u, found_file);
        if (const Value* w = rule.find("why")) c.why = w->text;
        r.c.compare[name] = c;
      }
    } else if (key == "shortenable") {
      for (const auto& name : v.items) r.c.shortenable.insert(name.text);
    } else if (key == "domains") {
      for (const auto& [name, text] : v.members) r.c.domains[name] = text.text;
    } else if (key == "outcome") {
      r.outcome = v.text;
    } else if (key == "detail") {
      r.detail = v.text;
    } else if (key == "gpu") {
      r.gpu = outputs_of(p, v, found_file);
    } else {
      bad(found_file, "unknown key '" + key + "'");
    }
  }
  // Outputs without a rule (none in files this tester writes) compare exactly.
  for (const auto& b : p.buffers)
    if (b.output && !r.c.compare.count(b.name)) r.c.compare[b.name] = CompareRule{};
  return r;
}

bool is_reproducer_program(const fs::path& file) {
  const std::string name = file.filename().string();
  auto ends_with = [&](const std::string& s) {
    return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  return ends_with(".json") && !ends_with(".run.json") && !ends_with(".found.json");
}

std::vector<fs::path> list_reproducers(const fs::path& folder) {
  std::vector<fs::path> out;
  if (!fs::is_directory(folder)) return out;
  for (const auto& entry : fs::directory_iterator(folder))
    if (is_reproducer_program(entry.path())) out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace vyre::differential
