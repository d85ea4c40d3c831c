// A team's cache: one group-writable, setgid directory that members of a
// group share, each entry signed by a key the team trusts (docs/cache.md,
// "A team's cache"). Two members (uids made up for the test, one group)
// write and read each other's entries through the cache worker; one who
// signs with no trusted key publishes nothing and replaces nothing; what the
// members make is shared with the group and nobody else. Needs root, to act
// as the members.
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/aot_fixtures.hpp"
#include "support/signing_keys.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"

namespace {

namespace fs = std::filesystem;

constexpr gid_t kTeam = 61000;
constexpr uid_t kAlice = 61001;
constexpr uid_t kBob = 61002;
constexpr uid_t kMallory = 61003;  // in the group, with no key the team trusts

struct MemberRun {
  int exit_code = -1;
  std::string out;
};

// The cache worker (tests/tools/aot_cache_worker.cpp) as another user of the team's group.
MemberRun run_as(uid_t uid, const std::vector<std::string>& args) {
  const fs::path out = fs::temp_directory_path() / ("vyre-team-out-" + std::to_string(::getpid()));
  pid_t pid = fork();
  if (pid == 0) {
    const gid_t groups[] = {kTeam};
    if (setgroups(1, groups) != 0 || setgid(kTeam) != 0 || setuid(uid) != 0) _exit(120);
    umask(077);  // the strictest a member may have: the cache keeps the team's modes anyway
    FILE* f = std::freopen(out.c_str(), "w", stdout);
    if (f == nullptr) _exit(121);
    std::vector<std::string> argv{VYRE_AOT_CACHE_WORKER_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> raw;
    for (auto& a : argv) raw.push_back(a.data());
    raw.push_back(nullptr);
    execv(raw[0], raw.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  MemberRun r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, vyre::test::read_file(out)};
  fs::remove(out);
  return r;
}

long field(const std::string& out, const std::string& name) {
  const size_t at = out.find(name + "=");
  return at == std::string::npos ? -1 : std::stol(out.substr(at + name.size() + 1));
}

class TeamCache : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root, to act as the team's members";
    chmod(tmp_.path().c_str(), 0755);
    team_ = tmp_ / "team";
    fs::create_directories(team_);
    // Made by Alice for the group: group-writable, setgid, nothing for others.
    ASSERT_EQ(chown(team_.c_str(), kAlice, kTeam), 0);
    ASSERT_EQ(chmod(team_.c_str(), 02770), 0);
    keys_ = tmp_ / "keys";
    fs::create_directories(keys_);
    chmod(keys_.c_str(), 0755);
    team_key_ = vyre::test::make_key_pair(keys_, "team");
    other_key_ = vyre::test::make_key_pair(keys_, "other");
  }

  // A member's own copy of a private key (vyre takes only a key of one's
  // own, mode 0600), and the worker's arguments for them.
  std::vector<std::string> member(uid_t uid, const std::vector<std::string>& more, const vyre::test::KeyPair& key) const {
    const fs::path own = keys_ / (std::to_string(uid) + "-" + key.private_pem.filename().string());
    fs::copy_file(key.private_pem, own, fs::copy_options::overwrite_existing);
    EXPECT_EQ(chown(own.c_str(), uid, kTeam), 0);
    chmod(own.c_str(), 0600);
    std::vector<std::string> args{team_.string(), "--signing-key", own.string(), "--trusted-key",
                                  team_key_.public_pem.string()};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }

  vyre::test::TempDir tmp_;
  fs::path team_;
  fs::path keys_;
  vyre::test::KeyPair team_key_;
  vyre::test::KeyPair other_key_;
};

TEST_F(TeamCache, MembersShareSignedEntries) {
  MemberRun alice = run_as(kAlice, member(kAlice, {"--programs", "8"}, team_key_));
  ASSERT_EQ(alice.exit_code, 0) << alice.out;
  EXPECT_EQ(field(alice.out, "misses"), 8);
  // Bob, another member, hits all of Alice's and adds his own.
  MemberRun bob = run_as(kBob, member(kBob, {"--programs", "12"}, team_key_));
  ASSERT_EQ(bob.exit_code, 0) << bob.out;
  EXPECT_EQ(field(bob.out, "hits"), 8);
  EXPECT_EQ(field(bob.out, "misses"), 4);
  MemberRun again = run_as(kAlice, member(kAlice, {"--programs", "12"}, team_key_));
  EXPECT_EQ(field(again.out, "hits"), 12) << again.out;

  // Shared with the group, and nobody else: entries 0640 of the team's
  // group (setgid), the cache's own folders 2770, whatever the umask.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(team_)) {
    struct stat st {};
    ASSERT_EQ(lstat(e.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_gid, kTeam) << e.path();
    const std::string name = e.path().filename().string();
    if (name == ".locks" || name == ".stats") {
      EXPECT_EQ(st.st_mode & 07777, 02770u) << name;
      continue;
    }
    if (name.ends_with(".toml") || name.ends_with(".wgsl")) {
      EXPECT_EQ(st.st_mode & 0777, 0640u) << name;
      entries += name.ends_with(".toml");
    }
  }
  EXPECT_EQ(entries, 12);
  for (const auto& e : fs::directory_iterator(team_ / ".stats")) {
    struct stat st {};
    ASSERT_EQ(lstat(e.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0660u) << e.path();
  }
}

TEST_F(TeamCache, AMemberWithoutATrustedKeyPublishesNothingAndReplacesNothing) {
  ASSERT_EQ(run_as(kAlice, member(kAlice, {"--programs", "5"}, team_key_)).exit_code, 0);
  // Mallory signs with a key the team does not trust: served what is signed,
  // lowers the rest, and publishes none of it.
  MemberRun mallory = run_as(kMallory, member(kMallory, {"--programs", "9"}, other_key_));
  ASSERT_EQ(mallory.exit_code, 0) << mallory.out;
  EXPECT_EQ(field(mallory.out, "hits"), 5);
  MemberRun bob = run_as(kBob, member(kBob, {"--programs", "9"}, team_key_));
  EXPECT_EQ(field(bob.out, "hits"), 5) << "Mallory's lowerings must not be in the team's cache";
  EXPECT_EQ(field(bob.out, "misses"), 4);
}

TEST_F(TeamCache, AnUnsignedPlantIsNeverServedAndIsReplaced) {
  // Mallory, in the group, writes a consistent entry with no signature
  // straight into the directory (as a file, not through vyre).
  const std::string name = "p0";
  vyre::aot::KeyParts parts = vyre::test::synthetic_parts(name);
  // The worker's parts: see tests/tools/aot_cache_worker.cpp (synthetic_parts of its program names).
  const fs::path own_dir = tmp_ / "mallory";  // a cache of Mallory's own, to make a valid unsigned entry
  fs::create_directories(own_dir);
  ASSERT_EQ(chown(own_dir.c_str(), kMallory, kTeam), 0);
  chmod(own_dir.c_str(), 0700);
  pid_t pid = fork();
  if (pid == 0) {
    try {
      const gid_t groups[] = {kTeam};
      if (setgroups(1, groups) != 0 || setgid(kTeam) != 0 || setuid(kMallory) != 0) _exit(120);
      vyre::aot::CacheOptions options;
      options.directory = own_dir;
      options.driver_cache = false;
      vyre::aot::Cache own(options);
      own.load_or_compile(parts, [&] { return std::string("// planted\n"); }, name);
      own.flush();
      for (const char* ext : {".wgsl", ".toml"})
        fs::copy_file(own_dir / (parts.key() + ext), team_ / (parts.key() + ext));
      _exit(0);
    } catch (...) {
      _exit(122);  // never back into the test runner
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_TRUE(fs::exists(team_ / (parts.key() + ".toml")));
  // Alice never gets the plant (the worker checks every text: "wrong" is 0)
  // and her signed entry takes its place.
  MemberRun alice = run_as(kAlice, member(kAlice, {"--programs", "1"}, team_key_));
  ASSERT_EQ(alice.exit_code, 0) << alice.out;
  EXPECT_EQ(field(alice.out, "wrong"), 0);
  EXPECT_EQ(field(alice.out, "misses"), 1);
  // At the planted key now: Alice's signed entry.
  EXPECT_NE(vyre::test::read_file(team_ / (parts.key() + ".toml")).find("ed25519:"), std::string::npos);
  MemberRun bob = run_as(kBob, member(kBob, {"--programs", "1"}, team_key_));
  EXPECT_EQ(field(bob.out, "hits"), 1) << bob.out;
}

TEST_F(TeamCache, WithoutTrustedKeysAMembersDirectoryIsRefusedWithTheWayOut) {
  ASSERT_EQ(run_as(kAlice, member(kAlice, {"--programs", "2"}, team_key_)).exit_code, 0);
  // Bob without VYRE_AOT_TRUSTED_KEYS: no cache (lowers everything), told why.
  const fs::path err = tmp_ / "bob.err";
  vyre::test::write_file(err, "");
  ASSERT_EQ(chown(err.c_str(), kBob, kTeam), 0);
  pid_t pid = fork();
  if (pid == 0) {
    try {
      const gid_t groups[] = {kTeam};
      if (setgroups(1, groups) != 0 || setgid(kTeam) != 0 || setuid(kBob) != 0) _exit(120);
      if (std::freopen(err.c_str(), "w", stderr) == nullptr) _exit(121);
      vyre::aot::CacheOptions options;
      options.directory = team_;
      options.driver_cache = false;
      vyre::aot::Cache cache(options);
      _exit(cache.directory() ? 1 : 0);
    } catch (...) {
      _exit(122);
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_NE(vyre::test::read_file(err).find("VYRE_AOT_TRUSTED_KEYS"), std::string::npos) << vyre::test::read_file(err);
}

}  // namespace
