// One cache directory (the writable one or a read-only layer), held open so
// that every name is resolved relative to it, with its private
// subdirectories: .locks (write stripes, cleanup) and .stats (counter shards,
// the size estimate).
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "aot/safe_file.hpp"

namespace vyre::aot {

class CacheDirectory {
 public:
  // Creates the directory (and missing parents) with mode 0700 when absent.
  // Refuses, with a reason, a directory owned by another user or reached
  // through a symbolic link owned by another user.
  static std::unique_ptr<CacheDirectory> open_writable(const std::filesystem::path& path, std::string& problem);
  // Never creates anything; accepts directories and files owned by the user
  // or by root.
  static std::unique_ptr<CacheDirectory> open_readonly(const std::filesystem::path& path, std::string& problem);

  const std::filesystem::path& path() const { return path_; }
  int fd() const { return fd_.get(); }
  bool writable() const { return writable_; }
  OwnerRule owner_rule() const { return writable_ ? OwnerRule::self : OwnerRule::self_or_root; }

  // Private subdirectories, created on first use; -1 when they cannot be.
  int locks_fd();
  int stats_fd();

  // The write stripe of a key (its first two hex digits): held by a writer
  // while it publishes and by an evictor while it removes, so that neither
  // sees half of the other's work. Readers never take it.
  FileLock stripe_lock(const std::string& key, FileLock::Mode mode, int* error = nullptr);
  // Held while cleanup runs, so that it never runs twice at once.
  FileLock cleanup_lock(FileLock::Mode mode, int* error = nullptr);

 private:
  CacheDirectory(std::filesystem::path path, Fd fd, bool writable)
      : path_(std::move(path)), fd_(std::move(fd)), writable_(writable) {}
  int subdirectory(const char* name, Fd& slot);

  std::filesystem::path path_;
  Fd fd_;
  bool writable_;
  std::mutex subdir_mutex_;
  Fd locks_;
  Fd stats_;
};

// Names of an entry's two files.
std::string wgsl_name(const std::string& key);
std::string metadata_name(const std::string& key);

}  // namespace vyre::aot
