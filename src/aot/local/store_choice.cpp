#include "aot/local/store_choice.hpp"

#include <system_error>

#include "aot/local/sqlite_tier.hpp"

namespace vyre::aot {

StoreChoice choose_store(const std::filesystem::path& directory, CacheStore setting, std::optional<bool> shared) {
  StoreChoice choice;
  choice.file_system = sys::file_system_of(directory);
  if (shared) choice.file_system.network = *shared;
  const sys::FileSystemFacts& fs = choice.file_system;
  if (setting == CacheStore::sqlite) {
    choice.store = CacheStore::sqlite;
    choice.reason = "VYRE_AOT_CACHE_STORE=sqlite";
    return choice;
  }
  if (setting == CacheStore::directory) {
    choice.reason = "VYRE_AOT_CACHE_STORE=directory";
    return choice;
  }
  // Once made, the database stays the store: entries are never split
  // between two stores by a file system that filled up and emptied again.
  std::error_code ec;
  if (std::filesystem::is_regular_file(directory / kSqliteStoreName, ec)) {
    choice.store = CacheStore::sqlite;
    choice.reason = std::string(kSqliteStoreName) + " is there (chosen earlier)";
    return choice;
  }
  if (fs.network) {
    choice.reason = shared ? "automatic: VYRE_AOT_CACHE_SHARED_FS=1 says the file system is shared between machines, "
                             "where SQLite's locking is not safe"
                           : "automatic: " + fs.type + " is a network file system, where SQLite's locking is not safe";
    return choice;
  }
  if (fs.inode_poor()) {
    choice.store = CacheStore::sqlite;
    choice.reason = "automatic: " + fs.type + " has " + std::to_string(fs.inodes_free) + " of " +
                    std::to_string(fs.inodes_total) + " inodes free (under 10,000 or 5 %)";
    return choice;
  }
  choice.reason = "automatic: " + (fs.known ? fs.type : std::string("the file system")) + " has inodes to spare";
  return choice;
}

}  // namespace vyre::aot
