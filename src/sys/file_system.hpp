// What kind of file system holds a path, from statfs(2) and statvfs(3): its
// type by magic number, whether it is shared over a network (or served by a
// user-space daemon), and how many inodes are left. The cache chooses its
// store and its publication by these facts (docs/cache.md, "Stores").
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace vyre::sys {

struct FileSystemFacts {
  bool known = false;        // statfs answered
  std::string type;          // "ext4", "xfs", "nfs", "fuse", ... or "0x<magic>"
  // NFS, CIFS/SMB, Lustre, GPFS, CephFS, AFS, 9p, GFS2, OCFS2, or FUSE
  // (often sshfs or a cluster client): shared between machines, where locks,
  // shared memory and sub-second times may not hold.
  bool network = false;
  uint64_t inodes_total = 0;  // 0: the file system does not count inodes (btrfs)
  uint64_t inodes_free = 0;   // free to an unprivileged user
  uint64_t bytes_free = 0;

  // Few files fit: under 10,000 inodes free, or under 5 % of them. A file
  // system without an inode count is never inode-poor.
  bool inode_poor() const;
};

FileSystemFacts file_system_of(const std::filesystem::path& path);
// The same facts for an open descriptor (the cache directory held open).
FileSystemFacts file_system_of(int fd);

}  // namespace vyre::sys
