// The canonical wire format and digest: round trips, every invariant of the
// spec's Identity section, and rejection of malformed or hostile bytes.
#include <fstream>
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "support/programs.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"
#include "vyre/json.hpp"
#include "vyre/wire.hpp"

using namespace vyre;
using namespace vyre::build;

namespace {

// The program as the wire format holds it: buffers canonical, no label.
Program canonical(Program p) {
  std::vector<Buffer> sorted;
  for (const Buffer* b : canonical_buffer_order(p)) sorted.push_back(*b);
  p.buffers = std::move(sorted);
  p.name.clear();
  return p;
}

void expect_rejected(const std::vector<uint8_t>& bytes, const std::string& fragment, const WireLimits& limits = {}) {
  try {
    from_wire(bytes, limits);
    ADD_FAILURE() << "accepted bytes that should be refused (" << fragment << ")";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_wire);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(Wire, RoundTripsToTheCanonicalProgram) {
  std::vector<Program> programs = {vyre::test::xor_program(), vyre::test::every_construct_program()};
  for (auto& p : vyre::test::constant_hazard_programs()) programs.push_back(p);
  for (const char* name : {"xor", "saxpy", "collatz"}) programs.push_back(vyre::test::example(name));
  for (const auto& p : programs) {
    const auto bytes = to_wire(p);
    const Program back = from_wire(bytes);
    EXPECT_EQ(back, canonical(p)) << p.name;
    EXPECT_EQ(to_wire(back), bytes) << p.name;
  }
}

TEST(Wire, DigestIgnoresBufferOrder) {
  Program a = vyre::test::every_construct_program();
  Program b = a;
  std::reverse(b.buffers.begin(), b.buffers.end());
  EXPECT_EQ(digest(a), digest(b));
}

TEST(Wire, DigestIgnoresTheName) {
  Program a = vyre::test::xor_program();
  Program b = a;
  b.name = "another label";
  EXPECT_EQ(digest(a), digest(b));
}

TEST(Wire, DigestIgnoresJsonFormatting) {
  const std::string pretty = program_to_json(vyre::test::xor_program(), 4);
  const std::string compact = program_to_json(vyre::test::xor_program(), -1);
  ASSERT_NE(pretty, compact);
  // Keys in another order too.
  const std::string reordered = R"({"body": [{"let": "i", "value": {"gid": "x"}},
    {"then": [{"value": {"xor": [{"index": {"var": "i"}, "load": "a"}, {"load": "b", "index": {"var": "i"}}]},
               "index": {"var": "i"}, "store": "out"}], "if": {"lt": [{"var": "i"}, {"len": "out"}]}}],
    "buffers": [{"type": "u32", "output": true, "name": "out", "binding": 2, "access": "read_write"},
                {"access": "read", "binding": 1, "name": "b", "type": "u32"},
                {"name": "a", "binding": 0, "access": "read", "type": "u32"}],
    "workgroup_size": [64, 1, 1], "vyre": 1})";
  const Digest d = digest(program_from_json(pretty));
  EXPECT_EQ(d, digest(program_from_json(compact)));
  EXPECT_EQ(d, digest(program_from_json(reordered)));
  EXPECT_EQ(d, digest(vyre::test::example("xor")));
}

TEST(Wire, DigestChangesWithEveryChangeOfMeaning) {
  const Program base = vyre::test::every_construct_program();
  const Digest d = digest(base);
  auto differs = [&](const std::string& what, auto mutate) {
    Program p = base;
    mutate(p);
    EXPECT_NE(digest(p), d) << what;
  };
  differs("binding", [](Program& p) { p.buffers[0].binding = 9; });
  differs("type", [](Program& p) { p.buffers[0].type = ScalarType::I32; });
  differs("count", [](Program& p) { p.buffers[0].count = 3; });
  differs("access", [](Program& p) { p.buffers[1].output = false; });
  differs("buffer name", [](Program& p) { p.buffers[0].name = "input"; });
  differs("workgroup size", [](Program& p) { p.workgroup_size[1] = 1; });
  differs("u32 literal", [](Program& p) { p.body[1].exprs[0].imm = 8; });
  differs("f32 literal bits", [](Program& p) { p.body[3].exprs[0].imm ^= 1; });
  differs("a statement more", [](Program& p) { p.body.push_back(return_()); });
  differs("an operator", [](Program& p) { p.body[6].exprs[0].op = Op::Sub; });
  differs("barrier kind", [](Program& p) {
    for (auto& s : p.body)
      if (s.op == StmtOp::Barrier) s.barrier = s.barrier == BarrierKind::Storage ? BarrierKind::Workgroup : BarrierKind::Storage;
  });
}

