// A copy of SQLite's default VFS with its own existence check (sqlite_vfs.hpp).
#include "aot/local/sqlite_vfs.hpp"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cerrno>
#include <mutex>
#include <string_view>

namespace vyre::aot {
namespace {

constexpr const char* kName = "vyre-strict-unix";
sqlite3_vfs* base = nullptr;
sqlite3_vfs strict{};

int strict_access(sqlite3_vfs* vfs, const char* path, int flags, int* result) {
  if (flags != SQLITE_ACCESS_EXISTS) return base->xAccess(vfs, path, flags, result);
  struct stat st {};
  if (::stat(path, &st) == 0) {
    // SQLite's own rule: an empty journal is no journal.
    *result = !S_ISREG(st.st_mode) || st.st_size > 0 ? 1 : 0;
    return SQLITE_OK;
  }
  if (errno == ENOENT || errno == ENOTDIR) {
    *result = 0;
    return SQLITE_OK;
  }
  *result = 0;
  return SQLITE_IOERR_ACCESS;
}

}  // namespace

const char* strict_sqlite_vfs() {
  static std::once_flag registered;
  static bool usable = false;
  std::call_once(registered, [] {
    base = sqlite3_vfs_find(nullptr);
    if (base == nullptr || base->iVersion < 1 || base->zName == nullptr) return;
    const std::string_view name(base->zName);
    if (name.substr(0, 4) != "unix") return;  // the wrapped check is the unix VFS's
    // Every other method, and pAppData (the unix VFS's locking style), as
    // they are: files opened here are the unix VFS's own.
    strict = *base;
    strict.zName = kName;
    strict.pNext = nullptr;
    strict.xAccess = strict_access;
    usable = sqlite3_vfs_register(&strict, /*makeDflt=*/0) == SQLITE_OK;
  });
  // A default VFS the application put in its place since (its own, for
  // tracing or encryption) is used as it is.
  return usable && sqlite3_vfs_find(nullptr) == base ? kName : nullptr;
}

}  // namespace vyre::aot
