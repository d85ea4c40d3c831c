// JSON read and write: round trips, exact f32 literals, and clear errors with
// JSON paths for malformed or hostile documents.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "support/programs.hpp"
#include "support/test_support.hpp"
#include "vyre/builder.hpp"
#include "vyre/json.hpp"
#include "vyre/validate.hpp"
#include "vyre/wire.hpp"

using namespace vyre;
using namespace vyre::build;

namespace {

std::vector<Diagnostic> problems(const std::string& text) {
  try {
    program_from_json(text);
  } catch (const ProgramError& e) {
    return e.diagnostics();
  }
  return {};
}

// A minimal valid program with `body` spliced in.
std::string with_body(const std::string& body, const std::string& buffers =
                                                   R"([{"name": "out", "binding": 0, "access": "read_write", "type": "u32", "output": true}])") {
  return R"({"vyre": 1, "workgroup_size": [1, 1, 1], "buffers": )" + buffers + R"(, "body": )" + body + "}";
}

bool has(const std::vector<Diagnostic>& ds, const std::string& path, const std::string& fragment) {
  for (const auto& d : ds)
    if (d.path == path && d.message.find(fragment) != std::string::npos) return true;
  return false;
}

std::string dump(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const auto& d : ds) out += d.path + ": " + d.message + "\n";
  return out;
}

}  // namespace

TEST(Json, ExamplesReadAndRoundTrip) {
  for (const char* name : {"xor", "saxpy", "collatz"}) {
    const Program p = vyre::test::example(name);
    EXPECT_EQ(p.name, name);
    EXPECT_EQ(program_from_json(program_to_json(p)), p) << name;
    EXPECT_EQ(program_from_json(program_to_json(p, -1)), p) << name << " (compact)";
  }
}

TEST(Json, EveryConstructRoundTrips) {
  const Program p = vyre::test::every_construct_program();
  const std::string text = program_to_json(p);
  EXPECT_EQ(program_from_json(text), p) << text;
}

TEST(Json, SpecExampleMatchesBuilder) {
  Program from_json = vyre::test::example("xor");
  EXPECT_EQ(from_json, vyre::test::xor_program());
}

TEST(Json, F32LiteralsKeepTheirBits) {
  const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x3dcccccdu, 0x7f7fffffu,
                               0xff7fffffu, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x3f800001u, 0x4b7fffffu};
  for (uint32_t bits : specials) {
    Program p = ProgramBuilder()
                    .output("out", 0, ScalarType::F32)
                    .body({store("out", u32(0), f32_bits(bits))})
                    .build();
    const Program back = program_from_json(program_to_json(p));
    EXPECT_EQ(back.body[0].exprs[1].imm, bits) << std::hex << bits << "\n" << program_to_json(p);
  }
}

TEST(Json, F32DecimalIsRoundedOnceToNearest) {
  // 0.1 is not exact in f32; the literal must be the f32 nearest to 0.1.
  auto read = [](const std::string& lit) {
    return program_from_json(with_body(R"([{"store": "out", "index": {"u32": 0}, "value": {"f32": )" + lit + "}}]",
                                       R"([{"name": "out", "binding": 0, "access": "read_write", "type": "f32"}])"))
        .program()
        .body[0]
        .exprs[1]
        .imm;
  };
  EXPECT_EQ(read("0.1"), std::bit_cast<uint32_t>(0.1f));
  EXPECT_EQ(read("1"), std::bit_cast<uint32_t>(1.0f));
  EXPECT_EQ(read("-2.5e-3"), std::bit_cast<uint32_t>(-2.5e-3f));
  EXPECT_EQ(read("\"nan\""), 0x7fc00000u);
  EXPECT_EQ(read("\"-inf\""), 0xff800000u);
  // Too small for f32: rounds to zero, keeping the sign.
  EXPECT_EQ(read("-1e-50"), 0x80000000u);
  // A decimal between two floats that a double would round differently:
  // 1.00000005960464477539 is the midpoint of 1 and the next f32 plus a bit.
  EXPECT_EQ(read("1.000000059604644775390626"), 0x3f800001u);
}

TEST(Json, MalformedJsonSaysWhere) {
  auto ds = problems(R"({"vyre": 1, "workgroup_size": [1,1,1], "buffers": [], "body": [}")");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_NE(ds[0].message.find("line 1"), std::string::npos) << ds[0].message;
  EXPECT_NE(ds[0].message.find("malformed JSON"), std::string::npos);
}

