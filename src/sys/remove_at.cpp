#include "sys/remove_at.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace vyre::sys {
namespace {

Failure refused(const std::string& name, int err) {
  return failure(Fault::io, "cannot remove " + name + ": " + std::strerror(err), err);
}

Result<void> remove_tree_at(int dirfd, const std::string& name, OwnerRule rule, int depth);

// Empties the directory `name` (lstat showed `seen`, a plain directory of
// an accepted owner) through a descriptor opened without following links,
// and only if it is still that directory.
Result<void> empty_directory_at(int dirfd, const std::string& name, const struct stat& seen, OwnerRule rule,
                                int depth) {
  const int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return refused(name, errno);
  struct stat now {};
  if (::fstat(fd, &now) != 0 || now.st_dev != seen.st_dev || now.st_ino != seen.st_ino) {
    ::close(fd);
    return failure(Fault::unsafe, name + " changed while it was being removed: remove it yourself");
  }
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    const int err = errno;
    ::close(fd);
    return refused(name, err);
  }
  std::vector<std::string> children;
  while (dirent* e = ::readdir(dir)) {
    const std::string child = e->d_name;
    if (child != "." && child != "..") children.push_back(child);
  }
  Result<void> outcome;
  for (const auto& child : children) {
    auto removed = remove_tree_at(::dirfd(dir), child, rule, depth + 1);
    if (!removed) {
      outcome = failure(removed.failure().kind, name + "/" + removed.failure().message, removed.failure().error);
      break;
    }
  }
  ::closedir(dir);
  return outcome;
}

Result<void> remove_tree_at(int dirfd, const std::string& name, OwnerRule rule, int depth) {
  struct stat st {};
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT ? Result<void>() : refused(name, errno);
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(dirfd, name.c_str(), 0) != 0 && errno != ENOENT) return refused(name, errno);
    return {};
  }
  if (!owner_accepted(st.st_uid, rule))
    return failure(Fault::unsafe, name + " is a directory owned by another user (uid " + std::to_string(st.st_uid) +
                                      "): remove it yourself");
  if (depth >= kMaxRemovalDepth)
    return failure(Fault::unsafe, name + " nests deeper than " + std::to_string(kMaxRemovalDepth) +
                                      " directories: remove it yourself");
  if (auto emptied = empty_directory_at(dirfd, name, st, rule, depth); !emptied) return emptied;
  if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) return refused(name, errno);
  return {};
}

}  // namespace

Result<bool> remove_at(int dirfd, const std::string& name, OwnerRule rule) {
  struct stat st {};
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return false;
    return refused(name, errno);
  }
  if (auto removed = remove_tree_at(dirfd, name, rule, 0); !removed) return removed.failure();
  return true;
}

}  // namespace vyre::sys
