// `vyre run` end to end, as separate processes on the real device: every
// example gives its expected outputs on the GPU and on the reference
// interpreter, a second process hits the cache without rewriting it, and a
// corrupted entry is detected and replaced.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

using vyre::test::read_file;
using vyre::test::run_vyre;
using vyre::test::source_path;
using vyre::test::TempDir;
using vyre::test::write_file;

namespace {

const char* kExamples[] = {"xor",       "saxpy",        "collatz", "histogram",   "reduction",
                           "prefix_sum", "matmul_tiled", "softmax", "bitonic_sort", "byte_count", "find_pattern"};

std::vector<std::string> example_run(const std::string& name, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"run", source_path("examples/" + name + ".json"), "--inputs",
                                source_path("examples/" + name + ".run.json"), "--check"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// The one entry in a cache directory: {wgsl path, toml path}.
std::pair<std::filesystem::path, std::filesystem::path> only_entry(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> wgsl;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".wgsl") wgsl.push_back(e.path());
  if (wgsl.size() != 1) throw std::runtime_error("expected exactly one entry, found " + std::to_string(wgsl.size()));
  auto toml = wgsl[0];
  toml.replace_extension(".toml");
  return {wgsl[0], toml};
}

struct FileState {
  ino_t inode;
  timespec mtime;
  bool operator==(const FileState& o) const {
    return inode == o.inode && mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec;
  }
};

FileState state_of(const std::filesystem::path& p) {
  struct stat st{};
  if (stat(p.c_str(), &st) != 0) throw std::runtime_error("stat " + p.string());
  return {st.st_ino, st.st_mtim};
}

nlohmann::json report(const std::filesystem::path& p) { return nlohmann::json::parse(read_file(p)); }

}  // namespace

TEST(CliRun, EveryExampleGivesItsExpectedOutputsOnTheGpu) {
  TempDir cache;
  for (const char* name : kExamples) {
    auto r = run_vyre(example_run(name), {{"VYRE_AOT_CACHE_DIR", cache.path().string()}});
    EXPECT_EQ(r.exit_code, 0) << name << "\n" << r.err;
    // Nothing but the outputs and the verdict of --check, no stray prints.
    EXPECT_TRUE(r.err.starts_with("vyre: check passed: ") && std::count(r.err.begin(), r.err.end(), '\n') == 1)
        << name << ": " << r.err;
  }
}

TEST(CliRun, EveryExampleGivesItsExpectedOutputsOnTheReference) {
  for (const char* name : kExamples) {
    auto r = run_vyre(example_run(name, {"--backend", "reference"}));
    EXPECT_EQ(r.exit_code, 0) << name << "\n" << r.err;
  }
}

TEST(CliRun, SecondProcessHitsTheCacheWithoutRewritingIt) {
  TempDir dir;
  const auto cache = dir / "cache";
  const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", cache.string()}};
  auto first = run_vyre(example_run("collatz", {"--report-json", (dir / "1.json").string()}), env);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_FALSE(report(dir / "1.json")["cache_hit"].get<bool>());
  // Opening the backend is reported stage by stage too.
  const auto timings = report(dir / "1.json")["timings_ms"];
  EXPECT_GT(timings["device"].get<double>(), 0.0);
  EXPECT_GE(timings["backend"].get<double>(),
            timings["instance"].get<double>() + timings["adapter"].get<double>() + timings["device"].get<double>());
  const auto [wgsl, toml] = only_entry(cache);
  const FileState wgsl_before = state_of(wgsl), toml_before = state_of(toml);

  auto second = run_vyre(example_run("collatz", {"--report-json", (dir / "2.json").string()}), env);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_TRUE(report(dir / "2.json")["cache_hit"].get<bool>());
  EXPECT_EQ(report(dir / "2.json")["cache_key"], report(dir / "1.json")["cache_key"]);
  EXPECT_EQ(second.out, first.out);
  EXPECT_TRUE(state_of(wgsl) == wgsl_before) << "the WGSL file was rewritten";
  EXPECT_TRUE(state_of(toml) == toml_before) << "the metadata file was rewritten";
}

