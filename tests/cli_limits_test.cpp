// What `vyre` promises about what it reads and writes: every read stops at
// its documented limit as it happens, inputs are given once and never read
// from a directory, sizes beyond the device or the interpreter are refused
// before anything is allocated, and every write is checked through the
// final flush of stdout (docs/cli.md: "Limits", "Exit codes").
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "support/test_support.hpp"

using vyre::test::run_process;
using vyre::test::run_vyre;
using vyre::test::source_path;
using vyre::test::TempDir;
using vyre::test::write_file;

namespace {

std::string xor_program() { return source_path("examples/xor.json").string(); }

// A program with one runtime-sized u32 output and workgroup [1, 1, 1].
std::filesystem::path write_one_output_program(const TempDir& dir) {
  write_file(dir / "u.json", R"({"vyre": 1, "name": "u", "workgroup_size": [1, 1, 1],
    "buffers": [{"name": "out", "binding": 0, "access": "read_write", "type": "u32", "output": true}],
    "body": [{"store": "out", "index": {"u32": 0}, "value": {"u32": 7}}]})");
  return dir / "u.json";
}

// `vyre ARGS` through the shell, for redirections and pipes.
vyre::test::ProcessResult shell(const std::string& command, const std::map<std::string, std::string>& env = {}) {
  return run_process({"/bin/sh", "-c", command}, env);
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace

TEST(CliLimits, AnInputFileIsReadOnlyUpToItsLimit) {
  TempDir cache;
  const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", cache.path().string()}};
  const auto start = std::chrono::steady_clock::now();
  auto r = run_vyre({"run", xor_program(), "--input", "a=@/dev/zero", "--input", "b=1", "--size", "out=1"}, env);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("vyre::kMaxInputFileBytes"), std::string::npos) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));

  // A buffer whose count the program fixes takes exactly its size.
  TempDir dir;
  write_file(dir / "fixed.json", R"({"vyre": 1, "workgroup_size": [1, 1, 1],
    "buffers": [{"name": "a", "binding": 0, "access": "read", "type": "u32", "count": 2},
                {"name": "out", "binding": 1, "access": "read_write", "type": "u32", "count": 2, "output": true}],
    "body": []})");
  auto fixed = run_vyre({"run", (dir / "fixed.json").string(), "--input", "a=@/dev/zero"}, env);
  EXPECT_EQ(fixed.exit_code, 3) << fixed.err;
  EXPECT_NE(fixed.err.find("fixes it at 2 elements"), std::string::npos) << fixed.err;
}

TEST(CliLimits, ARunFileIsReadOnlyUpToItsLimit) {
  TempDir cache;
  auto r = run_vyre({"run", xor_program(), "--inputs", "/dev/zero"}, {{"VYRE_AOT_CACHE_DIR", cache.path().string()}});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("64 MiB, the limit of a run file (vyre::JsonLimits::max_bytes)"), std::string::npos) << r.err;
}

TEST(CliLimits, AProgramOnStdinOrInAFileIsReadOnlyUpToItsLimit) {
  const std::string v = quoted(VYRE_CLI_PATH);
  auto zero = shell("exec " + v + " validate - </dev/zero");
  EXPECT_EQ(zero.exit_code, 1) << zero.err;
  EXPECT_NE(zero.err.find("64 MiB, the limit of a program (vyre::JsonLimits::max_bytes)"), std::string::npos) << zero.err;
  // An endless pipe ends at the limit too (timeout: 124 if it did not).
  auto endless = shell("yes | timeout 120 " + v + " validate -");
  EXPECT_EQ(endless.exit_code, 1) << endless.err;
  EXPECT_NE(endless.err.find("the limit of a program"), std::string::npos) << endless.err;
  auto file = run_vyre({"validate", "/dev/zero"});
  EXPECT_EQ(file.exit_code, 1) << file.err;
  EXPECT_NE(file.err.find("the limit of a program"), std::string::npos) << file.err;
}

