#include "sys/safe_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>

namespace vyre::sys {

Failure errno_failure(int error) { return failure(Fault::io, std::strerror(error), error); }

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

bool owner_accepted(uid_t uid, OwnerRule rule) {
  return rule == OwnerRule::any || uid == ::geteuid() || (rule == OwnerRule::self_or_root && uid == 0);
}

namespace {

int64_t mtime_ms_of(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1'000'000;
}

std::string file_kind(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

}  // namespace

FileFacts file_facts_at(int dirfd, const std::string& name, OwnerRule rule) {
  FileFacts facts;
  struct stat st {};
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return facts;
  facts.exists = true;
  facts.regular = S_ISREG(st.st_mode);
  facts.owner_ok = owner_accepted(st.st_uid, rule);
  facts.size = static_cast<uint64_t>(st.st_size);
  facts.mtime_ms = mtime_ms_of(st);
  return facts;
}

Result<FileContents> read_file_at(int dirfd, const std::string& name, uint64_t max_bytes, OwnerRule rule) {
  struct stat before {};
  if (::fstatat(dirfd, name.c_str(), &before, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return failure(Fault::missing, name + " does not exist", ENOENT);
    return errno_failure(errno);
  }
  if (!S_ISREG(before.st_mode)) return failure(Fault::unsafe, name + " is " + file_kind(before.st_mode));
  if (!owner_accepted(before.st_uid, rule))
    return failure(Fault::unsafe, name + " is owned by another user (uid " + std::to_string(before.st_uid) + ")");
  if (static_cast<uint64_t>(before.st_size) > max_bytes)
    return failure(Fault::too_large, name + " has " + std::to_string(before.st_size) + " bytes, over the bound of " +
                                         std::to_string(max_bytes));

  Fd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!fd) {
    if (errno == ENOENT) return failure(Fault::missing, name + " does not exist", ENOENT);
    if (errno == ELOOP) return failure(Fault::unsafe, name + " is a symbolic link");
    return errno_failure(errno);
  }
  struct stat opened {};
  if (::fstat(fd.get(), &opened) != 0) return errno_failure(errno);
  // The name may have been replaced between lstat and open.
  if (opened.st_dev != before.st_dev || opened.st_ino != before.st_ino || !S_ISREG(opened.st_mode) ||
      !owner_accepted(opened.st_uid, rule))
    return failure(Fault::unsafe, name + " changed while it was opened");

  uint64_t expected = static_cast<uint64_t>(opened.st_size);
  if (expected > max_bytes)
    return failure(Fault::too_large, name + " is over the bound of " + std::to_string(max_bytes) + " bytes");
  FileContents result;
  result.data.resize(static_cast<size_t>(expected) + 1);  // one more byte to notice growth
  size_t filled = 0;
  const size_t limit = static_cast<size_t>(max_bytes) + 1;
  for (;;) {
    if (filled == result.data.size()) {
      if (result.data.size() >= limit) break;
      result.data.resize(std::min(limit, result.data.size() * 2 + 4096));
    }
    const size_t wanted = result.data.size() - filled;
    ssize_t n = ::read(fd.get(), result.data.data() + filled, wanted);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_failure(errno);
    }
    if (n == 0) break;
    filled += static_cast<size_t>(n);
    // A local file reads short only at its end: no second read to see 0. A
    // network or FUSE file system may answer short before it (FUSE with
    // direct I/O, 9p, CIFS): short of the size fstat gave, read on.
    if (static_cast<size_t>(n) < wanted && filled >= expected) break;
  }
  if (filled > max_bytes)
    return failure(Fault::too_large, name + " grew over the bound of " + std::to_string(max_bytes) + " bytes");
  result.data.resize(filled);
  result.mtime_ms = mtime_ms_of(opened);
  return result;
}

std::string temporary_name(std::string_view suffix) {
  thread_local std::mt19937_64 rng([] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(::getpid());
  }());
  static constexpr char kHex[] = "0123456789abcdef";
  uint64_t r = rng();
  std::string name = ".tmp.";
  for (int i = 0; i < 16; ++i) name.push_back(kHex[(r >> (4 * i)) & 0xf]);
  name += '.';
  name += suffix;
  return name;
}

bool is_temporary_name(std::string_view name) { return name.starts_with(".tmp."); }

namespace {

int write_all(int fd, std::string_view data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    done += static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace

namespace {

// 0 or the errno that stopped it.
int write_new_file(int dirfd, const std::string& name, std::string_view data, mode_t mode) {
  Fd fd(::openat(dirfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!fd) return errno;
  // The mode asked for, not the umask's: a team's group-readable entries
  // stay readable to the group whatever a member's umask.
  int err = (mode & 077) != 0 && ::fchmod(fd.get(), mode) != 0 ? errno : 0;
  if (err == 0) err = write_all(fd.get(), data);
  if (err == 0 && ::close(fd.release()) != 0) err = errno;
  if (err != 0) ::unlinkat(dirfd, name.c_str(), 0);
  return err;
}

}  // namespace

Result<void> write_new_file_at(int dirfd, const std::string& name, std::string_view data, mode_t mode) {
  if (int err = write_new_file(dirfd, name, data, mode); err != 0) return errno_failure(err);
  return {};
}

Result<void> write_atomic_at(int dirfd, const std::string& name, std::string_view data,
                             const std::function<void()>* before_rename, mode_t mode) {
  std::string temp;
  int err = EEXIST;
  for (int attempt = 0; attempt < 8 && err == EEXIST; ++attempt) {
    temp = temporary_name(name.substr(name.rfind('.') + 1));
    err = write_new_file(dirfd, temp, data, mode);
  }
  if (err != 0) return errno_failure(err);
  if (before_rename != nullptr && *before_rename) (*before_rename)();
  if (::renameat(dirfd, temp.c_str(), dirfd, name.c_str()) != 0) {
    err = errno;
    ::unlinkat(dirfd, temp.c_str(), 0);
    return errno_failure(err);
  }
  return {};
}

OwnerRule owner_rule_in(int dirfd) {
  struct stat st {};
  return ::fstat(dirfd, &st) == 0 && (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 ? OwnerRule::any : OwnerRule::self;
}

mode_t file_mode_in(int dirfd) { return owner_rule_in(dirfd) == OwnerRule::any ? 0660 : 0600; }

Result<FileLock> FileLock::acquire(int dirfd, const std::string& name, Mode mode) {
  const mode_t file_mode = file_mode_in(dirfd);
  Fd fd(::openat(dirfd, name.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, file_mode));
  if (!fd) return errno_failure(errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errno_failure(errno);
  if (!S_ISREG(st.st_mode) || !owner_accepted(st.st_uid, owner_rule_in(dirfd))) return errno_failure(EPERM);
  if (st.st_uid == ::geteuid() && (st.st_mode & 0777) != file_mode) ::fchmod(fd.get(), file_mode);
  int op = LOCK_EX | (mode == Mode::try_only ? LOCK_NB : 0);
  while (::flock(fd.get(), op) != 0) {
    if (errno == EWOULDBLOCK) return failure(Fault::busy, name + " is held by another process", EWOULDBLOCK);
    if (errno != EINTR) return errno_failure(errno);
  }
  FileLock lock;
  lock.fd_ = std::move(fd);
  return lock;
}

int64_t now_unix_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace vyre::sys
