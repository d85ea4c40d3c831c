// The VFS the SQLite store opens its database with: SQLite's own unix VFS,
// except that asking whether a file exists fails when the file system
// cannot say.
//
// SQLite looks for a rollback journal left by an interrupted write (a "hot
// journal") before every read, with stat(); its unix VFS answers "absent"
// for any error, so an ESTALE or EIO from a network file system (NFS after a
// server restart, a FUSE mount; tests/fs/fault_fs.c) makes it read the
// database half-written, and a writer then starts a journal over the hot
// one, losing the way back. Here such an error fails the transaction with
// SQLITE_IOERR_ACCESS instead, which the cache counts as an error and
// lowers around.
#pragma once

namespace vyre::aot {

// The VFS's name for sqlite3_open_v2 (registered on first call), or nullptr
// (SQLite's default) where there is no unix VFS to wrap or the application
// has made a VFS of its own the default.
const char* strict_sqlite_vfs();

}  // namespace vyre::aot