TEST(Wire, FloatLiteralsAreCanonical) {
  auto with = [](uint32_t bits) {
    return ProgramBuilder().output("out", 0, ScalarType::F32).body({store("out", u32(0), f32_bits(bits))}).unchecked();
  };
  // Every NaN is one NaN; zero and negative zero differ (1/x tells them apart).
  EXPECT_EQ(digest(with(0x7fc00000u)), digest(with(0x7fc00001u)));
  EXPECT_EQ(digest(with(0x7fc00000u)), digest(with(0xffffffffu)));
  EXPECT_NE(digest(with(0x00000000u)), digest(with(0x80000000u)));
  EXPECT_NE(digest(with(0x7f800000u)), digest(with(0x7fc00000u)));
}

TEST(Wire, DigestIsSha256OfTheWireBytes) {
  const Program p = vyre::test::xor_program();
  EXPECT_EQ(digest(p), sha256(to_wire(p)));
  EXPECT_EQ(digest(p).hex().size(), 64u);
  // A known answer for SHA-256 itself.
  EXPECT_EQ(sha256(std::string_view("abc")).hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Wire, EveryTruncationIsRejected) {
  const auto bytes = to_wire(vyre::test::every_construct_program());
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(n));
    EXPECT_THROW(from_wire(cut), Error) << "prefix of " << n << " bytes";
  }
}

TEST(Wire, MalformedBytesAreRejectedWithAReason) {
  const auto good = to_wire(vyre::test::xor_program());
  auto bad = good;
  bad[0] = 'X';
  expect_rejected(bad, "bad magic");
  bad = good;
  bad[4] = 5;
  expect_rejected(bad, "version 5");
  // Version 2 without the domain it exists for: what follows the buffers is
  // no identifier.
  bad = good;
  bad[4] = 2;
  expect_rejected(bad, "domain");
  bad = good;
  bad.push_back(0);
  expect_rejected(bad, "trailing");
  expect_rejected({}, "truncated");
  // A non-minimal integer: version 1 written as 0x81 0x00.
  bad = good;
  bad[4] = 0x81;
  bad.insert(bad.begin() + 5, 0x00);
  expect_rejected(bad, "non-minimal");
}

TEST(Wire, UnknownTagsAreRejected) {
  auto bytes = to_wire(ProgramBuilder().output("out", 0, ScalarType::U32).body({return_()}).build());
  // The last byte is the return statement's tag.
  bytes.back() = 0xee;
  expect_rejected(bytes, "unknown statement");
}

TEST(Wire, NonCanonicalBufferOrderIsRejected) {
  // Swap the two buffer records of a two-buffer program.
  Program p = ProgramBuilder().input("a", 0, ScalarType::U32).output("b", 1, ScalarType::U32).body({}).build();
  auto bytes = to_wire(p);
  Program swapped = canonical(p);
  std::swap(swapped.buffers[0], swapped.buffers[1]);
  // Encode by hand: the writer always sorts, so build the swapped bytes from two single-buffer encodings.
  Program only_a = p, only_b = p;
  only_a.buffers = {p.buffers[0]};
  only_b.buffers = {p.buffers[1]};
  auto wa = to_wire(only_a), wb = to_wire(only_b);
  // Layout: magic(4) version(1) wg(3) count(1) buffer... body(1)
  std::vector<uint8_t> record_a(wa.begin() + 9, wa.end() - 1), record_b(wb.begin() + 9, wb.end() - 1);
  std::vector<uint8_t> out(bytes.begin(), bytes.begin() + 9);
  out.insert(out.end(), record_b.begin(), record_b.end());
  out.insert(out.end(), record_a.begin(), record_a.end());
  out.push_back(0);
  expect_rejected(out, "canonical order");
}

TEST(Wire, LimitsAreEnforced) {
  const auto bytes = to_wire(vyre::test::every_construct_program());
  WireLimits small;
  small.max_bytes = 16;
  expect_rejected(bytes, "the limit is 16", small);
  WireLimits shallow;
  shallow.max_depth = 3;
  expect_rejected(bytes, "nested deeper than 3", shallow);
  WireLimits few;
  few.max_nodes = 10;
  expect_rejected(bytes, "more than 10 nodes", few);
}

