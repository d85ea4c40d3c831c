// `vyre lib find` end to end, as a separate process on the real device:
// patterns from the command line and from a file, a haystack given as text
// and as a file, the matches printed, as JSON and written raw; the
// refusals, each with its exit code (docs/cli.md).
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "support/cli_lib.hpp"
#include "support/test_support.hpp"

using vyre::test::cache_in;
using vyre::test::contains;
using vyre::test::expect_refusals;
using vyre::test::read_file;
using vyre::test::run_vyre;
using vyre::test::TempDir;
using vyre::test::write_file;

namespace {

TEST(CliLibFind, PatternsOnTheCommandLine) {
  TempDir tmp;
  auto r = run_vyre({"lib", "find", "--input", "x=aaaab", "--pattern", "aa", "--pattern", "ab", "--pattern", "aa"},
                    cache_in(tmp));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[[0, 0], [2, 0], [0, 1], [2, 1], [0, 2], [2, 2], [1, 3]]\n");
  EXPECT_EQ(r.err, "");
  r = run_vyre({"lib", "find", "--input", "x=abc", "--pattern", "z"}, cache_in(tmp));
  EXPECT_EQ(r.out, "[]\n") << r.err;
  r = run_vyre({"lib", "find", "--input", "x=abcabc", "--pattern", "bc", "--json", "--shape", "32,16"}, cache_in(tmp));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["primitive"], "find");
  EXPECT_EQ(j["matches"], 2);
  EXPECT_EQ(j["result"], nlohmann::json::parse("[[0, 1], [0, 4]]"));
  EXPECT_EQ(j["shapes"][0]["family"], "find");
  EXPECT_EQ(j["shapes"][0]["shape"], "workgroup=32 chunk=16");
  EXPECT_EQ(j["shapes"][0]["source"], "given");
  r = run_vyre({"lib", "find", "--input", "x=xyz", "--pattern", "y", "--verbose"}, cache_in(tmp));
  EXPECT_EQ(r.out, "[[0, 1]]\n");
  EXPECT_TRUE(contains(r.err, "lib find: 1 matches")) << r.err;
}

// A file of bytes with planted secrets, a file of patterns (a CRLF line
// among them), the matches written raw, against a search on the host.
TEST(CliLibFind, FilesInAndRawPairsOut) {
  TempDir tmp;
  std::mt19937 rng(1);
  std::string haystack(200000, '\0');
  for (char& c : haystack) c = static_cast<char>(rng());
  const std::vector<std::string> patterns = {"AKIAABCDEFGHIJKLMNOP", "ghp_0123456789", "-----BEGIN", "AKIA"};
  for (size_t at = 1000; at + 40 < haystack.size(); at += 4093) {
    const std::string& p = patterns[at % 3];
    haystack.replace(at, p.size(), p);
  }
  haystack.replace(haystack.size() - 10, 10, "-----BEGIN");  // at the very end
  write_file(tmp / "haystack.bin", haystack);
  write_file(tmp / "patterns.txt", patterns[1] + "\n" + patterns[2] + "\r\n" + patterns[3]);  // no final newline
  const auto r = run_vyre({"lib", "find", "--input", "x=@" + (tmp / "haystack.bin").string(), "--pattern",
                           patterns[0], "--patterns", "@" + (tmp / "patterns.txt").string(), "--output",
                           (tmp / "found.bin").string()},
                          cache_in(tmp));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  std::vector<uint32_t> want;
  for (size_t pos = 0; pos < haystack.size(); ++pos)
    for (uint32_t p = 0; p < patterns.size(); ++p)
      if (haystack.compare(pos, patterns[p].size(), patterns[p]) == 0) {
        want.push_back(p);
        want.push_back(static_cast<uint32_t>(pos));
      }
  ASSERT_GT(want.size(), 100u);
  const std::string out = read_file(tmp / "found.bin");
  ASSERT_EQ(out.size(), want.size() * 4);
  std::vector<uint32_t> got(want.size());
  std::memcpy(got.data(), out.data(), out.size());
  EXPECT_EQ(got, want);
}

TEST(CliLibFind, RefusalsNameTheFlag) {
  TempDir tmp;
  write_file(tmp / "gap.txt", "a\n\nb\n");
  const std::vector<vyre::test::Refusal> cases = {
      {{"lib", "find", "--input", "x=abc"}, 3, "give --pattern TEXT (repeatable) or --patterns @FILE"},
      {{"lib", "find", "--input", "x=abc", "--pattern", ""}, 3, "pattern 0 is empty"},
      {{"lib", "find", "--input", "x=abc", "--patterns", "@" + (tmp / "gap.txt").string()}, 3, "line 2 is empty"},
      {{"lib", "find", "--input", "x=abc", "--patterns", (tmp / "gap.txt").string()}, 3, "is not @FILE"},
      {{"lib", "find", "--input", "x=abc", "--patterns", "@" + (tmp / "missing.txt").string()}, 3,
       "cannot open the file"},
      {{"lib", "find", "--input", "y=abc", "--pattern", "a"}, 3, "is not x=@FILE or x=TEXT"},
      {{"lib", "find", "--input", "x=@" + (tmp / "missing.bin").string(), "--pattern", "a"}, 3, "cannot open the file"},
      {{"lib", "find", "--input", "x=abc", "--pattern", "a", "--shape", "64"}, 3, "is not WORKGROUP,CHUNK"},
      {{"lib", "find", "--input", "x=abc", "--pattern", "a", "--shape", "64,8"}, 3, "16 to 4096"},
      {{"lib", "find", "--pattern", "a"}, 2, "--input is required"},
  };
  expect_refusals(cases, cache_in(tmp));
  const auto help = run_vyre({"lib", "find", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(contains(help.out, "--patterns"));
}

}  // namespace
