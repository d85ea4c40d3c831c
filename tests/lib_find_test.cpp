// vyre::lib::find on lavapipe, against a naive host search (every pattern
// compared at every position): random haystacks over a few bytes (frequent
// matches) and over all 256, at the lengths where chunks and workgroups
// change; overlapping patterns, patterns that are prefixes and suffixes of
// each other, duplicates, patterns longer than a chunk, 0x00 and 0xff bytes,
// thousands of secret-scanner patterns planted across chunk boundaries and
// at the very end; no match at all; several shapes; the count pass against
// the reference interpreter; the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/aho_corasick.hpp"
#include "support/lib_inputs.hpp"
#include "support/lowering_backend.hpp"
#include "vyre/error.hpp"
#include "vyre/lib/find.hpp"
#include "vyre/reference.hpp"

using namespace vyre;
using test::invalid_input_message;

namespace {

gpu::Backend& backend() { return vyre::test::lowering_backend(); }

using Bytes = std::vector<uint8_t>;

// Every (pattern, position), by position then pattern: each pattern compared
// at each position where its first byte is (the patterns grouped by first
// byte only to keep thousands of them quick).
lib::Matches naive_find(const Bytes& haystack, const std::vector<std::string>& patterns) {
  std::vector<std::vector<uint32_t>> by_first(256);
  for (uint32_t p = 0; p < patterns.size(); ++p) by_first[static_cast<uint8_t>(patterns[p][0])].push_back(p);
  lib::Matches out;
  for (size_t pos = 0; pos < haystack.size(); ++pos)
    for (uint32_t p : by_first[haystack[pos]]) {
      const std::string& s = patterns[p];
      if (s.size() <= haystack.size() - pos && std::memcmp(haystack.data() + pos, s.data(), s.size()) == 0) {
        out.pattern.push_back(p);
        out.position.push_back(static_cast<uint32_t>(pos));
      }
    }
  return out;
}

Bytes random_bytes(size_t n, const std::string& alphabet, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
  Bytes out(n);
  for (auto& b : out) b = static_cast<uint8_t>(alphabet[pick(rng)]);
  return out;
}

std::string all_bytes() {
  std::string s(256, '\0');
  for (int b = 0; b < 256; ++b) s[static_cast<size_t>(b)] = static_cast<char>(b);
  return s;
}

std::string random_text(size_t n, const std::string& alphabet, std::mt19937& rng) {
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
  std::string s(n, '\0');
  for (auto& c : s) c = alphabet[pick(rng)];
  return s;
}

// Copies of patterns into the haystack: across the boundaries of chunks of
// `chunk` bytes, at the very end, and at random places.
void plant(Bytes& haystack, const std::vector<std::string>& patterns, uint32_t chunk, uint32_t seed) {
  if (haystack.empty()) return;
  std::mt19937 rng(seed);
  const auto put = [&](const std::string& s, size_t at) {
    if (s.size() > haystack.size()) return;
    at = std::min(at, haystack.size() - s.size());
    std::memcpy(haystack.data() + at, s.data(), s.size());
  };
  std::uniform_int_distribution<size_t> which(0, patterns.size() - 1);
  for (size_t boundary = chunk; boundary < haystack.size(); boundary += 7 * chunk) {
    const std::string& s = patterns[which(rng)];
    put(s, boundary - std::min(boundary, s.size() / 2 + 1));
  }
  for (size_t k = 0; k < haystack.size() / 512; ++k) put(patterns[which(rng)], rng() % haystack.size());
  put(patterns[which(rng)], haystack.size());  // ends at the last byte
}

std::vector<uint32_t> lengths() {
  std::vector<uint32_t> all = test::kLibSweepLengths;
  all.insert(all.begin(), 0);
  return all;
}

// `some`: the naive search must find matches, so that a test of them cannot
// pass by finding none.
void expect_found(const Bytes& haystack, const std::vector<std::string>& patterns, const std::string& what,
                  const std::optional<lib::FindShape>& shape = std::nullopt, bool some = false) {
  const lib::Matches want = naive_find(haystack, patterns);
  if (some) {
    EXPECT_GT(want.size(), 0u) << what << ", " << haystack.size() << " bytes";
  }
  const lib::Matches got = lib::find(backend(), std::span<const uint8_t>(haystack), patterns, shape);
  ASSERT_EQ(got.pattern.size(), got.position.size());
  EXPECT_EQ(got.size(), want.size()) << what << ", " << haystack.size() << " bytes";
  if (got == want) return;
  for (size_t k = 0; k < std::min(got.size(), want.size()); ++k)
    if (got.pattern[k] != want.pattern[k] || got.position[k] != want.position[k]) {
      ADD_FAILURE() << what << ", " << haystack.size() << " bytes: match " << k << " is pattern " << got.pattern[k]
                    << " at " << got.position[k] << ", expected pattern " << want.pattern[k] << " at "
                    << want.position[k];
      return;
    }
  ADD_FAILURE() << what << ": " << got.size() << " matches, expected " << want.size();
}

void at_every_length(const std::vector<std::string>& patterns, const std::string& alphabet, uint32_t seed,
                     const std::string& what, bool planted = true) {
  for (uint32_t n : lengths()) {
    Bytes haystack = random_bytes(n, alphabet, seed + n);
    if (planted) plant(haystack, patterns, lib::FindShape{}.chunk, seed + 2 * n);
    expect_found(haystack, patterns, what, std::nullopt, planted && n >= 1000);
  }
}

TEST(LibFind, OnePattern) {
  at_every_length({"ab"}, "ab", 1, "'ab' over ab");
  at_every_length({"x"}, all_bytes(), 2, "'x' over all bytes");
}

TEST(LibFind, OverlappingRunsOfOneByte) {
  const std::vector<std::string> patterns = {"a", "aa", "aaa"};
  for (uint32_t n : lengths()) expect_found(Bytes(n, 'a'), patterns, "a, aa, aaa on a...");
  at_every_length({"aaa", "a", "aa"}, "ab", 3, "aaa, a, aa over ab");
}

TEST(LibFind, PrefixesAndSuffixesOfEachOther) {
  at_every_length({"abc", "bc", "c", "ab", "abcab", "cab", "bcabc", "a", "cabca"}, "abc", 4, "nested over abc");
}

TEST(LibFind, DuplicatesAreEachReported) {
  at_every_length({"ab", "ab", "b", "ab", "bab", "b"}, "ab", 5, "duplicates over ab");
}

TEST(LibFind, ZeroAndFfBytes) {
  const std::string zero(1, '\0');
  const std::string ff(1, '\xff');
  at_every_length({zero, zero + ff, ff + ff + zero, ff, zero + zero + zero + zero}, zero + ff, 6, "0x00 and 0xff");
}

TEST(LibFind, PatternsLongerThanAChunk) {
  // 300 bytes against a 256-byte chunk; 40 against a 16-byte one.
  const std::vector<std::string> patterns = {std::string(300, 'a'), std::string(299, 'a') + "b", "ab", "b"};
  for (uint32_t n : {0u, 1u, 299u, 300u, 301u, 1000u, 65537u}) {
    Bytes run(n, 'a');
    if (n > 700) run[700] = 'b';
    expect_found(run, patterns, "runs of a, 300 long");
  }
  std::mt19937 rng(7);
  std::vector<std::string> long_ones;
  for (int k = 0; k < 20; ++k) long_ones.push_back(random_text(17 + rng() % 40, "abcd", rng));
  for (uint32_t n : {1000u, 65537u}) {
    Bytes haystack = random_bytes(n, "abcd", 8 + n);
    plant(haystack, long_ones, 16, 9);
    expect_found(haystack, long_ones, "17 to 56 bytes, 16-byte chunks", lib::FindShape{32, 16}, true);
    expect_found(haystack, long_ones, "17 to 56 bytes, default shape");
  }
}

TEST(LibFind, NoMatchAtAll) {
  at_every_length({"z", "zz", "yz"}, "abc", 10, "absent bytes", false);
  at_every_length({"abcdabcdabcdabcdabcd"}, "abcd", 11, "absent text", false);
  EXPECT_EQ(lib::find(backend(), std::string_view("abc"), {}).size(), 0u);
}

std::vector<std::string> secret_patterns(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  const std::string upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  const std::string alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::vector<std::string> out;
  for (size_t k = 0; k < count; ++k) {
    switch (k % 5) {
      case 0: out.push_back("AKIA" + random_text(16, upper, rng)); break;
      case 1: out.push_back("ghp_" + random_text(36, alnum, rng)); break;
      case 2: out.push_back("xoxb-" + random_text(1 + rng() % 10, "0123456789", rng)); break;
      case 3: out.push_back(random_text(2 + rng() % 6, alnum, rng)); break;
      default: out.push_back(random_text(3 + rng() % 5, all_bytes(), rng)); break;
    }
  }
  out.emplace_back("AKIA");  // a prefix of many
  out.emplace_back("ghp_");
  return out;
}

TEST(LibFind, ThousandsOfSecretScannerPatterns) {
  for (size_t count : {1000u, 5000u}) {
    const std::vector<std::string> patterns = secret_patterns(count, 12 + static_cast<uint32_t>(count));
    at_every_length(patterns, all_bytes(), 13, std::to_string(count) + " patterns over all bytes");
  }
  // Short random patterns over four letters: about one match a position.
  std::mt19937 rng(14);
  std::vector<std::string> dense;
  for (int k = 0; k < 1000; ++k) dense.push_back(random_text(4 + rng() % 5, "abcd", rng));
  at_every_length(dense, "abcd", 15, "1000 short patterns over abcd", false);
}

TEST(LibFind, EveryShapeFindsTheSame) {
  std::mt19937 rng(16);
  std::vector<std::string> patterns;
  for (int k = 0; k < 50; ++k) patterns.push_back(random_text(1 + rng() % 12, "abc", rng));
  patterns.emplace_back(5000, 'a');
  Bytes haystack = random_bytes(30011, "abc", 17);
  std::fill(haystack.begin() + 10000, haystack.begin() + 20000, 'a');
  for (const lib::FindShape& shape : {lib::FindShape{1, 16}, lib::FindShape{32, 33}, lib::FindShape{256, 4096},
                                      lib::FindShape{128, 1000}, lib::FindShape{64, 64}})
    expect_found(haystack, patterns,
                 "shape " + std::to_string(shape.workgroup) + " x " + std::to_string(shape.chunk), shape, true);
}

TEST(LibFind, DeviceBuffersInAndOut) {
  const std::vector<std::string> patterns = {"needle", "eed", "e"};
  Bytes haystack = random_bytes(70000, "denl", 18);
  plant(haystack, patterns, 256, 19);
  const lib::MatchBuffers found = lib::find(backend(), backend().upload(haystack, ScalarType::U8), patterns);
  ASSERT_EQ(found.pattern->type(), ScalarType::U32);
  ASSERT_EQ(found.position->type(), ScalarType::U32);
  const lib::Matches want = naive_find(haystack, patterns);
  EXPECT_EQ(found.pattern->read_as<uint32_t>(), want.pattern);
  EXPECT_EQ(found.position->read_as<uint32_t>(), want.position);
  const lib::MatchBuffers none = lib::find(backend(), backend().upload(haystack, ScalarType::U8), {"zz"});
  EXPECT_EQ(none.pattern->elements(), 0u);
  EXPECT_EQ(none.position->elements(), 0u);
}

TEST(LibFind, ReportsItsShape) {
  std::vector<lib::ShapeChoice> report;
  lib::Options options;
  options.report = &report;
  (void)lib::find(backend(), std::string_view("abcabc"), {"bc"}, std::nullopt, options);
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(report[0].family, "find");
  EXPECT_EQ(report[0].source, lib::ShapeSource::Default);
  const lib::FindShape shape = lib::default_find_shape(backend());
  EXPECT_EQ(report[0].shape,
            "workgroup=" + std::to_string(shape.workgroup) + " chunk=" + std::to_string(shape.chunk));
}

// The count pass's counts of a small haystack, on the GPU and in the
// reference interpreter, against the host's.
TEST(LibFind, CountPassIsTheReferenceInterpretersResult) {
  const std::vector<std::string> patterns = {"ab", "b", "abab", "ba", "bb"};
  std::vector<std::string> reversed;
  for (const std::string& p : patterns) reversed.emplace_back(p.rbegin(), p.rend());
  const std::vector<std::string_view> views(reversed.begin(), reversed.end());
  const lib::detail::ByteAutomaton a = lib::detail::build_byte_automaton(views, {1u << 20, 1u << 20}, "test");
  const lib::FindShape shape{4, 16};
  const Bytes haystack = random_bytes(1000, "abc", 20);
  const uint32_t chunks = (1000 + 15) / 16;
  Inputs in;
  in.set<uint8_t>("haystack", haystack)
      .set<uint32_t>("byte_class", std::vector<uint32_t>(a.byte_class.begin(), a.byte_class.end()))
      .set<uint32_t>("next", a.next)
      .set<uint32_t>("starts", a.starts)
      .set<uint32_t>("params", {a.longest, a.classes})
      .size("counts", 2 * chunks);
  const Dim3 grid{(chunks + 3) / 4, 1, 1};
  const Program pass = lib::find_count_pass(shape);
  const Outputs gpu_out = backend().compile(pass).dispatch(in, grid);
  const Outputs ref_out = reference::run(pass, in, {}, grid);
  // The host's: per chunk, the positions where some pattern starts, and the matches.
  const lib::Matches all = naive_find(haystack, patterns);
  std::vector<uint32_t> want(2 * chunks, 0);
  for (size_t k = 0; k < all.size(); ++k) {
    const uint32_t c = all.position[k] / 16;
    if (k == 0 || all.position[k] != all.position[k - 1]) ++want[c];
    ++want[chunks + c];
  }
  EXPECT_EQ(gpu_out.get<uint32_t>("counts"), want);
  EXPECT_EQ(ref_out.get<uint32_t>("counts"), want);
}

TEST(LibFind, RefusalsSayWhatToDo) {
  const auto refusal = [](const std::vector<std::string>& patterns) {
    return invalid_input_message([&] { (void)lib::find(backend(), std::string_view("abc"), patterns); });
  };
  EXPECT_NE(refusal({"a", ""}).find("pattern 1 is empty"), std::string::npos);
  EXPECT_NE(refusal(std::vector<std::string>(65537, "a")).find("at most 65536 patterns, not 65537"), std::string::npos);
  EXPECT_NE(refusal({std::string(32769, 'a')}).find("at most 32768"), std::string::npos);
  EXPECT_NE(refusal(std::vector<std::string>(600, std::string(30000, 'a'))).find("more than 16777216 bytes"),
            std::string::npos);
  // 1,000 random patterns of 160 bytes over all 256 values: about 160,000
  // states x 256 classes.
  std::mt19937 rng(21);
  std::vector<std::string> wide;
  for (int k = 0; k < 1000; ++k) wide.push_back(random_text(160, all_bytes(), rng));
  EXPECT_NE(refusal(wide).find("transitions"), std::string::npos);
  // 8,192 copies of "a" end at every state of a run of 4,096.
  std::vector<std::string> nested(8192, "a");
  for (size_t k = 1; k <= 4096; ++k) nested.emplace_back(k, 'a');
  EXPECT_NE(refusal(nested).find("(state, pattern) pairs"), std::string::npos);
  // Up to 64 matches at each of 2^26 positions would wrap the u32 counts.
  const auto big = backend().upload(Bytes(size_t{1} << 26, 'a'), ScalarType::U8);
  EXPECT_NE(invalid_input_message([&] { (void)lib::find(backend(), big, std::vector<std::string>(64, "a")); })
                .find("search pieces of at most"),
            std::string::npos);
  const auto words = backend().upload(std::vector<uint32_t>{1, 2});
  EXPECT_NE(invalid_input_message([&] { (void)lib::find(backend(), words, {"a"}); }).find("not u32"),
            std::string::npos);
  EXPECT_NE(invalid_input_message([&] {
              (void)lib::find(backend(), std::string_view("abc"), {"a"}, lib::FindShape{3, 256});
            }).find("power of two"),
            std::string::npos);
  EXPECT_NE(invalid_input_message([&] {
              (void)lib::find(backend(), std::string_view("abc"), {"a"}, lib::FindShape{64, 8});
            }).find("16 to 4096"),
            std::string::npos);
}

}  // namespace