TEST(Json, UnknownKeysAreErrorsWithTheirPath) {
  auto ds = problems(with_body(R"([{"store": "out", "index": {"u32": 0}, "value": {"u32": 1}, "extra": 1}])"));
  EXPECT_TRUE(has(ds, "body[0].extra", "unknown key")) << dump(ds);
  ds = problems(R"({"vyre": 1, "workgroup_size": [1,1,1], "buffers": [], "body": [], "color": "blue"})");
  EXPECT_TRUE(has(ds, "color", "unknown key")) << dump(ds);
  ds = problems(with_body("[]", R"([{"name": "out", "binding": 0, "access": "read", "type": "u32", "size": 3}])"));
  EXPECT_TRUE(has(ds, "buffers[0].size", "unknown key")) << dump(ds);
}

TEST(Json, UnknownOperatorNamesItsPath) {
  auto ds = problems(with_body(R"([{"store": "out", "index": {"u32": 0}, "value": {"xor": [{"u32": 1}, {"frob": 2}]}}])"));
  EXPECT_TRUE(has(ds, "body[0].value.xor[1].frob", "unknown operator")) << dump(ds);
}

TEST(Json, MissingKeysAndWrongTypes) {
  auto ds = problems(R"({"vyre": 1, "buffers": [], "body": []})");
  EXPECT_TRUE(has(ds, "", "missing key 'workgroup_size'")) << dump(ds);
  ds = problems(R"({"workgroup_size": [1,1,1], "buffers": [], "body": []})");
  EXPECT_TRUE(has(ds, "", "missing key 'vyre'")) << dump(ds);
  ds = problems(R"({"vyre": 5, "workgroup_size": [1,1,1], "buffers": [], "body": []})");
  EXPECT_TRUE(has(ds, "vyre", "not supported")) << dump(ds);
  ds = problems(R"({"vyre": 0, "workgroup_size": [1,1,1], "buffers": [], "body": []})");
  EXPECT_TRUE(has(ds, "vyre", "not supported")) << dump(ds);
  ds = problems(R"({"vyre": 1, "workgroup_size": "64", "buffers": [], "body": []})");
  EXPECT_TRUE(has(ds, "workgroup_size", "expected an array")) << dump(ds);
  ds = problems(R"({"vyre": 1, "workgroup_size": [1,1], "buffers": [], "body": []})");
  EXPECT_TRUE(has(ds, "workgroup_size", "exactly three")) << dump(ds);
  ds = problems(with_body(R"([{"let": "x", "value": 3}])"));
  EXPECT_TRUE(has(ds, "body[0].value", "expected an expression")) << dump(ds);
  ds = problems(with_body(R"([{"store": "out", "index": {"u32": 0}}])"));
  EXPECT_TRUE(has(ds, "body[0]", "missing key 'value'")) << dump(ds);
  ds = problems(with_body(R"([{"break": false}])"));
  EXPECT_TRUE(has(ds, "body[0].break", "must be true")) << dump(ds);
}

TEST(Json, LiteralsMustFitTheirType) {
  auto lit = [](const std::string& type, const std::string& value) {
    return problems(with_body(R"([{"let": "x", "value": {")" + type + R"(": )" + value + "}}]"));
  };
  EXPECT_TRUE(has(lit("u32", "-1"), "body[0].value.u32", "out of range"));
  EXPECT_TRUE(has(lit("u32", "4294967296"), "body[0].value.u32", "out of range"));
  EXPECT_TRUE(has(lit("u32", "1.5"), "body[0].value.u32", "expected an integer"));
  EXPECT_TRUE(has(lit("u32", "123456789012345678901234567890"), "body[0].value.u32", ""));
  EXPECT_TRUE(has(lit("i32", "2147483648"), "body[0].value.i32", "out of range"));
  EXPECT_TRUE(lit("i32", "-2147483648").empty());
  EXPECT_TRUE(has(lit("f32", "1e39"), "body[0].value.f32", "beyond the f32 range"));
  // nlohmann refuses a number beyond double while parsing: a document-level error.
  EXPECT_TRUE(has(lit("f32", "1e99999"), "", "overflow"));
  EXPECT_TRUE(has(lit("f32", "\"infinity\""), "body[0].value.f32", "\"inf\""));
  EXPECT_TRUE(has(lit("bool", "1"), "body[0].value.bool", "true or false"));
}

