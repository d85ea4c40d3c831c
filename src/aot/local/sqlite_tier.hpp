// The single-file store: the writable directory's entries kept in one SQLite
// database, `entries.sqlite3`, for file systems where many small files hurt
// (inode quotas on Lustre and GPFS, a small tmpfs). An entry is one row
// (key, metadata, content, last use), written in one transaction, so a
// reader sees all of an entry or none of it; each row is verified against
// its key on every read, as the directory's files are, so a row is proven
// or it is not an entry. Locks, stats and the driver's data stay in the
// directory beside it (a handful of files). docs/cache.md, "Stores".
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "aot/entry/entry_signature.hpp"
#include "aot/entry/storage_tier.hpp"
#include "aot/local/directory.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace vyre::aot {

inline constexpr const char* kSqliteStoreName = "entries.sqlite3";

// An entry as eviction sees it.
struct StoredEntryUse {
  std::string key;
  int64_t last_used_ms = 0;
  uint64_t bytes = 0;
};

class SqliteTier final : public StorageTier {
 public:
  // Opens (creating when absent) the database in `directory`. With
  // `network_file_system` the rollback journal is used (WAL needs memory
  // shared between the processes of one machine). Fails with io when SQLite
  // cannot open or set it up; a file that is not a database (or a corrupt
  // one) is moved aside to `entries.sqlite3.corrupt-<ms>` and a new one made.
  // `wal`: WAL instead of the rollback journal (never on a network file
  // system).
  static sys::Result<std::unique_ptr<SqliteTier>> open(CacheDirectory& directory, bool network_file_system, bool wal,
                                                      std::chrono::milliseconds recency_granularity);
  ~SqliteTier() override;
  SqliteTier(const SqliteTier&) = delete;
  SqliteTier& operator=(const SqliteTier&) = delete;

  // False on a read-only file system (or file): entries are served, none stored.
  bool writable() const override { return !read_only_; }
  const std::filesystem::path& location() const override { return location_; }
  // "truncate" or "wal": the journal mode SQLite accepted.
  const std::string& journal_mode() const { return journal_mode_; }
  void set_trusted_keys(std::shared_ptr<const TrustedKeys> keys) { trusted_ = std::move(keys); }

  // For cleanup: every row's recency and size, and the removal of a row
  // only if it was not used since it was listed (false: used, or gone).
  sys::Result<std::vector<StoredEntryUse>> uses();
  sys::Result<bool> evict(const std::string& key, int64_t last_used_ms);
  // Removes every row; how many went.
  sys::Result<uint64_t> clear();

 private:
  SqliteTier(CacheDirectory& directory, std::filesystem::path location, std::chrono::milliseconds granularity)
      : directory_(directory), location_(std::move(location)), recency_granularity_(granularity) {}
  sys::Result<void> connect() const;
  // sqlite3_open_v2 of `name` (a path or a URI) with `flags`, never through
  // a link; the connection becomes this process's.
  sys::Result<sqlite3*> open_connection(const std::string& name, int flags) const;
  // The connection, reopened in a child process (a connection must not
  // cross a fork). The caller holds mutex_.
  sys::Result<sqlite3*> ready() const;
  sys::Result<Entry> do_get(const std::string& key, Use use) override;
  sys::Result<Stored> do_put(const Metadata& meta, std::string_view text) override;
  sys::Result<bool> do_remove(const std::string& key, bool only_if_bad) override;
  sys::Result<std::vector<EntryInfo>> do_list(const ListQuery& query) const override;
  sys::Result<TierStats> do_stats() const override;
  sys::Result<void> check_signature(const Metadata& meta) const;
  // The row at `key`, read inside the caller's transaction: none, a
  // verified (and, where required, signed) entry, or a bad one.
  enum class RowState { absent, good, bad };
  sys::Result<RowState> row_in_transaction(sqlite3* db, const std::string& key) const;
  void close_connection() const;
  sys::Failure refused() const;
  // A failure of SQLite's, with the file noted for setting aside when it
  // is damaged (SQLITE_CORRUPT, SQLITE_NOTADB).
  sys::Failure failed(const std::string& what) const;
  // Moves a damaged file aside (a warning); the next connect makes a new one.
  void set_aside(const std::string& why) const;

  CacheDirectory& directory_;
  std::filesystem::path location_;  // the database file
  std::chrono::milliseconds recency_granularity_;
  std::shared_ptr<const TrustedKeys> trusted_;
  bool network_ = false;
  bool wal_ = false;
  mutable std::string damaged_;
  mutable std::atomic<bool> read_only_{false};  // why the file is to be set aside, when it is
  mutable std::mutex mutex_;  // one statement at a time on the connection
  mutable sqlite3* db_ = nullptr;
  mutable pid_t opened_by_ = 0;
  mutable std::string journal_mode_;
};

}  // namespace vyre::aot
