#include "aot/local/scan.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <unordered_map>

#include "aot/entry/entry.hpp"
#include "vyre/aot.hpp"

namespace vyre::aot {

std::string entry_key_of(std::string_view file_name, EntryFile* which) {
  if (file_name.size() != 69 && file_name.size() != 70) return {};
  std::string_view key = file_name.substr(0, 64);
  std::string_view ext = file_name.substr(64);
  if (!is_valid_key(key) || (ext != ".wgsl" && ext != ".toml" && ext != ".entry")) return {};
  if (which != nullptr) *which = ext == ".toml" ? EntryFile::metadata : ext == ".wgsl" ? EntryFile::wgsl : EntryFile::packed;
  return std::string(key);
}

std::string ScannedEntry::commit_name() const { return is_packed() ? packed_name(key) : metadata_name(key); }

sys::Result<DirectoryScan> scan_directory(int dirfd, sys::OwnerRule rule) {
  DirectoryScan scan;
  // fdopendir takes ownership of its descriptor; give it a fresh one at offset 0.
  int fd = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return sys::errno_failure(errno);
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    const int err = errno;
    ::close(fd);
    return sys::errno_failure(err);
  }
  std::unordered_map<std::string, size_t> index;
  while (dirent* e = ::readdir(dir)) {
    std::string_view name = e->d_name;
    if (sys::is_temporary_name(name)) {
      sys::FileFacts facts = sys::file_facts_at(dirfd, std::string(name), rule);
      if (facts.exists) scan.temporaries.push_back({std::string(name), facts.mtime_ms});
      continue;
    }
    EntryFile which = EntryFile::wgsl;
    std::string key = entry_key_of(name, &which);
    if (key.empty()) continue;
    auto [it, inserted] = index.try_emplace(key, scan.entries.size());
    if (inserted) scan.entries.push_back({key, {}, {}, {}});
    ScannedEntry& entry = scan.entries[it->second];
    sys::FileFacts& facts = which == EntryFile::metadata ? entry.metadata
                            : which == EntryFile::wgsl   ? entry.wgsl
                                                         : entry.packed;
    facts = sys::file_facts_at(dirfd, std::string(name), rule);
  }
  ::closedir(dir);
  std::sort(scan.entries.begin(), scan.entries.end(),
            [](const ScannedEntry& a, const ScannedEntry& b) { return a.key < b.key; });
  return scan;
}

}  // namespace vyre::aot