TEST(CliRun, ACorruptedEntryOfTheSameLengthIsDetectedAndReplaced) {
  TempDir dir;
  const auto cache = dir / "cache";
  // One entry: the one-element shader (xor's run would otherwise add its widened one).
  const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", cache.string()}, {"VYRE_WIDEN", "0"}};
  auto first = run_vyre(example_run("xor"), env);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto [wgsl, toml] = only_entry(cache);
  const std::string good = read_file(wgsl);

  // Same length, different text: xor becomes or, which would give wrong outputs if served.
  std::string bad = good;
  const size_t at = bad.find(" ^ ");
  ASSERT_NE(at, std::string::npos) << good;
  bad[at + 1] = '|';
  std::filesystem::permissions(wgsl, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
  write_file(wgsl, bad);
  ASSERT_EQ(std::filesystem::file_size(wgsl), good.size());

  auto second = run_vyre(example_run("xor", {"--report-json", (dir / "2.json").string()}), env);
  EXPECT_EQ(second.exit_code, 0) << second.err;  // --check: outputs still right
  EXPECT_EQ(second.out, first.out);
  EXPECT_FALSE(report(dir / "2.json")["cache_hit"].get<bool>());
  EXPECT_EQ(read_file(wgsl), good) << "the bad entry was not replaced";

  auto third = run_vyre(example_run("xor", {"--report-json", (dir / "3.json").string()}), env);
  EXPECT_TRUE(report(dir / "3.json")["cache_hit"].get<bool>());
}

TEST(CliRun, VerboseSaysWhetherTheCacheHitAndTimesEachStage) {
  TempDir cache;
  const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", cache.path().string()}};
  auto miss = run_vyre(example_run("saxpy", {"--verbose"}), env);
  EXPECT_NE(miss.err.find("cache miss"), std::string::npos) << miss.err;
  EXPECT_NE(miss.err.find("lowering"), std::string::npos) << miss.err;
  auto hit = run_vyre(example_run("saxpy", {"--verbose"}), env);
  EXPECT_NE(hit.err.find("cache hit"), std::string::npos) << hit.err;
  for (const char* stage : {"adapter", "shader module", "compute pipeline", "upload", "readback", "total"})
    EXPECT_NE(hit.err.find(stage), std::string::npos) << stage << "\n" << hit.err;
}

// A cold run compiles the shader its dispatch runs and no other: the xor
// example on 5 elements cannot take the widened shader (4 per invocation),
// so only the one-element shader is lowered, reported and kept; on 8
// elements only the widened one.
TEST(CliRun, AColdRunCompilesOnlyTheShaderItsDispatchRuns) {
  for (const auto& [values, width] : std::vector<std::pair<std::string, std::string>>{{"1,2,3,4,5", "1"},
                                                                                    {"1,2,3,4,5,6,7,8", "4"}}) {
    TempDir cache;
    const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", cache.path().string()}};
    auto r = run_vyre({"run", vyre::test::source_path("examples/xor.json").string(), "--input", "a=" + values,
                       "--input", "b=" + values, "--size", "out=" + std::to_string(std::count(values.begin(), values.end(), ',') + 1),
                       "--verbose"},
                      env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    size_t compiles = 0;
    for (size_t at = r.err.find("vyre's cache"); at != std::string::npos; at = r.err.find("vyre's cache", at + 1))
      ++compiles;
    EXPECT_EQ(compiles, 1u) << r.err;
    EXPECT_NE(r.err.find(", " + width + (width == "1" ? " element per" : " elements (widened)")), std::string::npos)
        << r.err;
    auto ls = run_vyre({"cache", "ls", "--json"}, env);
    ASSERT_EQ(ls.exit_code, 0) << ls.err;
    EXPECT_EQ(nlohmann::json::parse(ls.out).size(), 1u) << values << ": " << ls.out;
  }
}

TEST(CliRun, TuneRecordsAChoiceThatALaterProcessReusesAndCacheShowDisplays) {
  TempDir dir;
  const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", (dir / "c").string()},
                                               {"VYRE_TUNE_REPETITIONS", "2"}};
  const std::string report_path = (dir / "r.json").string();
  auto first = run_vyre(example_run("saxpy", {"--tune", "--check", "--report-json", report_path}), env);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(report(report_path)["tuning"]["reused"], false);
  auto second = run_vyre(example_run("saxpy", {"--tune", "--check", "--verbose", "--report-json", report_path}), env);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.err.find("tuning record reused from the cache"), std::string::npos) << second.err;
  const nlohmann::json reused = report(report_path);
  EXPECT_EQ(reused["tuning"]["reused"], true);
  const std::string key = reused["tuning"]["record_key"];
  auto show = run_vyre({"cache", "show", key}, env);
  EXPECT_EQ(show.exit_code, 0) << show.err;
  for (const char* line : {"kind              tuning record", "size class", "chosen", "candidates", "MEDIAN MS"})
    EXPECT_NE(show.out.find(line), std::string::npos) << line << "\n" << show.out;
  auto ls = run_vyre({"cache", "ls"}, env);
  EXPECT_NE(ls.out.find("saxpy (tuning)"), std::string::npos) << ls.out;
  // The reference interpreter has nothing to tune: said, not ignored.
  auto reference = run_vyre(example_run("saxpy", {"--tune", "--backend", "reference"}), env);
  EXPECT_EQ(reference.exit_code, 3);
  EXPECT_NE(reference.err.find("--tune"), std::string::npos) << reference.err;
}