TEST(Json, DuplicateKeysAreRefused) {
  auto ds = problems(R"({"vyre": 1, "vyre": 1, "workgroup_size": [1,1,1], "buffers": [], "body": []})");
  EXPECT_TRUE(has(ds, "vyre", "duplicate key")) << dump(ds);
  ds = problems(with_body(R"([{"let": "x", "value": {"u32": 1, "u32": 2}}])"));
  EXPECT_TRUE(has(ds, "body[0].value.u32", "duplicate key")) << dump(ds);
}

TEST(Json, SeveralErrorsAtOnce) {
  auto ds = problems(with_body(
      R"([{"let": "x", "value": {"u32": -1}}, {"store": 5, "index": {"u32": 0}, "value": {"u32": 1}}, {"nope": true}])"));
  EXPECT_GE(ds.size(), 3u) << dump(ds);
  EXPECT_TRUE(has(ds, "body[0].value.u32", "out of range")) << dump(ds);
  EXPECT_TRUE(has(ds, "body[1].store", "expected a name")) << dump(ds);
  EXPECT_TRUE(has(ds, "body[2]", "not a statement")) << dump(ds);
}

TEST(Json, DeepNestingIsRefusedWithoutRecursing) {
  // A million nested arrays: refused at the depth limit, quickly, no crash.
  std::string deep(1'000'000, '[');
  deep += std::string(1'000'000, ']');
  auto ds = problems(deep);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_NE(ds[0].message.find("nested deeper"), std::string::npos) << ds[0].message;

  // Nested expressions past the limit, in a well-formed program.
  std::string e = R"({"u32": 1})";
  for (int i = 0; i < 300; ++i) e = R"({"neg": )" + e + "}";
  ds = problems(with_body(R"([{"let": "x", "value": )" + e + "}]"));
  ASSERT_FALSE(ds.empty());
  EXPECT_NE(ds[0].message.find("nested deeper"), std::string::npos) << ds[0].message;
}

TEST(Json, OversizedDocumentIsRefused) {
  JsonLimits limits;
  limits.max_bytes = 100;
  try {
    program_from_json(std::string(200, ' '), limits);
    FAIL() << "expected an error";
  } catch (const ProgramError& e) {
    EXPECT_NE(std::string(e.what()).find("limit"), std::string::npos);
  }
}