TEST(Wire, DecoderAcceptsNoDeeperThanTheWriter) {
  // fuzz/corpus/wire_decoder_fuzz/deeper_than_the_format.wire: 256 levels
  // were accepted, and the program then had no wire bytes and no digest.
  const std::string path = VYRE_SOURCE_DIR "/fuzz/corpus/wire_decoder_fuzz/deeper_than_the_format.wire";
  std::ifstream in(path, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(bytes.empty()) << path;
  expect_rejected(bytes, "nested deeper than 200");
}

TEST(Wire, HugeCountsDoNotAllocate) {
  // A buffer count of 2^62 with nothing behind it: refused before any allocation.
  std::vector<uint8_t> bytes = {'V', 'Y', 'R', 'W', 1, 1, 1, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40};
  expect_rejected(bytes, "exceeds the bytes left");
}

TEST(Wire, RandomBytesNeverCrash) {
  std::mt19937 rng(1234);
  const auto good = to_wire(vyre::test::every_construct_program());
  size_t accepted = 0;
  for (int round = 0; round < 20000; ++round) {
    auto bytes = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
    try {
      Program p = from_wire(bytes);
      // Whatever decodes must re-encode to the same bytes (the encoding is canonical).
      EXPECT_EQ(to_wire(p), bytes);
      ++accepted;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_wire);
    }
  }
  SUCCEED() << accepted << " mutated inputs decoded";
}

// The wire format is frozen at version 1: identities (and so cache keys)
// must not change between builds. Any change here needs a new version.
TEST(Wire, XorExampleHasItsFrozenBytesAndDigest) {
  const auto bytes = to_wire(vyre::test::example("xor"));
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t b : bytes) hex += std::string{kHex[b >> 4], kHex[b & 15]};
  EXPECT_EQ(hex,
            "5659525701400101030161000000000001620000010000036f75740100020001020001690700031904016906036f75740102036f"
            "75740401691405016104016905016204016900");
  EXPECT_EQ(digest(vyre::test::example("xor")).hex(), "a3de9b847d61fd7438eb89ee330bb7700fb90d9e266e5e1dbeb586295038b364");
}

TEST(Wire, ADomainInAShapeIsVersion3AndLeavesVersion2BytesAlone) {
  Program p = vyre::test::xor_program();
  p.domain = "out";
  const auto v2 = to_wire(p);
  p.domain_shape = {4, 8};
  EXPECT_EQ(format_version(p), 3u);
  const auto v3 = to_wire(p);
  EXPECT_EQ(v3[4], 3);
  EXPECT_EQ(from_wire(v3), canonical(p));
  EXPECT_NE(digest(p), digest(from_wire(v2)));
  for (size_t n = 0; n < v3.size(); ++n)
    EXPECT_THROW(from_wire(std::vector<uint8_t>(v3.begin(), v3.begin() + static_cast<std::ptrdiff_t>(n))), Error);
  // Version 3 of a flat domain: the rank that follows the domain is not 2 or 3.
  auto bad = v2;
  bad[4] = 3;
  expect_rejected(bad, "");
}

TEST(Wire, NarrowOrBoolBuffersAreVersion4AndLeaveOlderBytesAlone) {
  for (ScalarType t : {ScalarType::U8, ScalarType::I8, ScalarType::U16, ScalarType::I16, ScalarType::Bool}) {
    Program p = vyre::test::xor_program();
    const auto v1 = to_wire(p);
    p.buffers[0].type = t;  // the input 'a'
    EXPECT_EQ(format_version(p), 4u) << to_string(t);
    const auto v4 = to_wire(p);
    EXPECT_EQ(v4[4], 4);
    EXPECT_EQ(from_wire(v4), canonical(p));
    EXPECT_NE(digest(p), digest(vyre::test::xor_program()));
    for (size_t n = 0; n < v4.size(); ++n)
      EXPECT_THROW(from_wire(std::vector<uint8_t>(v4.begin(), v4.begin() + static_cast<std::ptrdiff_t>(n))), Error);
    // The same bytes claiming an older version: a version-1 reader has no such type.
    auto bad = v4;
    bad[4] = 1;
    expect_rejected(bad, "");
    // A version-4 header on a program of version-1 types is not canonical: one program, one encoding.
    auto relabelled = v1;
    relabelled[4] = 4;
    expect_rejected(relabelled, "");
  }
  // Version 4 holds every earlier addition too: a domain, a domain with a shape.
  Program p = vyre::test::xor_program();
  p.buffers[0].type = ScalarType::U8;
  for (bool shaped : {false, true}) {
    p.domain = "out";
    if (shaped) p.domain_shape = {4, 8};
    const auto v4 = to_wire(p);
    EXPECT_EQ(v4[4], 4);
    EXPECT_EQ(from_wire(v4), canonical(p)) << shaped;
    for (size_t n = 0; n < v4.size(); ++n)
      EXPECT_THROW(from_wire(std::vector<uint8_t>(v4.begin(), v4.begin() + static_cast<std::ptrdiff_t>(n))), Error);
  }
}

