// `vyre cache`: every subcommand as a user runs it, against a private cache
// directory and a fixed fingerprint.
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "support/aot_fixtures.hpp"
#include "support/signing_keys.hpp"
#include "support/stored_entries.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"
#include "vyre/version.hpp"

namespace {

using nlohmann::json;
using vyre::test::run_vyre;
using vyre::test::source_path;
using vyre::test::TempDir;

const std::string kFingerprint =
    "wgpu-native=29.0.1.1;backend=vulkan;vendor=0x10005;device=0x0000;name=llvmpipe;driver=Mesa 22.3.6";

class AotCli : public ::testing::Test {
 protected:
  std::map<std::string, std::string> env(const std::string& fingerprint = kFingerprint) const {
    // VYRE_WIDEN=0: these tests pin the one-element shader's keys and text;
    // WarmKeysTheShaderAFirstDispatchUses checks the default.
    return {{"VYRE_AOT_CACHE_DIR", tmp.path().string()},
            {"VYRE_BACKEND_FINGERPRINT_OVERRIDE", fingerprint},
            {"VYRE_AOT_CACHE_READONLY_DIRS", ""},
            {"VYRE_WIDEN", "0"}};
  }
  vyre::test::ProcessResult vyre(const std::vector<std::string>& args) const { return run_vyre(args, env()); }
  json vyre_json(const std::vector<std::string>& args) const {
    auto r = vyre(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }
  std::string example(const std::string& name) const { return source_path("examples/" + name + ".json").string(); }
  void warm_examples() const {
    auto r = vyre({"cache", "warm", example("xor"), example("saxpy"), example("collatz")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::string key_of(const std::string& program) const {
    for (const auto& e : vyre_json({"cache", "ls", "--json"}))
      if (e["program"] == program) return e["key"];
    return {};
  }

  TempDir tmp;
};

TEST_F(AotCli, WarmFillsTheCacheWithoutRunningAnything) {
  auto first = vyre({"cache", "warm", example("xor"), example("saxpy")});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("lowered"), std::string::npos);
  EXPECT_NE(first.out.find("2 lowered, 0 already cached"), std::string::npos) << first.out;
  EXPECT_EQ(first.err.find('\r'), std::string::npos);  // no progress bar when stderr is not a terminal
  auto second = vyre({"cache", "warm", example("xor")});
  EXPECT_NE(second.out.find("0 lowered, 1 already cached"), std::string::npos) << second.out;
}

// Runs `vyre args...` with stderr on a pseudo-terminal; returns what it drew there.
std::string stderr_on_a_terminal(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) return "no pty";
  std::string slave_name = ptsname(master);
  pid_t pid = fork();
  if (pid == 0) {
    int slave = open(slave_name.c_str(), O_RDWR | O_NOCTTY);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(slave, 2);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv{const_cast<char*>(VYRE_CLI_PATH)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  std::string drawn;
  char buf[4096];
  for (;;) {
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) {
      if (waitpid(pid, nullptr, WNOHANG) == pid) break;
      continue;
    }
    ssize_t n = read(master, buf, sizeof buf);
    if (n <= 0) break;
    drawn.append(buf, static_cast<size_t>(n));
  }
  waitpid(pid, nullptr, 0);
  close(master);
  return drawn;
}

TEST_F(AotCli, WarmDrawsAProgressBarOnlyOnATerminal) {
  std::string drawn = stderr_on_a_terminal({"cache", "warm", example("xor"), example("saxpy")}, env());
  if (drawn == "no pty") GTEST_SKIP() << "no pseudo-terminal here";
  EXPECT_NE(drawn.find("\r"), std::string::npos);
  EXPECT_NE(drawn.find("/2 "), std::string::npos) << drawn;
  EXPECT_NE(drawn.find("[###"), std::string::npos) << drawn;
}

TEST_F(AotCli, WarmForATargetFingerprintAndConfig) {
  auto r = vyre({"cache", "warm", example("xor"), "--fingerprint", "backend=metal;device=target", "--workgroup", "32"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto entries = vyre_json({"cache", "ls", "--json"});
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0]["fingerprint"], "backend=metal;device=target");
  EXPECT_EQ(entries[0]["parts"]["shaping"], "workgroup=32,1,1");
}

TEST_F(AotCli, WarmKeysTheShaderAFirstDispatchUses) {
  // By default an element-wise program's first dispatch runs its widened
  // shader, so warm keys that one; VYRE_WIDEN=0 keys the one-element shader.
  auto widened_env = env();
  widened_env.erase("VYRE_WIDEN");
  ASSERT_EQ(run_vyre({"cache", "warm", example("xor"), example("reduction")}, widened_env).exit_code, 0);
  auto explained = json::parse(run_vyre({"cache", "explain", example("xor"), "--json"}, widened_env).out);
  EXPECT_TRUE(explained["hit"].get<bool>()) << explained.dump();
  std::map<std::string, std::string> shaping;
  for (const auto& e : vyre_json({"cache", "ls", "--json"})) shaping[e["program"]] = e["parts"]["shaping"];
  EXPECT_EQ(shaping["xor"], "vector_width=4");
  EXPECT_EQ(shaping["reduction"], "") << "workgroup memory: not element-wise, one element per invocation";
  auto one_element = json::parse(vyre({"cache", "explain", example("xor"), "--json"}).out);
  EXPECT_FALSE(one_element["hit"].get<bool>()) << "VYRE_WIDEN=0 keys the one-element shader, not yet cached";
}

TEST_F(AotCli, WarmReportsBadProgramsAndGoesOn) {
  vyre::test::write_file(tmp / "broken.json", "{\"vyre\": 1}");
  auto r = vyre({"cache", "warm", (tmp / "broken.json").string(), example("xor")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("broken.json"), std::string::npos);
  EXPECT_NE(r.out.find("1 lowered"), std::string::npos) << r.out;
}

TEST_F(AotCli, StatsJsonHasTheDocumentedKeys) {
  warm_examples();
  vyre({"cache", "warm", example("xor")});
  auto stats = vyre_json({"cache", "stats", "--json"});
  for (const char* key : {"hits", "misses", "writes", "evictions", "bad_entries", "entries", "bytes", "errors",
                          "time_saved_ms", "lowering_ms", "older_versions"})
    EXPECT_TRUE(stats.contains(key)) << key;
  EXPECT_EQ(stats["hits"], 1);
  EXPECT_EQ(stats["misses"], 3);
  EXPECT_EQ(stats["writes"], 3);
  EXPECT_EQ(stats["entries"], 3);
  EXPECT_GT(stats["bytes"].get<uint64_t>(), 0u);
  auto text = vyre({"cache", "stats"});
  EXPECT_NE(text.out.find("hits              1"), std::string::npos) << text.out;
}

TEST_F(AotCli, ZeroStatsResetsTheCounters) {
  warm_examples();
  ASSERT_EQ(vyre({"cache", "zero-stats"}).exit_code, 0);
  auto stats = vyre_json({"cache", "stats", "--json"});
  EXPECT_EQ(stats["misses"], 0);
  EXPECT_EQ(stats["writes"], 0);
  EXPECT_EQ(stats["entries"], 3);
}

TEST_F(AotCli, LsShowsKeyProgramFingerprintSizeAndAge) {
  warm_examples();
  auto text = vyre({"cache", "ls"});
  ASSERT_EQ(text.exit_code, 0);
  // The fingerprint is cut to fit 100 columns; --json has it whole.
  for (const char* column : {"KEY", "PROGRAM", "SIZE", "AGE", "FINGERPRINT", "xor", "saxpy", "collatz", "wgpu-native=29"})
    EXPECT_NE(text.out.find(column), std::string::npos) << column;
  auto entries = vyre_json({"cache", "ls", "--json"});
  ASSERT_EQ(entries.size(), 3u);
  for (const auto& e : entries) {
    EXPECT_TRUE(vyre::aot::is_valid_key(e["key"].get<std::string>()));
    EXPECT_EQ(e["state"], "ok");
    EXPECT_EQ(e["fingerprint"], kFingerprint);
    EXPECT_GT(e["wgsl_bytes"].get<uint64_t>(), 0u);
    EXPECT_GT(e["last_used_unix_ms"].get<int64_t>(), 0);
  }
}

TEST_F(AotCli, LsFitsOneHundredColumnsAndEscapesControlCharacters) {
  vyre::test::write_file(tmp / "p.json", R"({"vyre": 1, "name": "two\nlines\u001b[31m and a name much longer than the column",
    "workgroup_size": [1, 1, 1],
    "buffers": [{"name": "out", "binding": 0, "access": "read_write", "type": "u32", "output": true}], "body": []})");
  ASSERT_EQ(vyre({"cache", "warm", (tmp / "p.json").string(), example("xor")}).exit_code, 0);
  auto text = vyre({"cache", "ls"});
  ASSERT_EQ(text.exit_code, 0);
  std::istringstream lines(text.out);
  size_t rows = 0;
  for (std::string line; std::getline(lines, line); ++rows) EXPECT_LE(line.size(), 100u) << line;
  EXPECT_EQ(rows, 3u) << text.out;  // a header and two entries: no raw newline from a name
  EXPECT_NE(text.out.find("two\\nlines\\x1b[31m"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find('\x1b'), std::string::npos);
}

TEST_F(AotCli, WarmSkipsRunFilesWithANote) {
  auto r = vyre({"cache", "warm", example("xor"), source_path("examples/xor.run.json").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("xor.run.json: skipped: a run file"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("1 programs: 1 lowered"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(1 run files skipped)"), std::string::npos) << r.out;
}

TEST_F(AotCli, ShowPrintsAVerifiedEntryByKeyOrPrefix) {
  warm_examples();
  std::string key = key_of("xor");
  ASSERT_FALSE(key.empty());
  auto by_prefix = vyre({"cache", "show", key.substr(0, 10)});
  ASSERT_EQ(by_prefix.exit_code, 0) << by_prefix.err;
  EXPECT_NE(by_prefix.out.find(key), std::string::npos);
  EXPECT_NE(by_prefix.out.find("state             ok"), std::string::npos);
  auto j = vyre_json({"cache", "show", key, "--json"});
  EXPECT_EQ(j["program"], "xor");
  EXPECT_EQ(j["parts"]["vyre_version"], vyre::kVersion);
  auto wgsl = vyre({"cache", "show", key, "--wgsl"});
  EXPECT_EQ(wgsl.out, run_vyre({"lower", example("xor")}).out);
  EXPECT_EQ(vyre({"cache", "show", "../../etc/passwd"}).exit_code, 3);
  EXPECT_EQ(vyre({"cache", "show", std::string(64, 'f')}).exit_code, 3);
}

TEST_F(AotCli, VerifyReportsAndRemovesBadEntriesAndExitsOne) {
  warm_examples();
  EXPECT_EQ(vyre({"cache", "verify"}).exit_code, 0);
  std::string key = key_of("saxpy");
  using vyre::test::EntryPart;
  std::string text = vyre::test::read_entry_part(tmp.path(), key, EntryPart::wgsl).value_or("");
  ASSERT_FALSE(text.empty());
  text[text.size() / 2] ^= 0x20;
  vyre::test::write_entry_part(tmp.path(), key, EntryPart::wgsl, text);
  auto r = vyre({"cache", "verify", "--json"});
  EXPECT_EQ(r.exit_code, 1);
  auto report = json::parse(r.out);
  EXPECT_EQ(report["checked"], 3);
  EXPECT_EQ(report["good"], 2);
  ASSERT_EQ(report["bad"].size(), 1u);
  EXPECT_EQ(report["bad"][0]["key"], key);
  EXPECT_EQ(report["removed"], 1);
  EXPECT_EQ(vyre({"cache", "verify"}).exit_code, 0);
  EXPECT_EQ(vyre_json({"cache", "stats", "--json"})["bad_entries"], 1);
}

TEST_F(AotCli, PruneAndClear) {
  warm_examples();
  auto pruned = vyre_json({"cache", "prune", "--max-entries", "1", "--json"});
  EXPECT_EQ(pruned["evicted"], 2);
  EXPECT_EQ(pruned["entries"], 1);
  EXPECT_EQ(vyre({"cache", "prune", "--older-than", "soon"}).exit_code, 2);
  EXPECT_EQ(vyre({"cache", "prune", "--max-bytes", "lots"}).exit_code, 2);
  auto older = vyre_json({"cache", "prune", "--older-than", "1d", "--json"});
  EXPECT_EQ(older["evicted"], 0);
  auto cleared = vyre({"cache", "clear"});
  EXPECT_EQ(cleared.exit_code, 0);
  EXPECT_EQ(cleared.out, "1 entries and 0 driver data folders removed\n");
  EXPECT_TRUE(vyre_json({"cache", "ls", "--json"}).empty());
}

// docs/cache.md, "Older versions": entries another version wrote are
// counted by stats and verify and removed by prune --older-versions alone.
TEST_F(AotCli, OlderVersionsAreCountedAndPrunedOnRequest) {
  warm_examples();
  {
    vyre::aot::CacheOptions options = vyre::test::cache_options();
    options.directory = tmp.path();
    options.driver_cache = false;
    vyre::aot::Cache cache(options);
    vyre::aot::KeyParts older = vyre::test::synthetic_parts("written before an upgrade");
    older.vyre_version = "0.0.1";
    (void)cache.load_or_compile(older, [] { return std::string("// old\n"); }, "old");
    older.vyre_version = vyre::kVersion;  // this vyre, another lowering version
    (void)cache.load_or_compile(older, [] { return std::string("// old\n"); }, "old");
  }
  auto stats = vyre_json({"cache", "stats", "--json"});
  EXPECT_EQ(stats["entries"], 5);
  EXPECT_EQ(stats["older_versions"], 2);
  auto text = vyre({"cache", "stats"});
  EXPECT_NE(text.out.find("older versions    2 (never served; vyre cache prune --older-versions removes them)"),
            std::string::npos)
      << text.out;
  auto verified = vyre_json({"cache", "verify", "--json"});
  EXPECT_EQ(verified["good"], 5);
  EXPECT_EQ(verified["older_versions"], 2);
  auto verify_text = vyre({"cache", "verify"});
  EXPECT_EQ(verify_text.exit_code, 0) << "entries of other versions are not bad";
  EXPECT_NE(verify_text.out.find("2 good but of another version"), std::string::npos) << verify_text.out;
  auto plain = vyre_json({"cache", "prune", "--json"});
  EXPECT_EQ(plain["older_versions_removed"], 0);
  EXPECT_EQ(plain["entries"], 5);
  auto pruned = vyre_json({"cache", "prune", "--older-versions", "--json"});
  EXPECT_EQ(pruned["older_versions_removed"], 2);
  EXPECT_EQ(pruned["evicted"], 0);
  EXPECT_EQ(pruned["entries"], 3);
  EXPECT_EQ(vyre_json({"cache", "stats", "--json"})["older_versions"], 0);
  for (const auto* name : {"xor", "saxpy", "collatz"}) EXPECT_FALSE(key_of(name).empty()) << name << " was removed";
  auto again = vyre({"cache", "prune", "--older-versions"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out.rfind("0 of other versions removed, 0 evicted", 0), 0u) << again.out;
}

TEST_F(AotCli, ExportThenImportIntoAnotherCache) {
  warm_examples();
  TempDir shipped, other;
  auto exported = vyre({"cache", "export", (shipped / "layer").string()});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_EQ(exported.out, "3 copied, 0 already there, 0 bad entries skipped; driver data: 0 folders copied\n");
  auto env2 = env();
  env2["VYRE_AOT_CACHE_DIR"] = other.path().string();
  auto imported = run_vyre({"cache", "import", (shipped / "layer").string()}, env2);
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_EQ(imported.out, "3 copied, 0 already there, 0 bad entries skipped; driver data: 0 folders copied\n");
  auto warm = run_vyre({"cache", "warm", example("xor")}, env2);
  EXPECT_NE(warm.out.find("1 already cached"), std::string::npos) << warm.out;
  // The export works as a read-only layer too.
  auto env3 = env();
  env3["VYRE_AOT_CACHE_DIR"] = (other / "empty").string();
  env3["VYRE_AOT_CACHE_READONLY_DIRS"] = (shipped / "layer").string();
  auto layered = run_vyre({"cache", "explain", example("saxpy")}, env3);
  EXPECT_NE(layered.out.find("hit in " + (shipped / "layer").string()), std::string::npos) << layered.out;
}

TEST_F(AotCli, ExplainPrintsEveryComponentAndItsHash) {
  warm_examples();
  auto r = vyre({"cache", "explain", example("xor")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* part : {"program digest:", "shaping:", "lowering version:", "vyre version:", "fingerprint:",
                           "spec hash:", "key:", "result:           hit"})
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  auto j = vyre_json({"cache", "explain", example("xor"), "--json"});
  EXPECT_EQ(j["hit"], true);
  ASSERT_EQ(j["components"].size(), 5u);
  for (const auto& c : j["components"]) EXPECT_EQ(c["hash"].get<std::string>().size(), 64u);
  EXPECT_EQ(j["key"], key_of("xor"));
}

TEST_F(AotCli, ExplainNamesTheDriverWhenOnlyTheDriverChanged) {
  warm_examples();
  std::string upgraded = kFingerprint;
  upgraded.replace(upgraded.find("22.3.6"), 6, "23.1.0");
  auto r = run_vyre({"cache", "explain", example("xor")}, env(upgraded));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("result:           miss"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fingerprint.driver: cached \"Mesa 22.3.6\", now \"Mesa 23.1.0\""), std::string::npos) << r.out;
  auto j = json::parse(run_vyre({"cache", "explain", example("xor"), "--json"}, env(upgraded)).out);
  EXPECT_EQ(j["hit"], false);
  ASSERT_EQ(j["same_program"].size(), 1u);
  EXPECT_EQ(j["same_program"][0]["differences"].size(), 1u);
}

// A target machine named by its full fingerprint (not the override): the
// WGSL key holds only what shapes the text, so a driver update is a hit.
TEST_F(AotCli, ADriverUpdateOfANamedTargetKeepsItsEntries) {
  auto r = run_vyre({"cache", "warm", example("xor"), example("softmax"), "--fingerprint", kFingerprint}, env(""));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string upgraded = kFingerprint;
  upgraded.replace(upgraded.find("22.3.6"), 6, "23.1.0");
  for (const char* name : {"xor", "softmax"}) {
    auto j = json::parse(
        run_vyre({"cache", "explain", example(name), "--fingerprint", upgraded, "--json"}, env("")).out);
    EXPECT_EQ(j["hit"], true) << name << ": " << j.dump();
    EXPECT_EQ(j["components"][4]["value"], "target=wgsl");
    EXPECT_EQ(j["device_fingerprint"], upgraded) << "the driver data tier is keyed by the full fingerprint";
    EXPECT_TRUE(j["driver_folder"].is_null()) << "no driver data is kept for a device never run here";
  }
  // softmax loops: on this llvmpipe target it is keyed, and lowered, with the loop guard.
  auto softmax = json::parse(run_vyre({"cache", "explain", example("softmax"), "--fingerprint", kFingerprint,
                                       "--json"}, env("")).out);
  EXPECT_EQ(softmax["components"][1]["value"], "loop_guard");
}

TEST_F(AotCli, ExplainNamesTheShapingWhenTheConfigChanged) {
  warm_examples();
  auto r = vyre({"cache", "explain", example("xor"), "--workgroup", "32"});
  EXPECT_NE(r.out.find("shaping: cached \"\", now \"workgroup=32,1,1\""), std::string::npos) << r.out;
}

TEST_F(AotCli, ExplainSaysWhenNothingIsCachedForTheProgram) {
  auto r = vyre({"cache", "explain", example("collatz")});
  EXPECT_NE(r.out.find("no entry for this program digest is cached"), std::string::npos) << r.out;
}

TEST_F(AotCli, ExplainSaysWhyTheEntryAtTheKeyIsBad) {
  warm_examples();
  std::string key = key_of("xor");
  vyre::test::write_entry_part(tmp.path(), key, vyre::test::EntryPart::wgsl, "truncated");
  auto r = vyre({"cache", "explain", example("xor")});
  EXPECT_NE(r.out.find("is bad"), std::string::npos) << r.out;
}

TEST_F(AotCli, WithoutAnyDirectoryTheCommandsSaySo) {
  auto r = run_vyre({"cache", "stats"}, {{"VYRE_AOT_CACHE_DIR", ""}, {"XDG_CACHE_HOME", ""}, {"HOME", ""}});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("no disk cache"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("AOT cache disabled"), std::string::npos) << r.err;
  auto clear = run_vyre({"cache", "clear"}, {{"VYRE_AOT_CACHE_DIR", ""}, {"XDG_CACHE_HOME", ""}, {"HOME", ""}});
  EXPECT_EQ(clear.exit_code, 3);
  EXPECT_NE(clear.err.find("VYRE_AOT_CACHE_DIR"), std::string::npos) << clear.err;
}

}  // namespace

// docs/cli.md: a write the cache directory refuses exits 6, for the
// commands that exist to write there as for `clear`.
TEST_F(AotCli, PruneAndZeroStatsOnAReadOnlyCacheExitWithTheWriteCode) {
  warm_examples();
  ASSERT_EQ(vyre({"cache", "stats"}).exit_code, 0);
  std::filesystem::remove_all(tmp / ".locks");  // so that prune must make it
  std::string how;
  if (!vyre::test::make_read_only(tmp.path(), how)) GTEST_SKIP() << "cannot make a read-only directory here";
  auto pruned = vyre({"cache", "prune", "--max-entries", "1"});
  auto zeroed = vyre({"cache", "zero-stats"});
  vyre::test::release_read_only(tmp.path());
  EXPECT_EQ(pruned.exit_code, 6) << how << ": " << pruned.err;
  EXPECT_NE(pruned.err.find("vyre: error: "), std::string::npos) << pruned.err;
  EXPECT_EQ(zeroed.exit_code, 6) << how << ": " << zeroed.err;
  EXPECT_NE(zeroed.err.find("cannot reset the statistics"), std::string::npos) << zeroed.err;
}

TEST_F(AotCli, ImportFromAFolderOthersCanWriteSaysWhatHelpsWithOrWithoutKeys) {
  warm_examples();
  TempDir shipped, other, keys;
  ASSERT_EQ(vyre({"cache", "export", (shipped / "layer").string()}).exit_code, 0);
  std::filesystem::permissions(shipped / "layer", std::filesystem::perms::all);  // 0777
  const auto pair = vyre::test::make_key_pair(keys.path(), "fleet");
  for (const bool with_keys : {false, true}) {
    auto env2 = env();
    env2["VYRE_AOT_CACHE_DIR"] = other.path().string();
    if (with_keys) env2["VYRE_AOT_TRUSTED_KEYS"] = pair.public_pem.string();
    auto imported = run_vyre({"cache", "import", (shipped / "layer").string()}, env2);
    EXPECT_EQ(imported.exit_code, 3) << imported.out;
    EXPECT_NE(imported.err.find("world-writable (mode 0777)"), std::string::npos) << imported.err;
    EXPECT_NE(imported.err.find("chmod go-w"), std::string::npos) << imported.err;
    EXPECT_EQ(imported.err.find("set VYRE_AOT_TRUSTED_KEYS"), std::string::npos) << with_keys << ": " << imported.err;
    auto listed = run_vyre({"cache", "ls", "--json"}, env2);
    EXPECT_EQ(json::parse(listed.out).size(), 0u) << listed.out;
  }
}
