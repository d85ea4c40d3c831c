#include "aot/directory.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace vyre::aot {
namespace {

std::string describe_errno(int err) { return std::strerror(err); }

// mkdir -p with mode 0700 for every component this creates.
int make_private_directories(const std::filesystem::path& path) {
  std::filesystem::path partial;
  for (const auto& part : path) {
    partial /= part;
    if (::mkdir(partial.c_str(), 0700) == 0) {
      ::chmod(partial.c_str(), 0700);  // whatever the umask
      continue;
    }
    if (errno != EEXIST) return errno;
  }
  return 0;
}

// The final component may be a symbolic link only when the link itself
// belongs to an accepted owner: a link planted by another user in a shared
// folder must not redirect the cache.
bool final_link_acceptable(const std::filesystem::path& path, OwnerRule rule, std::string& problem) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return true;  // open() reports it
  if (S_ISLNK(st.st_mode) && !owner_accepted(st.st_uid, rule)) {
    problem = path.string() + " is a symbolic link owned by another user (uid " + std::to_string(st.st_uid) + ")";
    return false;
  }
  return true;
}

std::unique_ptr<CacheDirectory> null_with(std::string& problem, std::string text) {
  problem = std::move(text);
  return nullptr;
}

}  // namespace

std::unique_ptr<CacheDirectory> CacheDirectory::open_writable(const std::filesystem::path& path, std::string& problem) {
  if (int err = make_private_directories(path); err != 0)
    return null_with(problem, "cannot create " + path.string() + ": " + describe_errno(err));
  if (!final_link_acceptable(path, OwnerRule::self, problem)) return nullptr;
  Fd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return null_with(problem, "cannot open " + path.string() + ": " + describe_errno(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return null_with(problem, "cannot stat " + path.string() + ": " + describe_errno(errno));
  if (st.st_uid != ::geteuid())
    return null_with(problem, path.string() + " is owned by another user (uid " + std::to_string(st.st_uid) +
                                  "); use a directory of your own (VYRE_AOT_CACHE_DIR)");
  return std::unique_ptr<CacheDirectory>(new CacheDirectory(path, std::move(fd), true));
}

std::unique_ptr<CacheDirectory> CacheDirectory::open_readonly(const std::filesystem::path& path, std::string& problem) {
  if (!final_link_acceptable(path, OwnerRule::self_or_root, problem)) return nullptr;
  Fd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return null_with(problem, "cannot open " + path.string() + ": " + describe_errno(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return null_with(problem, "cannot stat " + path.string() + ": " + describe_errno(errno));
  if (!owner_accepted(st.st_uid, OwnerRule::self_or_root))
    return null_with(problem, path.string() + " is owned by another user (uid " + std::to_string(st.st_uid) + ")");
  return std::unique_ptr<CacheDirectory>(new CacheDirectory(path, std::move(fd), false));
}

int CacheDirectory::subdirectory(const char* name, Fd& slot) {
  std::lock_guard lock(subdir_mutex_);
  if (slot) return slot.get();
  if (!writable_) {
    errno = EROFS;
    return -1;
  }
  if (::mkdirat(fd_.get(), name, 0700) != 0 && errno != EEXIST) return -1;
  Fd fd(::openat(fd_.get(), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return -1;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return -1;
  if (st.st_uid != ::geteuid()) {
    errno = EPERM;
    return -1;
  }
  if ((st.st_mode & 077) != 0) ::fchmod(fd.get(), 0700);
  slot = std::move(fd);
  return slot.get();
}

int CacheDirectory::locks_fd() { return subdirectory(".locks", locks_); }
int CacheDirectory::stats_fd() { return subdirectory(".stats", stats_); }

FileLock CacheDirectory::stripe_lock(const std::string& key, FileLock::Mode mode, int* error) {
  int dir = locks_fd();
  if (dir < 0) {
    if (error != nullptr) *error = errno;
    return {};
  }
  return FileLock::acquire(dir, "stripe-" + key.substr(0, 2), mode, error);
}

FileLock CacheDirectory::cleanup_lock(FileLock::Mode mode, int* error) {
  int dir = locks_fd();
  if (dir < 0) {
    if (error != nullptr) *error = errno;
    return {};
  }
  return FileLock::acquire(dir, "cleanup", mode, error);
}

std::string wgsl_name(const std::string& key) { return key + ".wgsl"; }
std::string metadata_name(const std::string& key) { return key + ".toml"; }

}  // namespace vyre::aot