TEST(CliRun, InputsFromOptionsAndFiles) {
  TempDir dir;
  // 1, 2, 3 as raw little-endian u32.
  std::string raw;
  for (uint32_t v : {1u, 2u, 3u}) raw.append(reinterpret_cast<const char*>(&v), 4);
  write_file(dir / "a.bin", raw);
  auto r = run_vyre({"run", source_path("examples/xor.json"), "--input", "a=@" + (dir / "a.bin").string(), "--input",
                     "b=0x10,0x20,0x30", "--size", "out=3"},
                    {{"VYRE_AOT_CACHE_DIR", (dir / "c").string()}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "{\"out\": [17, 34, 51]}\n");
}

TEST(CliRun, F32OutputsReadBackToTheSameBits) {
  TempDir dir;
  write_file(dir / "p.json", R"({"vyre": 1, "workgroup_size": [1, 1, 1],
    "buffers": [{"name": "x", "binding": 0, "access": "read", "type": "f32"},
                {"name": "out", "binding": 1, "access": "read_write", "type": "f32", "output": true}],
    "body": [{"loop": "i", "from": {"u32": 0}, "to": {"len": "x"}, "body": [
      {"store": "out", "index": {"var": "i"}, "value": {"mul": [{"load": "x", "index": {"var": "i"}}, {"f32": 1e30}]}}]},
      {"store": "out", "index": {"u32": 3}, "value": {"f32": 0.1}},
      {"store": "out", "index": {"u32": 4}, "value": {"f32": -0.0}}]})");
  // Overflow gives infinities and NaN stays NaN on every IEEE device (unlike
  // division by zero, which WGSL leaves unspecified).
  auto r = run_vyre({"run", (dir / "p.json").string(), "--input", "x=1e30,-1e30,nan", "--size", "out=5", "--grid", "1"},
                    {{"VYRE_AOT_CACHE_DIR", (dir / "c").string()}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "{\"out\": [\"inf\", \"-inf\", \"nan\", 0.1, -0.0]}\n");
}

TEST(CliRun, InputErrorsSayWhatIsWrongAndExitThree) {
  TempDir cache;
  const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", cache.path().string()}};
  auto missing = run_vyre({"run", source_path("examples/xor.json"), "--input", "a=1,2", "--size", "out=2"}, env);
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_NE(missing.err.find("missing input for 'b'"), std::string::npos) << missing.err;
  auto no_length = run_vyre({"run", source_path("examples/xor.json"), "--input", "a=1", "--input", "b=2"}, env);
  EXPECT_EQ(no_length.exit_code, 3);
  EXPECT_NE(no_length.err.find("--size out=N"), std::string::npos) << no_length.err;
  auto bad_value = run_vyre({"run", source_path("examples/xor.json"), "--input", "a=1,x", "--input", "b=1,2"}, env);
  EXPECT_EQ(bad_value.exit_code, 3);
  EXPECT_NE(bad_value.err.find("'x'"), std::string::npos) << bad_value.err;
  auto unknown = run_vyre({"run", source_path("examples/xor.json"), "--input", "zz=1"}, env);
  EXPECT_EQ(unknown.exit_code, 3);
  EXPECT_NE(unknown.err.find("no buffer named 'zz'"), std::string::npos) << unknown.err;
}

TEST(CliRun, NoUsableAdapterSaysWhatToInstallAndExitsFour) {
  auto r = run_vyre(example_run("xor"), {{"VYRE_WGPU_ADAPTER", "no-such-gpu-anywhere"}});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("no-such-gpu-anywhere"), std::string::npos) << r.err;
  TempDir empty;
  write_file(empty / "none.json", "{}");
  auto no_driver = run_vyre(example_run("xor"), {{"VK_DRIVER_FILES", (empty / "none.json").string()},
                                                 {"VK_ICD_FILENAMES", (empty / "none.json").string()}});
  EXPECT_EQ(no_driver.exit_code, 4) << no_driver.err;
  EXPECT_NE(no_driver.err.find("mesa-vulkan-drivers"), std::string::npos) << no_driver.err;
}