TEST(Json, WrongTypesEverywhereNeverCrash) {
  // Replace each value of the xor example by values of every other JSON type.
  const std::string values[] = {"null", "true", "0", "-1", "1e400", "\"s\"", "[]", "{}", "[[[]]]", "{\"u32\": {}}"};
  const std::string base = vyre::test::read_file(vyre::test::source_path("examples/xor.json"));
  size_t checked = 0;
  for (size_t pos = base.find(':'); pos != std::string::npos; pos = base.find(':', pos + 1)) {
    // Replace the value after this ':' (up to the next ',' '}' or ']' at the same depth, approximately).
    size_t start = pos + 1;
    while (start < base.size() && base[start] == ' ') ++start;
    size_t end = start;
    int depth = 0;
    for (; end < base.size(); ++end) {
      char c = base[end];
      if (c == '[' || c == '{') ++depth;
      if (c == ']' || c == '}') {
        if (depth == 0) break;
        --depth;
      }
      if (c == ',' && depth == 0) break;
    }
    for (const auto& v : values) {
      const std::string mutated = base.substr(0, start) + v + base.substr(end);
      try {
        program_from_json(mutated);
      } catch (const ProgramError& e) {
        EXPECT_FALSE(e.diagnostics().empty());
        for (const auto& d : e.diagnostics()) EXPECT_FALSE(d.message.empty());
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 100u);
}

TEST(Json, EveryTruncationIsAClearError) {
  const std::string text = vyre::test::read_file(vyre::test::source_path("examples/collatz.json"));
  for (size_t n = 0; n + 1 < text.size(); ++n) {
    // Cutting only trailing whitespace leaves a valid document.
    if (text.find_first_not_of(" \n", n) == std::string::npos) break;
    try {
      program_from_json(text.substr(0, n));
      ADD_FAILURE() << "a prefix of " << n << " bytes was accepted";
    } catch (const ProgramError& e) {
      ASSERT_FALSE(e.diagnostics().empty());
      EXPECT_NE(e.diagnostics()[0].message.find("malformed JSON"), std::string::npos) << e.what();
    }
  }
}

TEST(Json, RandomByteMutationsNeverCrash) {
  const std::string text = vyre::test::read_file(vyre::test::source_path("examples/bitonic_sort.json"));
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  size_t accepted = 0;
  for (int round = 0; round < 5000; ++round) {
    std::string mutated = text;
    const int edits = 1 + static_cast<int>(next() % 4);
    for (int i = 0; i < edits; ++i) {
      const size_t at = next() % mutated.size();
      switch (next() % 3) {
        case 0: mutated[at] = static_cast<char>(next()); break;
        case 1: mutated.erase(at, 1 + next() % 8); break;
        default: mutated.insert(at, std::string(1 + next() % 4, "[]{}\",:0-e9x"[next() % 12])); break;
      }
      if (mutated.empty()) mutated = "{";
    }
    try {
      const Program p = program_from_json(mutated);
      EXPECT_TRUE(validate(p).empty());
      ++accepted;
    } catch (const ProgramError& e) {
      EXPECT_FALSE(e.diagnostics().empty());
    }
  }
  SUCCEED() << accepted << " mutated documents were still valid programs";
}

TEST(Json, Version3DeclaresADomainInItsBuffersShape) {
  const std::string body =
      R"("workgroup_size": [8, 8, 1], "buffers": [{"name": "out", "binding": 0, "access": "read_write",
         "type": "u32", "count": 12, "output": true}], "body": [{"store": "out", "index": {"gid": "x"}, "value": {"u32": 1}}]})";
  const CheckedProgram p = program_from_json(R"({"vyre": 3, "domain": {"buffer": "out", "shape": [3, 4]}, )" + body);
  EXPECT_EQ(p.program().domain, "out");
  EXPECT_EQ(p.program().domain_shape, (std::vector<uint32_t>{3, 4}));
  const std::string text = program_to_json(p.program());
  EXPECT_NE(text.find("\"vyre\": 3"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("domain": {"buffer": "out", "shape": [3, 4]})"), std::string::npos) << text;
  EXPECT_EQ(program_from_json(text).program(), p.program());
  // A flat domain in a version-3 file is a version-2 program.
  EXPECT_NE(program_to_json(program_from_json(R"({"vyre": 3, "domain": "out", )" + body).program()).find("\"vyre\": 2"),
            std::string::npos);

  auto ds = problems(R"({"vyre": 2, "domain": {"buffer": "out", "shape": [3, 4]}, )" + body);
  EXPECT_TRUE(has(ds, "domain", "needs format version 3")) << dump(ds);
  ds = problems(R"({"vyre": 3, "domain": {"buffer": "out", "shape": [12]}, )" + body);
  EXPECT_TRUE(has(ds, "domain.shape", "two or three extents")) << dump(ds);
  ds = problems(R"({"vyre": 3, "domain": {"buffer": "out", "shape": [3, 5]}, )" + body);
  EXPECT_TRUE(has(ds, "domain.shape", "covers 15 elements; 'out' has 12")) << dump(ds);
  ds = problems(R"({"vyre": 3, "domain": {"buffer": "out", "shape": [3, 0]}, )" + body);
  EXPECT_TRUE(has(ds, "domain.shape[1]", "out of range")) << dump(ds);
  ds = problems(R"({"vyre": 3, "domain": {"buffer": "out", "shape": [3, 4], "rank": 2}, )" + body);
  EXPECT_TRUE(has(ds, "domain.rank", "unknown key")) << dump(ds);
  std::string runtime = body;
  runtime.replace(runtime.find(R"("count": 12, )"), 13, "");
  ds = problems(R"({"vyre": 3, "domain": {"buffer": "out", "shape": [3, 4]}, )" + runtime);
  EXPECT_TRUE(has(ds, "domain.shape", "runtime-sized")) << dump(ds);
}

TEST(Json, Version4HoldsNarrowAndBoolBuffers) {
  const auto doc = [](int version, const std::string& type) {
    return R"({"vyre": )" + std::to_string(version) + R"(, "workgroup_size": [64, 1, 1], "buffers": [
      {"name": "in", "binding": 0, "access": "read", "type": ")" + type + R"("},
      {"name": "out", "binding": 1, "access": "read_write", "type": ")" + type + R"(", "output": true}],
      "body": [{"let": "i", "value": {"gid": "x"}},
               {"if": {"lt": [{"var": "i"}, {"len": "out"}]},
                "then": [{"store": "out", "index": {"var": "i"}, "value": {"load": "in", "index": {"var": "i"}}}]}]})";
  };
  for (const char* type : {"u8", "i8", "u16", "i16", "bool"}) {
    const CheckedProgram p = program_from_json(doc(4, type));
    EXPECT_EQ(to_string(p.program().buffers[0].type), type);
    EXPECT_EQ(format_version(p.program()), 4u) << type;
    const std::string text = program_to_json(p.program());
    EXPECT_NE(text.find("\"vyre\": 4"), std::string::npos) << text;
    EXPECT_EQ(program_from_json(text).program(), p.program()) << type;
    auto ds = problems(doc(3, type));
    EXPECT_TRUE(has(ds, "buffers[0].type", std::string(type) + " buffers need format version 4")) << dump(ds);
  }
  // A version-4 file of version-1 types is a version-1 program: its bytes and digest are version 1's.
  EXPECT_EQ(format_version(program_from_json(doc(4, "u32")).program()), 1u);
  EXPECT_EQ(digest(program_from_json(doc(4, "u32")).program()), digest(program_from_json(doc(1, "u32")).program()));
  auto ds = problems(doc(4, "u64"));
  EXPECT_TRUE(has(ds, "buffers[0].type", "u32, i32, f32, f16, f64, u8, i8, u16, i16 or bool")) << dump(ds);
}

