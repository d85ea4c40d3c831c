// File access that a hostile directory (a cache shared with other users,
// a layer shipped by a package) cannot turn against the process: names are resolved relative to an open directory, symbolic links
// are never followed, only regular files of an accepted owner are opened,
// and reads stop at a bound. Writes publish atomically (temporary file in the
// same directory, then rename).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "sys/result.hpp"

namespace vyre::sys {

// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd();
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// Whose files may be read: the writable directory accepts only the effective
// user's; read-only layers (shipped with an application, often installed by
// root) also accept root's; `any` only where every entry must carry a
// trusted signature instead (a layer published by a CI account).
enum class OwnerRule { self, self_or_root, any };
bool owner_accepted(uid_t uid, OwnerRule rule);

// A team's shared folder (group- or world-writable: a shared cache's own
// .locks and .stats) holds files of any member, made group-writable (0660);
// any other folder, the user's own files, made 0600.
OwnerRule owner_rule_in(int dirfd);
mode_t file_mode_in(int dirfd);

// What lstat says about a name, without following it.
struct FileFacts {
  bool exists = false;
  bool regular = false;
  bool owner_ok = false;
  uint64_t size = 0;
  int64_t mtime_ms = 0;
  bool safe() const { return exists && regular && owner_ok; }
};
FileFacts file_facts_at(int dirfd, const std::string& name, OwnerRule rule);

struct FileContents {
  std::string data;
  int64_t mtime_ms = 0;
};

// Reads at most `max_bytes` of a regular file owned per `rule`. Never
// follows a symbolic link and never opens a FIFO, device or socket (lstat
// first, then open with O_NOFOLLOW|O_NONBLOCK and compare fstat with it).
// Fails with missing, unsafe, too_large or io.
Result<FileContents> read_file_at(int dirfd, const std::string& name, uint64_t max_bytes, OwnerRule rule);

// A fresh name for a temporary file: ".tmp.<16 random hex>.<suffix>".
std::string temporary_name(std::string_view suffix);
bool is_temporary_name(std::string_view name);

// Writes `data` to a new temporary file (mode `mode` exactly, whatever the
// umask) in `dirfd` and renames it to `name`; on failure (io, with the errno) the temporary file is
// removed. `before_rename` runs with the file complete.
Result<void> write_atomic_at(int dirfd, const std::string& name, std::string_view data,
                    const std::function<void()>* before_rename = nullptr, mode_t mode = 0600);

// Writes a file that must not exist yet (O_EXCL), mode `mode`.
Result<void> write_new_file_at(int dirfd, const std::string& name, std::string_view data, mode_t mode);

// flock() on a lock file in `dirfd` (created file_mode_in(dirfd) if absent,
// of an owner owner_rule_in(dirfd) accepts). Released by the destructor; the
// kernel releases it when the process dies.
class FileLock {
 public:
  enum class Mode { wait, try_only };
  FileLock() = default;
  // Fails with busy when another holder has it (try_only), io when the lock
  // file cannot be opened or locked.
  static Result<FileLock> acquire(int dirfd, const std::string& name, Mode mode);

 private:
  Fd fd_;
};

int64_t now_unix_ms();

}  // namespace vyre::sys