TEST(CliRun, DemoShowsAMissThenHitsAndWhichCacheWasWarm) {
  auto r = run_vyre({"demo"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("passes 2 and 3 hit vyre's cache for every example"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("every pass printed identical outputs"), std::string::npos) << r.out;
  // The driver column: in pass 1 never warm (each program new to the
  // driver: "empty" first, then "others'"); off in pass 2; in pass 3 warm,
  // unless the driver is not one vyre points (then "driver's").
  const size_t pass1 = r.out.find("pass 1:"), pass2 = r.out.find("pass 2:"), pass3 = r.out.find("pass 3:"),
               end = r.out.find("device:");
  ASSERT_TRUE(pass1 != std::string::npos && pass2 != std::string::npos && pass3 != std::string::npos &&
              end != std::string::npos)
      << r.out;
  const std::string first = r.out.substr(pass1, pass2 - pass1), second = r.out.substr(pass2, pass3 - pass2),
                    third = r.out.substr(pass3, end - pass3);
  EXPECT_EQ(first.find(" warm "), std::string::npos) << first;
  EXPECT_TRUE(first.find(" miss  empty ") != std::string::npos || first.find(" miss  driver's ") != std::string::npos)
      << first;
  EXPECT_NE(second.find(" hit   off "), std::string::npos) << second;
  EXPECT_EQ(second.find(" warm "), std::string::npos) << second;
  EXPECT_TRUE(third.find(" hit   warm ") != std::string::npos || third.find(" hit   driver's ") != std::string::npos)
      << third;
}

// docs/cache.md, "Safety": the cache directory and every parent the cache
// creates get mode 0700, whatever the umask, the driver's folder placed
// before the cache opens included.
TEST(CliRun, TheFoldersARunCreatesForTheCacheAreTheUsersAlone) {
  TempDir dir;
  const auto cache = dir / "made" / "by" / "vyre" / "aot";
  auto r = vyre::test::run_process(
      {"/bin/sh", "-c", "umask 022; exec \"$0\" \"$@\"", VYRE_CLI_PATH, "run", source_path("examples/xor.json").string(),
       "--inputs", source_path("examples/xor.run.json").string(), "--check"},
      {{"VYRE_AOT_CACHE_DIR", cache.string()}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& folder : {dir / "made", dir / "made" / "by", dir / "made" / "by" / "vyre", cache}) {
    struct stat st {};
    ASSERT_EQ(::stat(folder.c_str(), &st), 0) << folder;
    EXPECT_EQ(st.st_mode & 07777, 0700u) << folder;
  }
}

// The newcomer's histogram: no bounds check of its own, a 256-bin first
// output. Without a launch it is refused, never run on part of its input;
// with --dim it counts every value, on the GPU and on the reference.
TEST(CliRun, ALaunchIsAskedForUnlessTheProgramIsElementWise) {
  TempDir dir;
  write_file(dir / "histogram.json", R"({"vyre": 1, "workgroup_size": [64, 1, 1],
    "buffers": [{"name": "data", "binding": 0, "access": "read", "type": "u32"},
                {"name": "bins", "binding": 1, "access": "read_write", "type": "u32", "count": 4, "output": true}],
    "body": [{"eval": {"atomic": "add", "buffer": "bins",
              "index": {"and": [{"load": "data", "index": {"gid": "x"}}, {"u32": 3}]}, "value": {"u32": 1}}}]})");
  const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", (dir / "c").string()}};
  const std::string program = (dir / "histogram.json").string();
  const auto refused = run_vyre({"run", program, "--input", "data=0,1,2,3,3,3,7"}, env);
  EXPECT_EQ(refused.exit_code, 3) << refused.err;
  EXPECT_NE(refused.err.find("give --dim X[,Y,Z] (the invocations to run) or --grid X,Y,Z"), std::string::npos)
      << refused.err;
  EXPECT_EQ(refused.out, "");
  for (const char* backend : {"gpu", "reference"}) {
    const auto counted = run_vyre({"run", program, "--input", "data=0,1,2,3,3,3,7", "--dim", "7", "--backend", backend}, env);
    EXPECT_EQ(counted.exit_code, 0) << counted.err;
    EXPECT_EQ(nlohmann::json::parse(counted.out)["bins"], nlohmann::json::parse("[1, 1, 1, 4]")) << backend;
  }
  // A run file's "dim" is the same launch.
  write_file(dir / "histogram.run.json", R"({"inputs": {"data": [0, 1, 2, 3, 3, 3, 7]}, "dim": 7,
                                             "expect": {"bins": [1, 1, 1, 4]}})");
  const auto from_file = run_vyre({"run", program, "--inputs", (dir / "histogram.run.json").string(), "--check"}, env);
  EXPECT_EQ(from_file.exit_code, 0) << from_file.err;
  const auto both = run_vyre({"run", program, "--input", "data=1", "--dim", "1", "--grid", "1"}, env);
  EXPECT_EQ(both.exit_code, 3) << both.err;
}

// --domain-guard asks for the guarded shader, which a dispatch given a
// domain runs anyway: on a program vyre would widen it means the
// one-element shader (never an error), and without a domain it is refused
// with what to give, not run on an unguarded shader of its own.
TEST(CliRun, DomainGuardRunsTheGuardedShaderAndNeedsADomain) {
  TempDir dir;
  const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", (dir / "c").string()},
                                               {"VYRE_AOT_CACHE_READONLY_DIRS", ""}};
  const std::string saxpy = source_path("examples/saxpy.json").string();
  const std::string inputs = source_path("examples/saxpy.run.json").string();
  const auto refused = run_vyre({"run", saxpy, "--inputs", inputs, "--domain-guard"}, env);
  EXPECT_EQ(refused.exit_code, 3) << refused.err;
  EXPECT_NE(refused.err.find("--domain-guard needs a launch domain: give --dim"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.out, "");
  const auto guarded = run_vyre({"run", saxpy, "--inputs", inputs, "--domain-guard", "--dim", "4", "--check"}, env);
  EXPECT_EQ(guarded.exit_code, 0) << guarded.err;
  const auto listed = nlohmann::json::parse(run_vyre({"cache", "ls", "--json"}, env).out);
  EXPECT_EQ(listed.size(), 1u) << "one shader, the guarded one: " << listed.dump();
  const auto same = run_vyre({"run", saxpy, "--inputs", inputs, "--dim", "4", "--check", "--verbose"}, env);
  EXPECT_EQ(same.exit_code, 0) << same.err;
  EXPECT_NE(same.err.find("cache hit"), std::string::npos) << "--dim alone runs the same shader: " << same.err;
  const auto warmed = run_vyre({"cache", "warm", saxpy, "--domain-guard"}, env);
  EXPECT_EQ(warmed.exit_code, 0) << warmed.err << warmed.out;
  EXPECT_NE(warmed.out.find("1 already cached"), std::string::npos) << warmed.out;
}

// A 3x5 domain under 4x4 workgroups: the invocations at x = 5..7 or y = 3
// would store over the next row's elements, so right values prove the
// guard, on the GPU and on the reference, with no launch given.
TEST(CliRun, ADomainDeclaredInAShapeRunsInThatShape) {
  TempDir dir;
  write_file(dir / "rows.json", R"({"vyre": 3, "workgroup_size": [4, 4, 1], "domain": {"buffer": "out", "shape": [3, 5]},
    "buffers": [{"name": "out", "binding": 0, "access": "read_write", "type": "u32", "count": 15, "output": true}],
    "body": [{"store": "out", "index": {"add": [{"mul": [{"gid": "y"}, {"u32": 5}]}, {"gid": "x"}]},
              "value": {"add": [{"mul": [{"gid": "y"}, {"u32": 100}]}, {"gid": "x"}]}}]})");
  const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", (dir / "c").string()}};
  for (const char* backend : {"gpu", "reference"}) {
    const auto r = run_vyre({"run", (dir / "rows.json").string(), "--backend", backend}, env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["out"],
              nlohmann::json::parse("[0, 1, 2, 3, 4, 100, 101, 102, 103, 104, 200, 201, 202, 203, 204]"))
        << backend;
  }
}

