// The `vyre` program as a user meets it: help, exit codes, error messages,
// and the commands that need no GPU.
#include <gtest/gtest.h>

#include "support/programs.hpp"
#include "support/test_support.hpp"
#include "vyre/json.hpp"
#include "vyre/lower.hpp"
#include "vyre/wire.hpp"

using vyre::test::run_vyre;
using vyre::test::source_path;
using vyre::test::TempDir;

TEST(Cli, HelpListsEveryCommandWithADescription) {
  auto r = run_vyre({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* cmd : {"validate", "hash", "lower", "run", "devices", "demo"})
    EXPECT_NE(r.out.find(cmd), std::string::npos) << cmd << "\n" << r.out;
}

TEST(Cli, EveryCommandHasHelp) {
  for (const char* cmd : {"validate", "hash", "lower", "run", "devices", "demo"}) {
    auto r = run_vyre({cmd, "--help"});
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << cmd << "\n" << r.out;
  }
}

TEST(Cli, BadCommandLinesExitWithUsageCode) {
  EXPECT_EQ(run_vyre({}).exit_code, 2);
  EXPECT_EQ(run_vyre({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(run_vyre({"hash"}).exit_code, 2);
  EXPECT_EQ(run_vyre({"lower", source_path("examples/xor.json"), "--no-such-flag"}).exit_code, 2);
}

TEST(Cli, ValidateAcceptsTheExamples) {
  for (const char* name : {"xor", "saxpy", "collatz"}) {
    auto r = run_vyre({"validate", source_path(std::string("examples/") + name + ".json")});
    EXPECT_EQ(r.exit_code, 0) << name << r.err;
    EXPECT_NE(r.out.find("valid"), std::string::npos);
  }
}

TEST(Cli, ValidateReportsEveryProblemWithFileAndPath) {
  TempDir dir;
  const auto bad = dir / "bad.json";
  vyre::test::write_file(bad, R"({"vyre": 1, "workgroup_size": [64, 1, 1],
    "buffers": [{"name": "out", "binding": 0, "access": "read", "type": "u32", "output": true}],
    "body": [{"let": "i", "value": {"add": [{"u32": 1}, {"i32": 1}]}}, {"break": true}]})");
  auto r = run_vyre({"validate", bad.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(bad.string() + ": buffers[0].output: only read_write buffers can be outputs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(bad.string() + ": body[0].value.add: add needs operands of one type"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(bad.string() + ": body[1]: break outside a loop"), std::string::npos) << r.err;

  auto j = run_vyre({"validate", "--json", bad.string()});
  EXPECT_EQ(j.exit_code, 1);
  EXPECT_NE(j.out.find("\"valid\":false"), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("\"path\":\"body[1]\""), std::string::npos) << j.out;
}

TEST(Cli, MissingFileIsAnInputError) {
  auto r = run_vyre({"validate", "/nonexistent/prog.json"});
  EXPECT_EQ(r.exit_code, 1);
  auto h = run_vyre({"hash", "/nonexistent/prog.json"});
  EXPECT_EQ(h.exit_code, 3);
  EXPECT_NE(h.err.find("cannot read /nonexistent/prog.json"), std::string::npos) << h.err;
}

TEST(Cli, HashPrintsTheLibraryDigest) {
  auto r = run_vyre({"hash", source_path("examples/xor.json")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, vyre::digest(vyre::test::example("xor")).hex() + "\n");
  // Reading from stdin gives the same.
  auto s = vyre::test::run_process({VYRE_CLI_PATH, "hash", "-"}, {},
                                   vyre::test::read_file(source_path("examples/xor.json")));
  EXPECT_EQ(s.out, r.out);
}

TEST(Cli, HashWritesTheWireBytes) {
  TempDir dir;
  auto r = run_vyre({"hash", source_path("examples/saxpy.json"), "--wire-out", (dir / "w.bin").string(), "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string bytes = vyre::test::read_file(dir / "w.bin");
  const auto wire = vyre::to_wire(vyre::test::example("saxpy"));
  EXPECT_EQ(bytes, std::string(wire.begin(), wire.end()));
  EXPECT_NE(r.out.find("\"wire_bytes\":" + std::to_string(wire.size())), std::string::npos) << r.out;
}

TEST(Cli, LowerPrintsTheWgslAndHonoursTheOverride) {
  auto r = run_vyre({"lower", source_path("examples/xor.json")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, vyre::lower_to_wgsl(vyre::test::example("xor")));
  auto o = run_vyre({"lower", source_path("examples/xor.json"), "--workgroup", "32,2,1"});
  EXPECT_NE(o.out.find("@workgroup_size(32, 2, 1)"), std::string::npos) << o.out;
  auto bad = run_vyre({"lower", source_path("examples/xor.json"), "--workgroup", "32,x"});
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_NE(bad.err.find("--workgroup"), std::string::npos) << bad.err;
}

TEST(Cli, WithoutXdgRuntimeDirTheCommandStaysQuietAndLeavesNothingBehind) {
  vyre::test::TempDir tmp;
  auto r = vyre::test::run_vyre({"devices"}, {{"XDG_RUNTIME_DIR", ""}, {"TMPDIR", tmp.path().string()}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // no "XDG_RUNTIME_DIR is invalid or not set" from libwayland
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));  // its private runtime directory is gone
}
