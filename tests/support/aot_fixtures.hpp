// Synthetic cache inputs shared by the AOT cache tests and their helper
// program: key parts that stand for a program, and the WGSL its "lowering"
// deterministically produces, so that any process can check what it got.
#pragma once

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "vyre/aot.hpp"

namespace vyre::test {

// The cache's suite runs once per store, as Mesa's cache tests run one suite
// against each of its back ends: tests/CMakeLists.txt registers the cache's
// programs a second time with VYRE_AOT_CACHE_STORE=sqlite (the user's own
// setting, so the vyre commands and workers the tests start take it too).
// Unset, the store is chosen as it is for a user: automatically.
inline aot::CacheStore store_under_test() {
  const char* setting = std::getenv("VYRE_AOT_CACHE_STORE");
  if (setting == nullptr) return aot::CacheStore::automatic;
  const std::string_view s(setting);
  if (s == "sqlite") return aot::CacheStore::sqlite;
  if (s == "directory" || s == "files") return aot::CacheStore::directory;
  return aot::CacheStore::automatic;
}

// Options for a cache in `directory` (empty: none) with the store under test.
inline aot::CacheOptions cache_options(const std::filesystem::path& directory = {}) {
  aot::CacheOptions options;
  options.directory = directory;
  options.store = store_under_test();
  return options;
}

// A test of something only the files store has (entry files on disk, their
// names, modes and times): skipped, with the reason, in the SQLite run.
// docs/cache.md, "Which cache tests run on one store", lists them.
#define VYRE_FILES_STORE_ONLY(why)                                               \
  do {                                                                           \
    if (::vyre::test::store_under_test() == ::vyre::aot::CacheStore::sqlite)     \
      GTEST_SKIP() << "for the files store only: " << (why);                     \
  } while (false)

inline aot::KeyParts synthetic_parts(const std::string& program, const std::string& fingerprint = "backend=test") {
  aot::KeyParts parts;
  // Any 64-hex string stands for a program digest; derive one from the name.
  static constexpr char kHex[] = "0123456789abcdef";
  uint64_t h = 1469598103934665603ull;
  for (char c : program) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  for (int i = 0; i < 64; ++i) {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    parts.program_digest.push_back(kHex[(h >> 60) & 0xf]);
  }
  parts.shaping = "";
  parts.lowering_version = 1;
  parts.vyre_version = "test";
  parts.fingerprint = fingerprint;
  return parts;
}

// At least `bytes` bytes of text that only this program lowers to.
inline std::string synthetic_wgsl(const std::string& program, size_t bytes = 256) {
  std::string text = "// lowered " + program + "\n";
  for (size_t line = 0; text.size() < bytes; ++line)
    text += "fn f" + std::to_string(line) + "_" + program + "() -> u32 { return " + std::to_string(line * 7) + "u; }\n";
  return text;
}

// Sets a file's modification time to `age` ago (without following links).
inline void set_age(const std::filesystem::path& path, std::chrono::seconds age) {
  timespec times[2];
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  times[0] = times[1] = timespec{now.tv_sec - static_cast<time_t>(age.count()), now.tv_nsec};
  utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW);
}

inline std::filesystem::path wgsl_path(const std::filesystem::path& dir, const std::string& key) {
  return dir / (key + ".wgsl");
}
inline std::filesystem::path metadata_path(const std::filesystem::path& dir, const std::string& key) {
  return dir / (key + ".toml");
}

// Files in a cache directory that are not the cache's private ones (which
// start with a dot): entry files, and anything else put there.
inline size_t file_count(const std::filesystem::path& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (!e.path().filename().string().starts_with(".")) ++n;
  return n;
}

// Root ignores permission bits, so a read-only directory is made with a
// read-only bind mount where that is allowed, else (not root) with chmod.
// Undo with release_read_only.
inline bool make_read_only(const std::filesystem::path& dir, std::string& how) {
  if (geteuid() != 0) {
    std::filesystem::permissions(dir, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    how = "chmod 0500";
    return true;
  }
  if (mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0) return false;
  if (mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0) {
    umount2(dir.c_str(), MNT_DETACH);
    return false;
  }
  how = "read-only bind mount";
  return true;
}

inline void release_read_only(const std::filesystem::path& dir) {
  if (geteuid() == 0)
    umount2(dir.c_str(), MNT_DETACH);
  else
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all);
}

}  // namespace vyre::test