TEST(CliRun, BytesHalfWordsAndBoolsGoInAndComeOutAsValues) {
  TempDir dir;
  write_file(dir / "bytes.json", R"({"vyre": 4, "workgroup_size": [4, 1, 1], "domain": "twice",
    "buffers": [{"name": "data", "binding": 0, "access": "read", "type": "u8"},
                {"name": "s", "binding": 1, "access": "read", "type": "i8"},
                {"name": "m", "binding": 2, "access": "read", "type": "bool"},
                {"name": "twice", "binding": 3, "access": "read_write", "type": "u8", "output": true},
                {"name": "neg", "binding": 4, "access": "read_write", "type": "i16", "output": true},
                {"name": "flag", "binding": 5, "access": "read_write", "type": "bool", "output": true}],
    "body": [{"let": "i", "value": {"gid": "x"}},
             {"store": "twice", "index": {"var": "i"}, "value": {"mul": [{"load": "data", "index": {"var": "i"}}, {"u32": 2}]}},
             {"store": "neg", "index": {"var": "i"}, "value": {"mul": [{"load": "s", "index": {"var": "i"}}, {"i32": -300}]}},
             {"store": "flag", "index": {"var": "i"},
              "value": {"land": [{"load": "m", "index": {"var": "i"}}, {"gt": [{"load": "data", "index": {"var": "i"}}, {"u32": 3}]}]}}]})");
  // Seven bytes: the file is the buffer, element for element.
  write_file(dir / "data.bin", std::string("\x01\x02\x80\xff\x04\x05\x06", 7));
  const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", (dir / "c").string()}};
  for (const char* backend : {"gpu", "reference"}) {
    const auto r = run_vyre({"run", (dir / "bytes.json").string(), "--backend", backend, "--input",
                             "data=@" + (dir / "data.bin").string(), "--input", "s=1,-1,127,-128,0,0xff,2",
                             "--input", "m=true,true,false,1,0,true,true", "--size", "twice=7", "--size", "neg=7",
                             "--size", "flag=7"},
                            env);
    EXPECT_EQ(r.exit_code, 0) << backend << ": " << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out),
              nlohmann::json::parse(R"({"twice": [2, 4, 0, 254, 8, 10, 12],
                                        "neg": [-300, 300, 27436, -27136, 0, 300, -600],
                                        "flag": [false, false, false, true, false, true, true]})"))
        << backend << ": " << r.out;
  }
  const auto too_big = run_vyre({"run", (dir / "bytes.json").string(), "--input", "data=1,256", "--input", "s=0,0",
                                 "--input", "m=true,false", "--size", "twice=2", "--size", "neg=2", "--size", "flag=2"},
                                env);
  EXPECT_EQ(too_big.exit_code, 3);
  EXPECT_NE(too_big.err.find("256"), std::string::npos) << too_big.err;
}