TEST(CliLimits, ADirectoryIsNoInputFile) {
  TempDir dir;
  auto r = run_vyre({"run", xor_program(), "--input", "a=@" + dir.path().string(), "--input", "b=1", "--size", "out=1"},
                    {{"VYRE_AOT_CACHE_DIR", (dir / "c").string()}});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(CliLimits, EachBufferIsGivenOnce) {
  TempDir dir;
  const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", (dir / "c").string()}};
  auto input_twice = run_vyre({"run", xor_program(), "--input", "a=1", "--input", "a=2", "--input", "b=1", "--size", "out=1"}, env);
  EXPECT_EQ(input_twice.exit_code, 3) << input_twice.err;
  EXPECT_NE(input_twice.err.find("'a' is already given"), std::string::npos) << input_twice.err;
  auto size_twice = run_vyre({"run", xor_program(), "--input", "a=1", "--input", "b=1", "--size", "out=1", "--size", "out=2"}, env);
  EXPECT_EQ(size_twice.exit_code, 3) << size_twice.err;
  EXPECT_NE(size_twice.err.find("'out' is already given"), std::string::npos) << size_twice.err;
  auto over_run_file = run_vyre({"run", xor_program(), "--inputs", source_path("examples/xor.run.json").string(),
                                 "--input", "a=1,2,3,4,5"}, env);
  EXPECT_EQ(over_run_file.exit_code, 3) << over_run_file.err;
  EXPECT_NE(over_run_file.err.find("'a' is already given"), std::string::npos) << over_run_file.err;
}

TEST(CliLimits, SizesBeyondTheDeviceOrTheInterpreterAreRefusedBeforeAllocating) {
  TempDir dir;
  const auto program = write_one_output_program(dir).string();
  const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", (dir / "c").string()}};
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--dim", "4294967295"}, {"--grid", "1"}, {"--backend", "reference", "--grid", "1"}}) {
    std::vector<std::string> args{"run", program, "--size", "out=4294967295"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto start = std::chrono::steady_clock::now();
    auto r = run_vyre(args, env);
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(r.exit_code, 5) << r.err;
    EXPECT_TRUE(r.err.find("maxComputeWorkgroupsPerDimension") != std::string::npos ||
                r.err.find("maxStorageBufferBindingSize") != std::string::npos ||
                r.err.find("vyre::reference::kMaxMemoryBytes") != std::string::npos)
        << r.err;
    // Zeroing 16 GiB took 44 s; a refusal at planning takes a backend's start.
    EXPECT_LT(took, std::chrono::seconds(20)) << r.err;
  }
}

TEST(CliWrites, EveryWriteIsCheckedThroughTheFinalFlush) {
  TempDir dir;
  const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", (dir / "c").string()}};
  const std::string v = quoted(VYRE_CLI_PATH), x = quoted(xor_program());
  auto lower = shell("exec " + v + " lower " + x + " >/dev/full", env);
  EXPECT_EQ(lower.exit_code, 6) << lower.err;
  EXPECT_NE(lower.err.find("cannot write the output to stdout"), std::string::npos) << lower.err;
  auto run = shell("exec " + v + " run " + x + " --input a=1 --input b=2 --size out=1 >/dev/full", env);
  EXPECT_EQ(run.exit_code, 6) << run.err;
  auto report = run_vyre({"run", xor_program(), "--input", "a=1", "--input", "b=2", "--size", "out=1", "--report-json",
                          "/dev/full"}, env);
  EXPECT_EQ(report.exit_code, 6) << report.err;
  EXPECT_NE(report.err.find("cannot write /dev/full"), std::string::npos) << report.err;
  auto wire = run_vyre({"hash", xor_program(), "--wire-out", "/dev/full"});
  EXPECT_EQ(wire.exit_code, 6) << wire.err;
  EXPECT_NE(wire.err.find("No space left on device"), std::string::npos) << wire.err;
  // And when everything fits, nothing changes.
  auto fine = run_vyre({"hash", xor_program(), "--wire-out", (dir / "w.bin").string()});
  EXPECT_EQ(fine.exit_code, 0) << fine.err;
  EXPECT_GT(std::filesystem::file_size(dir / "w.bin"), 0u);
}

TEST(CliRunCheck, CheckSaysItPassedOrShowsTheFirstDifference) {
  TempDir dir;
  const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", (dir / "c").string()}};
  auto passed = run_vyre({"run", xor_program(), "--inputs", source_path("examples/xor.run.json").string(), "--check"}, env);
  EXPECT_EQ(passed.exit_code, 0) << passed.err;
  EXPECT_EQ(passed.err, "vyre: check passed: 1 output\n");
  write_file(dir / "wrong.run.json", R"({"inputs": {"a": [1, 2, 3], "b": [0, 0, 0]}, "sizes": {"out": 3},
    "expect": {"out": [1, 2, 9]}})");
  auto failed = run_vyre({"run", xor_program(), "--inputs", (dir / "wrong.run.json").string(), "--check"}, env);
  EXPECT_EQ(failed.exit_code, 1) << failed.err;
  EXPECT_NE(failed.err.find("first difference at index 2: expected 9, got 3"), std::string::npos) << failed.err;
  write_file(dir / "short.run.json", R"({"inputs": {"a": [1, 2, 3], "b": [0, 0, 0]}, "sizes": {"out": 3},
    "expect": {"out": [1, 2]}})");
  auto shorter = run_vyre({"run", xor_program(), "--inputs", (dir / "short.run.json").string(), "--check"}, env);
  EXPECT_EQ(shorter.exit_code, 1) << shorter.err;
  EXPECT_NE(shorter.err.find("expected 2 values, got 3"), std::string::npos) << shorter.err;
}

