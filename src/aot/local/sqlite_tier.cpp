#include "aot/local/sqlite_tier.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "aot/local/sqlite_vfs.hpp"
#include "util/log.hpp"

namespace vyre::aot {
namespace {

// How long a writer waits for another process's transaction before the
// cache goes on without storing (a miss, never a failed dispatch).
constexpr int kBusyTimeoutMs = 5000;

sys::Failure sqlite_failure(sqlite3* db, const std::string& what) {
  const int code = db != nullptr ? sqlite3_extended_errcode(db) : SQLITE_ERROR;
  const int primary = code & 0xff;
  const sys::Fault kind = primary == SQLITE_BUSY || primary == SQLITE_LOCKED ? sys::Fault::busy
                          : primary == SQLITE_READONLY                       ? sys::Fault::read_only
                                                                             : sys::Fault::io;
  return sys::failure(kind, what + ": " + (db != nullptr ? sqlite3_errmsg(db) : "out of memory"));
}

// One prepared statement, finalized on every path.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) stmt_ = nullptr;
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  explicit operator bool() const { return stmt_ != nullptr; }
  sqlite3_stmt* get() const { return stmt_; }
  void bind(int i, std::string_view text) {
    sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void bind_blob(int i, std::string_view bytes) {
    sqlite3_bind_blob(stmt_, i, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
  }
  void bind(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return sqlite3_step(stmt_); }
  std::string text(int col) const {
    const void* p = sqlite3_column_blob(stmt_, col);
    const int n = sqlite3_column_bytes(stmt_, col);
    return p == nullptr ? std::string() : std::string(static_cast<const char*>(p), static_cast<size_t>(n));
  }
  uint64_t size(int col) const { return static_cast<uint64_t>(sqlite3_column_bytes(stmt_, col)); }
  int64_t integer(int col) const { return sqlite3_column_int64(stmt_, col); }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

sys::Result<void> exec(sqlite3* db, const char* sql, const std::string& what) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return sqlite_failure(db, what);
  return {};
}

// A write transaction, rolled back unless committed.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) { began_ = sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK; }
  ~Transaction() {
    if (began_ && !done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  bool began() const { return began_; }
  sys::Result<void> commit() {
    done_ = true;
    return exec(db_, "COMMIT", "cannot commit");
  }

 private:
  sqlite3* db_;
  bool began_ = false;
  bool done_ = false;
};

// A rowid table: rows of a few KiB stay on their page (a WITHOUT ROWID
// table's index b-tree spills anything over about 1 KiB to overflow pages,
// which took 4.5 KiB a 1.6 KiB entry). user_version marks it made.
constexpr uint32_t kSchemaVersion = 1;
constexpr const char* kSchema =
    "BEGIN;"
    "CREATE TABLE IF NOT EXISTS entries("
    " key TEXT NOT NULL UNIQUE, metadata BLOB NOT NULL, content BLOB NOT NULL, used_ms INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS entries_by_use ON entries(used_ms);"
    "PRAGMA user_version = 1;"
    "COMMIT;";

// The row as an entry, verified as the directory's files are.
struct Row {
  std::string metadata;
  std::string content;
  int64_t used_ms = 0;
};

EntryInspection verify_row(const std::string& key, Row&& row, bool verify_content) {
  Metadata seen;
  seen.format = kCacheVersion;
  auto fail = [&](sys::Failure f) { return EntryInspection{std::move(f), seen}; };
  if (row.metadata.size() > kMaxMetadataBytes) return fail(sys::failure(sys::Fault::too_large, "metadata over its bound"));
  if (row.content.size() > kMaxWgslBytes) return fail(sys::failure(sys::Fault::too_large, "content over its bound"));
  if (auto parsed = parse_metadata(row.metadata, seen); !parsed) return fail(parsed.failure());
  if (verify_content) {
    if (auto checked = check_entry(key, seen, row.content); !checked) return fail(checked.failure());
  } else {
    if (seen.key != key) return fail(sys::failure(sys::Fault::mismatch, "metadata belongs to another key"));
    if (row.content.size() != seen.wgsl_bytes) return fail(sys::failure(sys::Fault::mismatch, "WGSL size differs from metadata"));
  }
  Entry entry;
  entry.meta = seen;
  entry.metadata_bytes = row.metadata.size();
  entry.metadata_mtime_ms = row.used_ms;
  if (verify_content) entry.text = std::move(row.content);
  return EntryInspection{std::move(entry), std::move(seen)};
}

EntryState row_state(const sys::Result<Entry>& read) {
  if (read) return EntryState::ok;
  if (read.failure().kind == sys::Fault::unsupported) return EntryState::other_format;
  return EntryState::bad;
}

bool corrupt(sqlite3* db) {
  const int primary = sqlite3_extended_errcode(db) & 0xff;
  return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}

// The largest database checked from a copy in memory (below); a larger one
// is checked in place.
constexpr sqlite3_int64 kMaxCheckedInMemory = sqlite3_int64{256} << 20;

// Whether a database that a read called damaged is: nullopt when it is,
// else why it is kept. SQLite answers a read that failed with EIO as damage
// ("database disk image is malformed": SQLITE_IOERR_CORRUPTFS; it takes EIO
// for a bad disk), and a network file system answers EIO now and then (a
// server restarting, a soft mount's timeout; tests/fs/fault_fs.c): set aside
// for that, the file would lose every entry to one failed read. So its bytes
// are read, twice, through SQLite's own handle (a descriptor of ours, once
// closed, would drop the process's locks on the file): a read that fails is
// the file system's trouble, not damage, and two reads that differ met a
// writer. Then SQLite checks every page of that copy, in memory, where no
// read can fail. Made only when a read said damaged.
//
// The copy is made under a shared lock, as SQLite's readers read, so that
// no writer changes the file under it. In a rollback-journal mode the file
// is also half-written, and sound, while the journal of an interrupted
// write is there (the next reader rolls it back), or whenever that cannot
// be told: kept then too.
class SharedLock {
 public:
  explicit SharedLock(sqlite3_file* file) : file_(file) {
    held_ = file_->pMethods->xLock(file_, SQLITE_LOCK_SHARED) == SQLITE_OK;
  }
  ~SharedLock() {
    // The connection held no lock before (no statement runs): none after.
    if (held_) file_->pMethods->xUnlock(file_, SQLITE_LOCK_NONE);
  }
  SharedLock(const SharedLock&) = delete;
  SharedLock& operator=(const SharedLock&) = delete;
  bool held() const { return held_; }

 private:
  sqlite3_file* file_;
  bool held_ = false;
};

// Why a rollback journal may hold the file's missing half, or nullopt.
std::optional<std::string> journal_pending(sqlite3* db) {
  const char* name = sqlite3_db_filename(db, "main");
  const char* journal = name != nullptr ? sqlite3_filename_journal(name) : nullptr;
  if (journal == nullptr || *journal == '\0') return std::nullopt;
  struct stat st {};
  if (::lstat(journal, &st) != 0)
    return errno == ENOENT ? std::nullopt
                           : std::optional<std::string>(std::string("whether an interrupted write's journal is there "
                                                                    "cannot be told (") +
                                                        std::strerror(errno) + ")");
  if (st.st_size > 0) return std::string("the journal of a write in progress or interrupted is there (its reader rolls it back)");
  return std::nullopt;
}

std::optional<std::string> kept_because(sqlite3* db, bool rollback_journal) {
  sqlite3_file* file = nullptr;
  sqlite3_int64 size = 0;
  if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, static_cast<void*>(&file)) != SQLITE_OK ||
      file == nullptr || file->pMethods == nullptr || file->pMethods->xFileSize(file, &size) != SQLITE_OK)
    return std::string("the file system does not give its size");
  const SharedLock lock(file);
  if (!lock.held()) return std::string("a writer holds it");
  if (rollback_journal)
    if (auto pending = journal_pending(db)) return pending;
  if (size > kMaxCheckedInMemory) {
    // In place: a read error in the check itself fails it as damage, so a
    // check that fails so is tried again, and one that fails otherwise (busy,
    // another I/O error) proves nothing.
    for (int attempt = 0; attempt < 3; ++attempt) {
      Statement check(db, "PRAGMA quick_check(1)");
      if (check && check.step() == SQLITE_ROW)
        return check.text(0) == "ok" ? std::optional<std::string>("SQLite's check of every page finds it sound")
                                     : std::nullopt;
      if (!corrupt(db)) return std::string("its check could not be made (") + sqlite3_errmsg(db) + ")";
    }
    return std::nullopt;
  }
  auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(static_cast<sqlite3_uint64>(size > 0 ? size : 1)));
  if (copy == nullptr) return std::string("there is no memory to check it");
  std::string chunk(size_t{1} << 16, '\0');
  for (int pass = 0; pass < 2; ++pass)
    for (sqlite3_int64 at = 0; at < size; at += static_cast<sqlite3_int64>(chunk.size())) {
      const int n = static_cast<int>(std::min<sqlite3_int64>(static_cast<sqlite3_int64>(chunk.size()), size - at));
      void* to = pass == 0 ? static_cast<void*>(copy + at) : static_cast<void*>(chunk.data());
      const int rc = file->pMethods->xRead(file, to, n, at);
      const char* why = rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ ? "the file system refuses to read it"
                        : rc != SQLITE_OK || (pass == 1 && std::memcmp(to, copy + at, static_cast<size_t>(n)) != 0)
                            ? "it changed while it was read (a writer)"
                            : nullptr;
      if (why != nullptr) {
        sqlite3_free(copy);
        return std::string(why);
      }
    }
  if (size >= 20) copy[18] = copy[19] = 1;  // a WAL database's file is checked as it is, without its log
  sqlite3* memory = nullptr;
  if (sqlite3_open_v2(":memory:", &memory, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    sqlite3_close(memory);
    sqlite3_free(copy);
    return std::string("there is no memory to check it");
  }
  // The copy is the connection's from here, freed with it (or at once, on failure).
  bool sound = false;
  if (sqlite3_deserialize(memory, "main", copy, size, size,
                          SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY) == SQLITE_OK) {
    Statement check(memory, "PRAGMA quick_check(1)");
    sound = check && check.step() == SQLITE_ROW && check.text(0) == "ok";
  }
  sqlite3_close(memory);
  if (!sound) return std::nullopt;
  return std::string("SQLite's check of every page of it, read twice alike, finds it sound");
}

}  // namespace

sys::Result<std::unique_ptr<SqliteTier>> SqliteTier::open(CacheDirectory& directory, bool network_file_system, bool wal,
                                                          std::chrono::milliseconds recency_granularity) {
  std::unique_ptr<SqliteTier> tier(new SqliteTier(directory, directory.path() / kSqliteStoreName, recency_granularity));
  tier->network_ = network_file_system;
  tier->wal_ = wal;
  std::lock_guard lock(tier->mutex_);
  if (auto connected = tier->connect(); !connected) return connected.failure();
  return tier;
}

SqliteTier::~SqliteTier() { close_connection(); }

void SqliteTier::close_connection() const {
  // A child's inherited handle is dropped, never closed: closing would
  // release the parent's POSIX locks on the file (SQLite's documented rule).
  if (db_ != nullptr && opened_by_ == ::getpid()) sqlite3_close_v2(db_);
  db_ = nullptr;
}

namespace {

// What the database's own header says (the first 100 bytes, read through
// the descriptor vyre opened): set up by this schema already, and in WAL.
struct Header {
  bool set_up = false;
  bool wal = false;
};

Header read_header(int fd) {
  unsigned char h[100] = {};
  // Read on after a read that comes back short (FUSE with direct I/O, 9p, CIFS).
  size_t got = 0;
  while (got < sizeof h) {
    const ssize_t n = ::pread(fd, h + got, sizeof h - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return {};
    got += static_cast<size_t>(n);
  }
  if (std::memcmp(h, "SQLite format 3", 16) != 0) return {};
  const uint32_t user_version = (uint32_t{h[60]} << 24) | (uint32_t{h[61]} << 16) | (uint32_t{h[62]} << 8) | h[63];
  return Header{user_version == kSchemaVersion, h[18] == 2 && h[19] == 2};
}

}  // namespace

void SqliteTier::set_aside(const std::string& why) const {
  close_connection();
  // Not a database, or a damaged one: aside (for a post-mortem), and anew.
  const std::string aside = std::string(kSqliteStoreName) + ".corrupt-" + std::to_string(sys::now_unix_ms());
  log::warn("{}", "AOT cache: " + location_.string() + " is not a usable database (" + why + "); moved aside to " +
                      aside + " and started empty");
  if (::renameat(directory_.fd(), kSqliteStoreName, directory_.fd(), aside.c_str()) != 0) return;
  for (const char* suffix : {"-wal", "-shm", "-journal"})
    ::unlinkat(directory_.fd(), (std::string(kSqliteStoreName) + suffix).c_str(), 0);
}

sys::Failure SqliteTier::failed(const std::string& what) const {
  sys::Failure f = sqlite_failure(db_, what);
  // Set aside by the next call (ready()), once this one's statements are done.
  if (db_ != nullptr && corrupt(db_)) damaged_ = f.message;
  return f;
}

sys::Result<sqlite3*> SqliteTier::open_connection(const std::string& name, int flags) const {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(name.c_str(), &db, flags | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX, strict_sqlite_vfs()) != SQLITE_OK) {
    auto f = sqlite_failure(db, "cannot open " + location_.string());
    sqlite3_close_v2(db);
    return f;
  }
  db_ = db;
  opened_by_ = ::getpid();
  sqlite3_extended_result_codes(db, 1);
  return db;
}

sys::Result<void> SqliteTier::connect() const {
  // Made here first with mode 0600, never through a link, so that the
  // database (and SQLite's journals, which take its mode) is private.
  // A read-only layer's database (a shipped image's, a CI account's) is
  // only ever read.
  int fd = -1;
  read_only_ = !directory_.writable();
  if (!read_only_) {
    fd = ::openat(directory_.fd(), kSqliteStoreName, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    // A read-only file system (a remount, an image) or file: read what is
    // there, write nothing (put() answers read_only, and the cache lowers).
    read_only_ = fd < 0 && (errno == EROFS || errno == EACCES || errno == EPERM);
  }
  if (read_only_) fd = ::openat(directory_.fd(), kSqliteStoreName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return sys::failure(sys::Fault::io, "cannot open " + location_.string() + ": " + std::strerror(errno), errno);
  struct stat st {};
  // The owners whose entry files the directory accepts: the user's own in a
  // private one, also root's in a layer, anyone's in a signed-only layer.
  if (::fstat(fd, &st) != 0) {
    const int error = errno;  // a network file system's ESTALE or EIO: not the file's fault
    ::close(fd);
    return sys::failure(sys::Fault::io, "cannot read " + location_.string() + ": " + std::strerror(error), error);
  }
  const bool accepted = S_ISREG(st.st_mode) && sys::owner_accepted(st.st_uid, directory_.owner_rule());
  const Header header = accepted ? read_header(fd) : Header{};
  ::close(fd);
  if (!accepted)
    return sys::failure(sys::Fault::unsafe, location_.string() + " is not a regular file of an owner this cache accepts");
  // SQLite opens by name and, with NOFOLLOW, refuses a link anywhere in
  // it: the directory (which may be reached through a link of the user's,
  // as ~/.cache often is) is named by its resolved path, and the file SQLite
  // opened must be the one checked above.
  std::error_code resolve_error;
  const std::filesystem::path resolved = std::filesystem::canonical(directory_.path(), resolve_error);
  if (resolve_error)
    return sys::failure(sys::Fault::io, "cannot resolve " + directory_.path().string() + ": " + resolve_error.message());
  const std::string open_path = (resolved / kSqliteStoreName).string();
  const auto same_file = [&]() -> sys::Result<void> {
    struct stat now {};
    if (::lstat(open_path.c_str(), &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino) return {};
    close_connection();
    return sys::failure(sys::Fault::unsafe, location_.string() + " changed while it was opened");
  };
  if (read_only_ && !header.set_up)
    return sys::failure(sys::Fault::read_only, location_.string() + " is read-only and holds no cache");

  if (read_only_) {
    // Nobody can change a file on a read-only mount, and a layer is read as
    // unchanging: immutable, so that SQLite asks for no lock, journal or WAL
    // index it could not make. A layer rewritten in place under a reader
    // gives rows that fail their verification or errors: misses, never a
    // wrong entry (replacing the file by a rename is what publishers do).
    std::string uri = "file:";
    for (char c : open_path) {
      if (c == '%' || c == '?' || c == '#') {
        char hex[4];
        (void)std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(c));
        uri += hex;
      } else {
        uri += c;
      }
    }
    uri += "?immutable=1";
    auto opened = open_connection(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
    if (!opened) return opened.failure();
    if (auto same = same_file(); !same) return same.failure();
    journal_mode_ = header.wal ? "wal" : "delete";
    return {};
  }
  auto opened = open_connection(open_path, SQLITE_OPEN_READWRITE);
  if (!opened) return opened.failure();
  if (auto same = same_file(); !same) return same.failure();
  sqlite3* db = *opened;
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  // The journal (docs/cache.md, "Stores"): the rollback journal by default,
  // kept as one truncated file (no inode per commit); WAL when asked for
  // (never on a network file system). synchronous=NORMAL in both: a cache
  // need not outlive a power cut (the files store does not fsync either),
  // and whatever one damages is found by the verification of every row and
  // set aside (failed()), never served. FULL cost 1.1 ms a commit here.
  // WAL persists in the header: a database in WAL stays there unless every
  // process has closed it.
  const bool want_wal = wal_ && !network_;
  if (want_wal != header.wal || !header.set_up) {
    Statement mode(db, want_wal ? "PRAGMA journal_mode=WAL" : "PRAGMA journal_mode=TRUNCATE");
    journal_mode_ = mode && mode.step() == SQLITE_ROW ? mode.text(0) : std::string(header.wal ? "wal" : "delete");
  } else {
    journal_mode_ = header.wal ? "wal" : "delete";
  }
  if (journal_mode_ != "wal") {
    // Rollback modes are not kept in the file: set on every open (cheap).
    Statement mode(db, "PRAGMA journal_mode=TRUNCATE");
    if (mode && mode.step() == SQLITE_ROW) journal_mode_ = mode.text(0);
  }
  (void)exec(db, "PRAGMA synchronous=NORMAL", "synchronous");
  if (header.set_up) return {};  // damage found later sets the file aside then (failed())
  auto made = exec(db, kSchema, "cannot set up " + location_.string());
  if (made) return {};
  if (!corrupt(db) || kept_because(db, journal_mode_ != "wal")) {
    close_connection();
    return made.failure();
  }
  set_aside(made.failure().message);
  // Once more, on a new file.
  const int again = ::openat(directory_.fd(), kSqliteStoreName, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (again < 0) return sys::failure(sys::Fault::io, "cannot make " + location_.string() + ": " + std::strerror(errno), errno);
  ::close(again);
  return connect();
}

sys::Result<sqlite3*> SqliteTier::ready() const {
  // A read-only database is never moved aside: it is not this process's.
  if (!damaged_.empty() && opened_by_ == ::getpid() && !read_only_) {
    const auto kept = db_ != nullptr ? kept_because(db_, journal_mode_ != "wal") : std::nullopt;
    if (kept)
      log::warn_once("aot-sqlite-kept:" + location_.string(),
                     "AOT cache: " + location_.string() + " read as damaged (" + damaged_ + "), but " + *kept +
                         ": it is kept (SQLite reports a failed read as damage)");
    else
      set_aside(damaged_);
    damaged_.clear();
  }
  if (db_ != nullptr && opened_by_ == ::getpid()) return db_;
  db_ = nullptr;  // inherited across a fork: dropped unclosed (close_connection's rule)
  if (auto connected = connect(); !connected) return connected.failure();
  return db_;
}

sys::Result<void> SqliteTier::check_signature(const Metadata& meta) const {
  if (!directory_.signed_only()) return {};
  if (!trusted_) return sys::failure(sys::Fault::untrusted, "signed-only directory and no trusted keys");
  return trusted_->verify(meta);
}

sys::Result<Entry> SqliteTier::do_get(const std::string& key, Use use) {
  std::lock_guard lock(mutex_);
  auto db = ready();
  if (!db) return db.failure();
  Statement select(*db, "SELECT metadata, content, used_ms FROM entries WHERE key = ?1");
  if (!select) return failed("cannot read " + location_.string());
  select.bind(1, key);
  const int rc = select.step();
  if (rc == SQLITE_DONE) return sys::failure(sys::Fault::missing, {});
  if (rc != SQLITE_ROW) return failed("cannot read " + location_.string());
  if (select.size(0) > kMaxMetadataBytes || select.size(1) > kMaxWgslBytes)
    return sys::failure(sys::Fault::too_large, "entry " + key + " is over the cache's bounds");
  Row row{select.text(0), select.text(1), select.integer(2)};
  sqlite3_reset(select.get());  // its read ends before the recency update below
  auto read = verify_row(key, std::move(row), true).entry;
  if (!read) return read;
  if (auto signed_ok = check_signature(read->meta); !signed_ok) return signed_ok.failure();
  const int64_t now = sys::now_unix_ms();
  if (!read_only_ && use == Use::serve && now - read->metadata_mtime_ms >= recency_granularity_.count()) {
    Statement touch(*db, "UPDATE entries SET used_ms = ?2 WHERE key = ?1");
    if (touch) {
      touch.bind(1, key);
      touch.bind(2, now);
      (void)touch.step();  // recency is a hint: a busy database keeps the old one
    }
  }
  return read;
}

sys::Failure SqliteTier::refused() const {
  return sys::failure(sys::Fault::read_only, location_.string() + " is read-only (a read-only layer, file system or file)",
                      EROFS);
}

sys::Result<SqliteTier::RowState> SqliteTier::row_in_transaction(sqlite3* db, const std::string& key) const {
  Statement select(db, "SELECT metadata, content FROM entries WHERE key = ?1");
  if (!select) return failed("cannot read " + location_.string());
  select.bind(1, key);
  if (select.step() != SQLITE_ROW) return RowState::absent;
  if (select.size(0) > kMaxMetadataBytes || select.size(1) > kMaxWgslBytes) return RowState::bad;
  auto read = verify_row(key, Row{select.text(0), select.text(1), 0}, true).entry;
  return read && check_signature(read->meta) ? RowState::good : RowState::bad;
}

sys::Result<Stored> SqliteTier::do_put(const Metadata& meta, std::string_view text) {
  if (text.size() > kMaxWgslBytes)
    return sys::failure(sys::Fault::too_large, "WGSL of " + std::to_string(text.size()) +
                                                   " bytes is over the cache's bound of " + std::to_string(kMaxWgslBytes));
  const std::string meta_text = encode_metadata(meta);
  if (meta_text.size() > kMaxMetadataBytes)
    return sys::failure(sys::Fault::too_large, "metadata of " + std::to_string(meta_text.size()) + " bytes");
  std::lock_guard lock(mutex_);
  auto db = ready();
  if (!db) return db.failure();
  if (read_only_) return refused();
  Transaction tx(*db);
  if (!tx.began()) return failed("cannot write " + location_.string());
  // Another process may have stored it while this one lowered.
  auto there = row_in_transaction(*db, meta.key);
  if (!there) return there.failure();
  if (*there == RowState::good) return Stored{false, 0};
  Statement insert(*db, "INSERT OR REPLACE INTO entries(key, metadata, content, used_ms) VALUES (?1, ?2, ?3, ?4)");
  if (!insert) return failed("cannot write " + location_.string());
  insert.bind(1, meta.key);
  insert.bind_blob(2, meta_text);
  insert.bind_blob(3, text);
  insert.bind(4, sys::now_unix_ms());
  if (insert.step() != SQLITE_DONE) return failed("cannot write " + location_.string());
  if (auto committed = tx.commit(); !committed) return committed.failure();
  return Stored{true, text.size() + meta_text.size()};
}

sys::Result<bool> SqliteTier::do_remove(const std::string& key, bool only_if_bad) {
  std::lock_guard lock(mutex_);
  auto db = ready();
  if (!db) return db.failure();
  if (read_only_) return refused();
  Transaction tx(*db);
  if (!tx.began()) return failed("cannot write " + location_.string());
  if (only_if_bad) {
    // A writer may have replaced it since it was found bad.
    auto there = row_in_transaction(*db, key);
    if (!there) return there.failure();
    if (*there != RowState::bad) return false;
  }
  Statement remove(*db, "DELETE FROM entries WHERE key = ?1");
  if (!remove) return failed("cannot write " + location_.string());
  remove.bind(1, key);
  if (remove.step() != SQLITE_DONE) return failed("cannot remove " + key);
  const bool removed = sqlite3_changes(*db) > 0;
  if (auto committed = tx.commit(); !committed) return committed.failure();
  return removed;
}

sys::Result<std::vector<EntryInfo>> SqliteTier::do_list(const ListQuery& query) const {
  std::lock_guard lock(mutex_);
  auto db = ready();
  if (!db) return db.failure();
  // Without verification the content is not read, only its length.
  Statement select(*db, query.key ? "SELECT key, metadata, content, used_ms FROM entries WHERE key = ?1"
                                  : "SELECT key, metadata, content, used_ms FROM entries ORDER BY key");
  if (!select) return failed("cannot read " + location_.string());
  if (query.key) select.bind(1, *query.key);
  std::vector<EntryInfo> out;
  int rc = SQLITE_ROW;
  while ((rc = select.step()) == SQLITE_ROW) {
    EntryInfo info;
    info.key = select.text(0);
    info.directory = directory_.path();
    info.metadata_bytes = select.size(1);
    info.wgsl_bytes = select.size(2);
    info.last_used_unix_ms = select.integer(3);
    const bool over = info.metadata_bytes > kMaxMetadataBytes || info.wgsl_bytes > kMaxWgslBytes;
    // Without verification only the content's length is compared.
    EntryInspection read =
        over ? EntryInspection{sys::failure(sys::Fault::too_large, "entry over the cache's bounds"), Metadata{}}
             : verify_row(info.key,
                          Row{select.text(1), query.verify_content ? select.text(2) : std::string(info.wgsl_bytes, '\0'),
                              info.last_used_unix_ms},
                          query.verify_content);
    const std::string row_key = info.key;
    const uint64_t metadata_bytes = info.metadata_bytes;
    const uint64_t content_bytes = info.wgsl_bytes;
    if (read.entry || is_bad_entry(read.entry.failure())) static_cast<EntryRecord&>(info) = read.seen;
    // The row's key, not the one its metadata names: a row holding another
    // key's metadata is reported, and removed, under its own.
    info.key = row_key;
    info.metadata_bytes = metadata_bytes;
    info.wgsl_bytes = read.entry ? info.wgsl_bytes : content_bytes;
    info.state = row_state(read.entry);
    if (!read.entry) info.problem = read.entry.failure().message;
    if (info.state == EntryState::ok)
      if (auto signed_ok = check_signature(info); !signed_ok) {
        info.state = EntryState::bad;
        info.problem = signed_ok.failure().message;
      }
    out.push_back(std::move(info));
  }
  if (rc != SQLITE_DONE) return failed("cannot read " + location_.string());
  return out;
}

sys::Result<TierStats> SqliteTier::do_stats() const {
  std::lock_guard lock(mutex_);
  auto db = ready();
  if (!db) return db.failure();
  Statement count(*db, "SELECT count(*), total(length(metadata) + length(content)) FROM entries");
  if (!count || count.step() != SQLITE_ROW) return failed("cannot read " + location_.string());
  return TierStats{static_cast<uint64_t>(count.integer(0)), static_cast<uint64_t>(sqlite3_column_double(count.get(), 1))};
}

sys::Result<std::vector<StoredEntryUse>> SqliteTier::uses() {
  std::lock_guard lock(mutex_);
  auto db = ready();
  if (!db) return db.failure();
  Statement select(*db, "SELECT key, used_ms, length(metadata) + length(content) FROM entries");
  if (!select) return failed("cannot read " + location_.string());
  std::vector<StoredEntryUse> out;
  int rc = SQLITE_ROW;
  while ((rc = select.step()) == SQLITE_ROW)
    out.push_back({select.text(0), select.integer(1), static_cast<uint64_t>(select.integer(2))});
  if (rc != SQLITE_DONE) return failed("cannot read " + location_.string());
  return out;
}

sys::Result<bool> SqliteTier::evict(const std::string& key, int64_t last_used_ms) {
  std::lock_guard lock(mutex_);
  auto db = ready();
  if (!db) return db.failure();
  if (read_only_) return refused();
  Statement remove(*db, "DELETE FROM entries WHERE key = ?1 AND used_ms = ?2");
  if (!remove) return failed("cannot write " + location_.string());
  remove.bind(1, key);
  remove.bind(2, last_used_ms);
  if (remove.step() != SQLITE_DONE) return failed("cannot remove " + key);
  return sqlite3_changes(*db) > 0;
}

sys::Result<uint64_t> SqliteTier::clear() {
  std::lock_guard lock(mutex_);
  auto db = ready();
  if (!db) return db.failure();
  if (read_only_) return refused();
  if (auto done = exec(*db, "DELETE FROM entries", "cannot clear " + location_.string()); !done) return done.failure();
  const auto removed = static_cast<uint64_t>(sqlite3_changes(*db));
  (void)exec(*db, "VACUUM", "vacuum");  // give the space back to the file system
  return removed;
}

}  // namespace vyre::aot