TEST(Json, Version4LoopsCountByALiteralStep) {
  const auto doc = [](int version, const std::string& loop) {
    return R"({"vyre": )" + std::to_string(version) + R"(, "workgroup_size": [1, 1, 1], "buffers": [
      {"name": "out", "binding": 0, "access": "read_write", "type": "i32", "output": true}],
      "body": [)" + loop + R"(]})";
  };
  const std::string down = R"({"loop": "k", "from": {"i32": 9}, "to": {"i32": -3}, "step": {"i32": -2},
      "body": [{"store": "out", "index": {"u32": 0}, "value": {"var": "k"}}]})";
  const CheckedProgram p = program_from_json(doc(4, down));
  ASSERT_EQ(p.program().body[0].exprs.size(), 3u);
  EXPECT_EQ(format_version(p.program()), 4u);
  const std::string text = program_to_json(p.program());
  EXPECT_NE(text.find("\"step\": {\"i32\": -2}"), std::string::npos) << text;
  EXPECT_EQ(program_from_json(text).program(), p.program());
  auto ds = problems(doc(3, down));
  EXPECT_TRUE(has(ds, "body[0].step", "a loop step needs format version 4")) << dump(ds);

  // A step of 1 is the loop without one: the same program, bytes and digest as version 1's.
  const auto loop = [&](const std::string& from, const std::string& to, const std::string& step) {
    return doc(4, R"({"loop": "k", "from": )" + from + R"(, "to": )" + to + R"(, "step": )" + step + R"(, "body": []})");
  };
  const CheckedProgram one = program_from_json(loop(R"({"i32": 0})", R"({"i32": 4})", R"({"i32": 1})"));
  EXPECT_EQ(one.program().body[0].exprs.size(), 2u);
  EXPECT_EQ(format_version(one.program()), 1u);
  EXPECT_EQ(digest(one.program()),
            digest(program_from_json(doc(1, R"({"loop": "k", "from": {"i32": 0}, "to": {"i32": 4}, "body": []})")).program()));

  ds = problems(loop(R"({"i32": 0})", R"({"i32": 4})", R"({"i32": 0})"));
  EXPECT_TRUE(has(ds, "body[0].step", "a loop step of 0 would never end the loop")) << dump(ds);
  ds = problems(loop(R"({"u32": 0})", R"({"u32": 4})", R"({"i32": -1})"));
  EXPECT_TRUE(has(ds, "body[0].step", "the step is i32 but the loop counts in u32")) << dump(ds);
  ds = problems(loop(R"({"i32": 0})", R"({"i32": 4})", R"({"add": [{"i32": 1}, {"i32": 1}]})"));
  EXPECT_TRUE(has(ds, "body[0].step", "a loop step is a u32 or i32 literal")) << dump(ds);
  ds = problems(loop(R"({"f32": 0})", R"({"f32": 4})", R"({"f32": 0.5})"));
  EXPECT_TRUE(has(ds, "body[0].step", "a loop step is a u32 or i32 literal")) << dump(ds);
}