TEST(CliRun, CheckBoundsNamesTheFirstOutOfRangeAccessOnTheReference) {
  TempDir dir;
  const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", (dir / "c").string()}};
  const std::string xor_json = source_path("examples/xor.json").string();
  const std::vector<std::string> args{"run", xor_json, "--input", "a=1,2,3,4", "--input", "b=1,2", "--size", "out=4"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> all = args;
    all.insert(all.end(), extra.begin(), extra.end());
    return run_vyre(all, env);
  };
  EXPECT_EQ(with({"--backend", "reference"}).exit_code, 0);  // unchecked: b[2] and b[3] read as 0
  const auto checked = with({"--backend", "reference", "--check-bounds"});
  EXPECT_EQ(checked.exit_code, 1) << checked.err;
  EXPECT_NE(checked.err.find("body[1].then[0].value.xor[1]: a load of 'b' at index 2, out of its 2 elements"),
            std::string::npos)
      << checked.err;
  const auto on_gpu = with({"--check-bounds"});
  EXPECT_EQ(on_gpu.exit_code, 3) << on_gpu.err;
  EXPECT_NE(on_gpu.err.find("--backend reference"), std::string::npos) << on_gpu.err;
}

namespace {

// `args` print `expected` (and a newline) on the GPU and on the reference.
void expect_on_both_backends(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                             const std::string& expected) {
  for (const char* backend : {"gpu", "reference"}) {
    auto with_backend = args;
    with_backend.insert(with_backend.end(), {"--backend", backend});
    const auto r = run_vyre(with_backend, env);
    EXPECT_EQ(r.exit_code, 0) << backend << ": " << r.err;
    EXPECT_EQ(r.out, expected + "\n") << backend;
  }
}

// `args` fail, printing nothing, on a device opened with `feature` masked.
void expect_refused_where_masked(const std::vector<std::string>& args, std::map<std::string, std::string> env,
                                 const std::string& feature) {
  env["VYRE_MASK_FEATURES"] = feature;
  const auto masked = run_vyre(args, env);
  EXPECT_NE(masked.exit_code, 0);
  EXPECT_NE(masked.err.find("needs the device feature " + feature), std::string::npos) << masked.err;
  EXPECT_EQ(masked.out, "");
}

}  // namespace

