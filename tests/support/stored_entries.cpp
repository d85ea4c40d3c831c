#include "support/stored_entries.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>

#include "aot/local/sqlite_tier.hpp"
#include "support/aot_fixtures.hpp"
#include "support/test_support.hpp"

namespace vyre::test {

namespace fs = std::filesystem;

namespace {

fs::path database(const fs::path& dir) { return dir / aot::kSqliteStoreName; }

fs::path part_file(const fs::path& dir, const std::string& key, EntryPart part) {
  return part == EntryPart::wgsl ? wgsl_path(dir, key) : metadata_path(dir, key);
}

const char* column(EntryPart part) { return part == EntryPart::wgsl ? "content" : "metadata"; }

// One connection for one statement; the tests' databases are small.
class Database {
 public:
  explicit Database(const fs::path& file) {
    if (sqlite3_open_v2(file.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << "cannot open " << file << ": " << sqlite3_errmsg(db_);
      sqlite3_close(db_);
      db_ = nullptr;
    } else {
      sqlite3_busy_timeout(db_, 5000);
    }
  }
  ~Database() { sqlite3_close(db_); }
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // A statement's parameter: a key is text, as the store binds it (a blob
  // never equals a text); a part's bytes are a blob.
  struct Param {
    std::string bytes;
    bool blob = false;
  };

  // Runs `sql` with `params`; returns the first column of each row.
  std::vector<std::optional<std::string>> query(const std::string& sql, const std::vector<Param>& params = {}) {
    std::vector<std::optional<std::string>> rows;
    if (db_ == nullptr) return rows;
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db_);
      return rows;
    }
    for (size_t i = 0; i < params.size(); ++i) {
      const auto& p = params[i];
      const int at = static_cast<int>(i + 1), n = static_cast<int>(p.bytes.size());
      if (p.blob)
        sqlite3_bind_blob(st, at, p.bytes.data(), n, SQLITE_TRANSIENT);
      else
        sqlite3_bind_text(st, at, p.bytes.data(), n, SQLITE_TRANSIENT);
    }
    int rc = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      if (sqlite3_column_type(st, 0) == SQLITE_NULL) {
        rows.emplace_back();
        continue;
      }
      const auto* bytes = static_cast<const char*>(sqlite3_column_blob(st, 0));
      rows.emplace_back(std::string(bytes == nullptr ? "" : bytes, static_cast<size_t>(sqlite3_column_bytes(st, 0))));
    }
    if (rc != SQLITE_DONE) ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db_);
    changes_ = sqlite3_changes(db_);
    sqlite3_finalize(st);
    return rows;
  }
  int changes() const { return changes_; }

 private:
  sqlite3* db_ = nullptr;
  int changes_ = 0;
};

// The key of a files-store entry's file name, else empty.
std::string key_of_file(const std::string& name) {
  for (const char* suffix : {".toml", ".entry"})
    if (name.size() == 64 + std::string(suffix).size() && name.ends_with(suffix)) return name.substr(0, 64);
  return {};
}

}  // namespace

bool keeps_rows(const fs::path& dir) { return fs::exists(database(dir)); }

std::optional<std::string> read_entry_part(const fs::path& dir, const std::string& key, EntryPart part) {
  if (keeps_rows(dir)) {
    auto rows = Database(database(dir)).query(std::string("SELECT ") + column(part) + " FROM entries WHERE key = ?1",
                                              {{key}});
    if (rows.empty()) return std::nullopt;
    return rows.front();
  }
  const fs::path file = part_file(dir, key, part);
  if (!fs::exists(file)) return std::nullopt;
  return read_file(file);
}

void write_entry_part(const fs::path& dir, const std::string& key, EntryPart part, const std::string& bytes) {
  if (keeps_rows(dir)) {
    Database db(database(dir));
    db.query(std::string("UPDATE entries SET ") + column(part) + " = ?1 WHERE key = ?2", {{bytes, true}, {key}});
    EXPECT_EQ(db.changes(), 1) << "no row for " << key;
    return;
  }
  const fs::path file = part_file(dir, key, part);
  ASSERT_TRUE(fs::exists(file)) << file;
  write_file(file, bytes);
}

void copy_entry_part(const fs::path& dir, const std::string& from, const std::string& to, EntryPart part) {
  auto bytes = read_entry_part(dir, from, part);
  ASSERT_TRUE(bytes.has_value()) << "no entry " << from;
  write_entry_part(dir, to, part, *bytes);
}

void move_entry(const fs::path& dir, const std::string& from, const std::string& to) {
  if (keeps_rows(dir)) {
    Database db(database(dir));
    db.query("UPDATE entries SET key = ?1 WHERE key = ?2", {{to}, {from}});
    EXPECT_EQ(db.changes(), 1) << "no row for " << from;
    return;
  }
  fs::rename(wgsl_path(dir, from), wgsl_path(dir, to));
  fs::rename(metadata_path(dir, from), metadata_path(dir, to));
}

bool has_entry(const fs::path& dir, const std::string& key) {
  if (keeps_rows(dir))
    return !Database(database(dir)).query("SELECT key FROM entries WHERE key = ?1", {{key}}).empty();
  return fs::exists(metadata_path(dir, key)) || fs::exists(dir / (key + ".entry"));
}

std::vector<std::string> stored_keys(const fs::path& dir) {
  std::vector<std::string> keys;
  if (keeps_rows(dir)) {
    for (auto& key : Database(database(dir)).query("SELECT key FROM entries ORDER BY key"))
      if (key) keys.push_back(*key);
    return keys;
  }
  if (!fs::is_directory(dir)) return keys;
  for (const auto& e : fs::directory_iterator(dir))
    if (auto key = key_of_file(e.path().filename().string()); !key.empty()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

int64_t entry_used_ms(const fs::path& dir, const std::string& key) {
  if (keeps_rows(dir)) {
    auto rows = Database(database(dir)).query("SELECT CAST(used_ms AS TEXT) FROM entries WHERE key = ?1", {{key}});
    return rows.empty() || !rows.front() ? 0 : std::stoll(*rows.front());
  }
  for (const fs::path& file : {metadata_path(dir, key), dir / (key + ".entry")}) {
    std::error_code ec;
    const auto t = fs::last_write_time(file, ec);
    if (!ec) return std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::file_clock::to_sys(t).time_since_epoch())
                        .count();
  }
  return 0;
}

void set_entry_age(const fs::path& dir, const std::string& key, int64_t seconds) {
  if (keeps_rows(dir)) {
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    Database db(database(dir));
    db.query("UPDATE entries SET used_ms = " + std::to_string(now_ms - seconds * 1000) + " WHERE key = ?1", {{key}});
    EXPECT_EQ(db.changes(), 1) << "no row for " << key;
    return;
  }
  for (const fs::path& file : {metadata_path(dir, key), wgsl_path(dir, key), dir / (key + ".entry")})
    if (fs::exists(file)) set_age(file, std::chrono::seconds(seconds));
}

}  // namespace vyre::test
