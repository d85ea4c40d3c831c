#include "aot/local/directory.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
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
sys::Result<void> final_link_acceptable(const std::filesystem::path& path, sys::OwnerRule rule) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};  // open() reports it
  if (S_ISLNK(st.st_mode) && !sys::owner_accepted(st.st_uid, rule))
    return sys::failure(sys::Fault::unsafe, path.string() + " is a symbolic link owned by another user (uid " +
                                                std::to_string(st.st_uid) + ")");
  return {};
}

bool writable_by_others(const struct stat& st) { return (st.st_mode & (S_IWGRP | S_IWOTH)) != 0; }

sys::Failure writable_by_others_failure(const std::filesystem::path& path, const struct stat& st) {
  char mode[8];
  (void)std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));  // 4 digits fit
  return sys::failure(sys::Fault::unsafe, path.string() + " is group- or world-writable (mode " + mode +
                                              "): other users could plant entries; `chmod go-w " + path.string() +
                                              "`, or set VYRE_AOT_TRUSTED_KEYS to serve only signed entries from it");
}

sys::Failure io_failure(int err, const std::string& what) { return sys::failure(sys::Fault::io, what + ": " + describe_errno(err), err); }

}  // namespace

sys::Result<std::unique_ptr<CacheDirectory>> CacheDirectory::open_writable(const std::filesystem::path& path,
                                                                           bool signatures_trusted) {
  if (int err = make_private_directories(path); err != 0) return io_failure(err, "cannot create " + path.string());
  if (auto link = final_link_acceptable(path, sys::OwnerRule::self); !link) return link.failure();
  sys::Fd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return io_failure(errno, "cannot open " + path.string());
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return io_failure(errno, "cannot stat " + path.string());
  // A team's shared directory (group-writable, made by another member) is
  // used as a signed-only one: with trusted keys, and writable to this user.
  const bool team = st.st_uid != ::geteuid() && writable_by_others(st) && signatures_trusted;
  if (st.st_uid != ::geteuid() && !team)
    return sys::failure(sys::Fault::unsafe,
                        path.string() + " is owned by another user (uid " + std::to_string(st.st_uid) + ")" +
                            (writable_by_others(st) ? "; a team's shared cache is used only with VYRE_AOT_TRUSTED_KEYS "
                                                      "(docs/cache.md, \"A team's cache\")"
                                                    : "; use a directory of your own (VYRE_AOT_CACHE_DIR)"));
  if (team && ::faccessat(fd.get(), ".", W_OK | X_OK, AT_EACCESS) != 0)
    return io_failure(errno, "cannot write into the shared directory " + path.string());
  if (writable_by_others(st) && !signatures_trusted) return writable_by_others_failure(path, st);
  std::unique_ptr<CacheDirectory> dir(new CacheDirectory(path, std::move(fd), true));
  dir->signed_only_ = writable_by_others(st);
  return dir;
}

sys::Result<std::unique_ptr<CacheDirectory>> CacheDirectory::open_readonly(const std::filesystem::path& path,
                                                                           bool signatures_trusted) {
  if (auto link = final_link_acceptable(path, signatures_trusted ? sys::OwnerRule::any : sys::OwnerRule::self_or_root);
      !link)
    return link.failure();
  sys::Fd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return io_failure(errno, "cannot open " + path.string());
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return io_failure(errno, "cannot stat " + path.string());
  const bool foreign = !sys::owner_accepted(st.st_uid, sys::OwnerRule::self_or_root);
  if (foreign && !signatures_trusted)
    return sys::failure(sys::Fault::unsafe, path.string() + " is owned by another user (uid " +
                                                std::to_string(st.st_uid) +
                                                "); set VYRE_AOT_TRUSTED_KEYS to the public key that signs its entries "
                                                "to use it");
  if (writable_by_others(st) && !signatures_trusted) return writable_by_others_failure(path, st);
  std::unique_ptr<CacheDirectory> dir(new CacheDirectory(path, std::move(fd), false));
  dir->signed_only_ = foreign || writable_by_others(st);
  return dir;
}

sys::Result<int> CacheDirectory::subdirectory(const char* name, sys::Fd& slot) {
  std::lock_guard lock(subdir_mutex_);
  if (slot) return slot.get();
  if (!writable_) return sys::failure(sys::Fault::read_only, path_.string() + " is a read-only layer", EROFS);
  // A shared (signed-only) directory's own folders are shared with it:
  // group-writable and setgid, of any member (their files are checked by
  // sys::owner_rule_in); a private one's are the user's alone.
  const mode_t mode = signed_only_ ? 02770 : 0700;
  const bool made = ::mkdirat(fd_.get(), name, mode) == 0;
  if (!made && errno != EEXIST) return sys::errno_failure(errno);
  sys::Fd fd(::openat(fd_.get(), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return sys::errno_failure(errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return sys::errno_failure(errno);
  if (signed_only_) {
    if (made) ::fchmod(fd.get(), mode);  // whatever the umask
    else if (st.st_uid != ::geteuid() && (st.st_mode & S_IWGRP) == 0) return sys::errno_failure(EPERM);
  } else {
    if (st.st_uid != ::geteuid()) return sys::errno_failure(EPERM);
    if ((st.st_mode & 077) != 0) ::fchmod(fd.get(), 0700);
  }
  slot = std::move(fd);
  return slot.get();
}

sys::Result<int> CacheDirectory::locks_fd() { return subdirectory(".locks", locks_); }
sys::Result<int> CacheDirectory::stats_fd() { return subdirectory(".stats", stats_); }

sys::Result<sys::FileLock> CacheDirectory::stripe_lock(const std::string& key, sys::FileLock::Mode mode) {
  auto dir = locks_fd();
  if (!dir) return dir.failure();
  return sys::FileLock::acquire(*dir, "stripe-" + key.substr(0, 2), mode);
}

sys::Result<sys::FileLock> CacheDirectory::cleanup_lock(sys::FileLock::Mode mode) {
  auto dir = locks_fd();
  if (!dir) return dir.failure();
  return sys::FileLock::acquire(*dir, "cleanup", mode);
}

}  // namespace vyre::aot