// f16 values as decimals in and out (the nearest f16 in, the shortest
// decimal that reads back to it out), and the refusal where the device is
// opened without shader-f16.
TEST(CliRun, F16ValuesReadAndPrintAsDecimalsAndAMaskedDeviceRefusesTheProgram) {
  TempDir dir;
  const auto program = dir.path() / "halves.json";
  write_file(program, R"({"vyre": 4, "name": "halves", "workgroup_size": [64, 1, 1],
    "buffers": [{"name": "x", "binding": 0, "access": "read", "type": "f16"},
                {"name": "out", "binding": 1, "access": "read_write", "type": "f16", "output": true}],
    "body": [{"let": "i", "value": {"gid": "x"}},
             {"if": {"lt": [{"var": "i"}, {"len": "out"}]}, "then": [
               {"store": "out", "index": {"var": "i"}, "value": {"mul": [{"load": "x", "index": {"var": "i"}}, {"f16": 0.1}]}}]}]})");
  const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", (dir.path() / "cache").string()}};
  const std::vector<std::string> args{"run", program.string(), "--input", "x=1,3,65504,inf,nan,-0.5", "--size", "out=6"};
  const std::string expected = R"({"out": [0.1, 0.2998, 6548.0, "inf", "nan", -0.05]})";
  expect_on_both_backends(args, env, expected);
  expect_refused_where_masked(args, env, "shader-f16");
  const auto wide = run_vyre({"run", program.string(), "--input", "x=70000", "--size", "out=1"}, env);
  EXPECT_NE(wide.exit_code, 0);
  EXPECT_NE(wide.err.find("beyond the f16 range"), std::string::npos) << wide.err;
}

// f64 values in and out at full precision: the shortest decimal that reads
// back to the double, and the refusal where the device lacks shader-f64.
TEST(CliRun, F64ValuesKeepEveryBitAndAMaskedDeviceRefusesTheProgram) {
  TempDir dir;
  const auto program = dir.path() / "doubles.json";
  write_file(program, R"({"vyre": 4, "name": "doubles", "workgroup_size": [64, 1, 1],
    "buffers": [{"name": "x", "binding": 0, "access": "read", "type": "f64"},
                {"name": "out", "binding": 1, "access": "read_write", "type": "f64", "output": true}],
    "body": [{"let": "i", "value": {"gid": "x"}},
             {"if": {"lt": [{"var": "i"}, {"len": "out"}]}, "then": [
               {"store": "out", "index": {"var": "i"}, "value": {"add": [{"load": "x", "index": {"var": "i"}}, {"f64": 0.1}]}}]}]})");
  const std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", (dir.path() / "cache").string()}};
  const std::vector<std::string> args{"run", program.string(), "--input", "x=0.2,16777216,1e300,-inf,nan,5e-324",
                                      "--size", "out=6"};
  const std::string expected = R"({"out": [0.30000000000000004, 16777216.1, 1e+300, "-inf", "nan", 0.1]})";
  expect_on_both_backends(args, env, expected);
  expect_refused_where_masked(args, env, "shader-f64");
  const auto wide = run_vyre({"run", program.string(), "--input", "x=1e400", "--size", "out=1"}, env);
  EXPECT_NE(wide.exit_code, 0);
  EXPECT_NE(wide.err.find("beyond the f64 range"), std::string::npos) << wide.err;
}