TEST(Wire, ASteppedLoopIsVersion4AndLoopsWithoutOneKeepTheirBytes) {
  const auto program = [](std::optional<int32_t> step) {
    std::vector<Stmt> body{store("out", u32(0), cast(ScalarType::U32, var("k")))};
    return ProgramBuilder("stepped")
        .output("out", 0, ScalarType::U32, 1)
        .body({step ? loop("k", i32(9), i32(-3), i32(*step), body) : loop("k", i32(9), i32(-3), body)})
        .build();
  };
  const auto v1 = to_wire(program(std::nullopt));
  EXPECT_EQ(v1[4], 1);
  EXPECT_EQ(to_wire(program(1)), v1);  // the builder writes a step of 1 as no step
  const Program p = program(-2);
  const auto v4 = to_wire(p);
  EXPECT_EQ(v4[4], 4);
  EXPECT_EQ(from_wire(v4), canonical(p));
  EXPECT_NE(digest(p), digest(program(std::nullopt)));
  for (size_t n = 0; n < v4.size(); ++n)
    EXPECT_THROW(from_wire(std::vector<uint8_t>(v4.begin(), v4.begin() + static_cast<std::ptrdiff_t>(n))), Error);
  auto bad = v4;
  bad[4] = 1;  // a version-1 reader has no stepped loop
  expect_rejected(bad, "");
}

TEST(Wire, APrivateArrayIsVersion4AtStatementTag11) {
  const auto program = [](ScalarType type, uint32_t count) {
    return ProgramBuilder("arrays")
        .output("out", 0, ScalarType::U32, 1)
        .body({array("acc", type, count), store("acc", u32(0), cast(type, u32(5))),
               store("out", u32(0), cast(ScalarType::U32, load("acc", u32(0))))})
        .build();
  };
  const Program p = program(ScalarType::I32, 300);
  const auto v4 = to_wire(p);
  EXPECT_EQ(v4[4], 4);
  EXPECT_EQ(from_wire(v4), canonical(p));
  // Type and count are part of the identity.
  EXPECT_NE(digest(p), digest(program(ScalarType::U32, 300)));
  EXPECT_NE(digest(p), digest(program(ScalarType::I32, 301)));
  for (size_t n = 0; n < v4.size(); ++n)
    EXPECT_THROW(from_wire(std::vector<uint8_t>(v4.begin(), v4.begin() + static_cast<std::ptrdiff_t>(n))), Error);
  auto bad = v4;
  bad[4] = 1;  // a version-1 reader has no private array
  expect_rejected(bad, "");
}

TEST(Wire, ADeclaredDomainIsVersion2AndLeavesVersion1BytesAlone) {
  Program p = vyre::test::xor_program();
  const auto v1 = to_wire(p);
  EXPECT_EQ(v1[4], 1);
  EXPECT_EQ(format_version(p), 1u);
  p.domain = "out";
  EXPECT_EQ(format_version(p), 2u);
  const auto v2 = to_wire(p);
  EXPECT_EQ(v2[4], 2);
  EXPECT_EQ(from_wire(v2), canonical(p));
  EXPECT_NE(digest(p), digest(vyre::test::xor_program()));
  for (size_t n = 0; n < v2.size(); ++n)
    EXPECT_THROW(from_wire(std::vector<uint8_t>(v2.begin(), v2.begin() + static_cast<std::ptrdiff_t>(n))), Error);
}
