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

#include "sys/safe_file.hpp"

namespace vyre::aot {

class CacheDirectory {
 public:
  // Creates the directory (and missing parents) with mode 0700 when absent.
  // Refuses (unsafe) a directory owned by another user or reached through a
  // symbolic link owned by another user; io when it cannot be made or opened.
  // A group- or world-writable directory (others could plant entries) is
  // refused too, as ssh refuses such key files, unless `signatures_trusted`
  // (trusted keys are set): then it is signed_only(), and may belong to
  // another member of the group (a team's cache).
  static sys::Result<std::unique_ptr<CacheDirectory>> open_writable(const std::filesystem::path& path,
                                                                   bool signatures_trusted = false);
  // Never creates anything; accepts directories and files owned by the user
  // or by root. A layer owned by another user (a CI account) or writable by
  // others is accepted only with `signatures_trusted`, and is then
  // signed_only(), its files of any owner.
  static sys::Result<std::unique_ptr<CacheDirectory>> open_readonly(const std::filesystem::path& path,
                                                                   bool signatures_trusted = false);

  const std::filesystem::path& path() const { return path_; }
  int fd() const { return fd_.get(); }
  bool writable() const { return writable_; }
  // Whose files are entries here: the user's own; in a signed-only
  // directory (a team's, or a layer others publish), anyone's, served only
  // when signed.
  sys::OwnerRule owner_rule() const {
    if (signed_only_) return sys::OwnerRule::any;
    return writable_ ? sys::OwnerRule::self : sys::OwnerRule::self_or_root;
  }
  // The mode of what this process writes here: the user's alone, or
  // readable to the team in a shared directory.
  mode_t entry_mode() const { return signed_only_ ? 0640 : 0600; }
  // Entries here are served only when a trusted key signed them.
  bool signed_only() const { return signed_only_; }
  // On a shared or network file system (sys::FileSystemFacts::network, or
  // said so by VYRE_AOT_CACHE_SHARED_FS): entries are published as one file
  // (publish_packed). Set by the cache once it knows.
  bool shared_file_system() const { return shared_; }
  void set_shared_file_system(bool shared) { shared_ = shared; }

  // Private subdirectories' descriptors, created on first use (read_only in
  // a read-only layer).
  sys::Result<int> locks_fd();
  sys::Result<int> stats_fd();

  // The write stripe of a key (its first two hex digits): held by a writer
  // while it publishes and by an evictor while it removes, so that neither
  // sees half of the other's work. Readers never take it.
  sys::Result<sys::FileLock> stripe_lock(const std::string& key, sys::FileLock::Mode mode);
  // Held while cleanup runs, so that it never runs twice at once.
  sys::Result<sys::FileLock> cleanup_lock(sys::FileLock::Mode mode);

 private:
  CacheDirectory(std::filesystem::path path, sys::Fd fd, bool writable)
      : path_(std::move(path)), fd_(std::move(fd)), writable_(writable) {}
  sys::Result<int> subdirectory(const char* name, sys::Fd& slot);

  std::filesystem::path path_;
  sys::Fd fd_;
  bool writable_;
  bool signed_only_ = false;
  bool shared_ = false;
  std::mutex subdir_mutex_;
  sys::Fd locks_;
  sys::Fd stats_;
};

}  // namespace vyre::aot