TEST(Json, Version4DeclaresPrivateArrays) {
  const auto doc = [](int version, const std::string& array) {
    return R"({"vyre": )" + std::to_string(version) + R"(, "workgroup_size": [1, 1, 1], "buffers": [
      {"name": "out", "binding": 0, "access": "read_write", "type": "f32", "output": true}],
      "body": [)" + array + R"(, {"store": "out", "index": {"u32": 0}, "value": {"load": "acc", "index": {"u32": 2}}}]})";
  };
  const std::string acc = R"({"array": "acc", "type": "f32", "count": 16})";
  const CheckedProgram p = program_from_json(doc(4, acc));
  const Stmt& s = p.program().body[0];
  EXPECT_EQ(s.op, StmtOp::Array);
  EXPECT_EQ(s.element_type, ScalarType::F32);
  EXPECT_EQ(s.count, 16u);
  EXPECT_EQ(format_version(p.program()), 4u);
  const std::string text = program_to_json(p.program());
  EXPECT_NE(text.find(acc), std::string::npos) << text;
  EXPECT_EQ(program_from_json(text).program(), p.program());
  auto ds = problems(doc(3, acc));
  EXPECT_TRUE(has(ds, "body[0].array", "a private array needs format version 4")) << dump(ds);
  ds = problems(doc(4, R"({"array": "acc", "type": "u64", "count": 16})"));
  EXPECT_TRUE(has(ds, "body[0].type", "unknown type 'u64'")) << dump(ds);
  ds = problems(doc(4, R"({"array": "acc", "type": "u8", "count": 16})"));
  EXPECT_TRUE(has(ds, "body[0].type", "a private array holds u32, i32, f32, f16 or f64, not u8")) << dump(ds);
  ds = problems(doc(4, R"({"array": "acc", "type": "f32", "count": -1})"));
  EXPECT_TRUE(has(ds, "body[0].count", "-1 is out of range")) << dump(ds);
  ds = problems(doc(4, R"({"array": "acc", "type": "f32"})"));
  EXPECT_TRUE(has(ds, "body[0]", "missing key 'count'")) << dump(ds);
  ds = problems(doc(4, R"({"array": "acc", "type": "f32", "count": 4, "value": 1})"));
  EXPECT_TRUE(has(ds, "body[0].value", "unknown key")) << dump(ds);
}

TEST(Json, Version2DeclaresALaunchDomainAndVersion1CannotSayIt) {
  const std::string body =
      R"("workgroup_size": [64, 1, 1], "buffers": [{"name": "out", "binding": 0, "access": "read_write",
         "type": "u32", "output": true}], "body": [{"store": "out", "index": {"gid": "x"}, "value": {"u32": 1}}]})";
  const CheckedProgram p = program_from_json(R"({"vyre": 2, "domain": "out", )" + body);
  EXPECT_EQ(p.program().domain, "out");
  const std::string text = program_to_json(p.program());
  EXPECT_NE(text.find("\"vyre\": 2"), std::string::npos) << text;
  EXPECT_EQ(program_from_json(text).program(), p.program());
  // Without a domain, a version-2 file holds a version-1 program: written back as version 1.
  const CheckedProgram plain = program_from_json(R"({"vyre": 2, )" + body);
  EXPECT_NE(program_to_json(plain.program()).find("\"vyre\": 1"), std::string::npos);

  auto ds = problems(R"({"vyre": 1, "domain": "out", )" + body);
  EXPECT_TRUE(has(ds, "domain", "needs format version 2")) << dump(ds);
  ds = problems(R"({"vyre": 2, "domain": 3, )" + body);
  EXPECT_TRUE(has(ds, "domain", "expected a buffer name")) << dump(ds);
  ds = problems(R"({"vyre": 2, "domain": "nothing", )" + body);
  EXPECT_TRUE(has(ds, "domain", "names no buffer")) << dump(ds);
}