TEST(CliWrites, HelpAndVersionToAFullDiskExitWithTheWriteCode) {
  const std::string v = quoted(VYRE_CLI_PATH);
  for (const std::string args : {"--help", "--version", "run --help", "cache prune --help"}) {
    auto r = shell("exec " + v + " " + args + " >/dev/full");
    EXPECT_EQ(r.exit_code, 6) << args << ": " << r.err;
    EXPECT_NE(r.err.find("cannot write the output to stdout"), std::string::npos) << args << ": " << r.err;
  }
  EXPECT_EQ(run_vyre({"--help"}).exit_code, 0);
}

TEST(CliLimits, ValidateRefusesHundredsOfWorkgroupBuffersSayingHowMany) {
  TempDir dir;
  std::string buffers = R"({"name": "out", "binding": 0, "access": "read_write", "type": "u32", "count": 1, "output": true})";
  for (int i = 0; i < 1000; ++i)
    buffers += R"(, {"name": "w)" + std::to_string(i) + R"(", "access": "workgroup", "type": "u32", "count": 1})";
  write_file(dir / "wg.json", R"({"vyre": 1, "name": "wg", "workgroup_size": [1, 1, 1], "buffers": [)" + buffers +
                                  R"(], "body": [{"store": "out", "index": {"u32": 0}, "value": {"u32": 7}}]})");
  auto r = run_vyre({"validate", (dir / "wg.json").string()});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("wg.json: buffers: the program declares 1000 workgroup buffers; at most 64"), std::string::npos)
      << r.err;
}

// `--timeout` and VYRE_DISPATCH_TIMEOUT: overlong limits saturate (the
// dispatch runs), nan is refused, inf is no limit.
TEST(CliLimits, DispatchTimeoutsSaturateOrAreRefusedNeverOverflow) {
  TempDir dir;
  const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", (dir / "c").string()}};
  const std::vector<std::string> xor_run{"run", xor_program(), "--input", "a=1,2", "--input", "b=3,3", "--size", "out=2"};
  const auto run_with = [&](std::vector<std::string> extra, const std::map<std::string, std::string>& more = {}) {
    std::vector<std::string> args = xor_run;
    args.insert(args.end(), extra.begin(), extra.end());
    std::map<std::string, std::string> all = env;
    all.insert(more.begin(), more.end());
    return run_vyre(args, all);
  };
  for (const std::string timeout : {"inf", "1e10", "9.3e9", "1e300", "0"}) {
    auto r = run_with({"--timeout=" + timeout});
    EXPECT_EQ(r.exit_code, 0) << "--timeout " << timeout << ": " << r.err;
    EXPECT_NE(r.out.find("[2, 1]"), std::string::npos) << "--timeout " << timeout << ": " << r.out;
  }
  auto from_environment = run_with({}, {{"VYRE_DISPATCH_TIMEOUT", "300000000000h"}});
  EXPECT_EQ(from_environment.exit_code, 0) << from_environment.err;
  EXPECT_NE(from_environment.out.find("[2, 1]"), std::string::npos) << from_environment.out;
  for (const std::string timeout : {"nan", "-1", "-inf"}) {
    auto r = run_with({"--timeout=" + timeout});
    EXPECT_EQ(r.exit_code, 3) << "--timeout " << timeout << ": " << r.out;
    EXPECT_NE(r.err.find("--timeout must be"), std::string::npos) << r.err;
  }
}
