#include "sys/file_system.hpp"

#include <fcntl.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdio>

namespace vyre::sys {
namespace {

struct Kind {
  int64_t magic;
  const char* name;
  bool network;
};

// Magic numbers from linux/magic.h and the file systems' own sources (Lustre,
// GPFS and others outside the kernel tree define theirs there).
constexpr Kind kKinds[] = {
    {0xEF53, "ext4", false},           {0x58465342, "xfs", false},        {0x9123683E, "btrfs", false},
    {0x01021994, "tmpfs", false},      {0x794C7630, "overlay", false},    {0x2FC12FC1, "zfs", false},
    {0xF2F52010, "f2fs", false},       {0x4d44, "vfat", false},           {0x2011BAB0, "exfat", false},
    {0x5346544E, "ntfs", false},       {0x6969, "nfs", true},             {0xFF534D42, "cifs", true},
    {0xFE534D42, "smb2", true},        {0x517B, "smb", true},             {0x0BD00BD0, "lustre", true},
    {0x47504653, "gpfs", true},        {0x00C36400, "ceph", true},        {0x65735546, "fuse", true},
    {0x5346414F, "afs", true},         {0x6B414653, "afs", true},         {0x01021997, "9p", true},
    {0x19830326, "fhgfs", true},       {0x01161970, "gfs2", true},        {0x7461636f, "ocfs2", true},       {0xAAD7AAEA, "panfs", true},       {0x61636673, "acfs", true},
};

FileSystemFacts facts(const struct statfs& fs, const struct statvfs& vfs) {
  FileSystemFacts out;
  out.known = true;
  const int64_t magic = static_cast<int64_t>(static_cast<uint32_t>(fs.f_type));
  char hex[24];
  (void)std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(magic));
  out.type = hex;
  for (const Kind& k : kKinds)
    if (k.magic == magic) {
      out.type = k.name;
      out.network = k.network;
    }
  out.inodes_total = vfs.f_files;
  out.inodes_free = vfs.f_favail;
  out.bytes_free = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  return out;
}

}  // namespace

bool FileSystemFacts::inode_poor() const {
  if (!known || inodes_total == 0) return false;
  return inodes_free < 10'000 || inodes_free * 20 < inodes_total;
}

FileSystemFacts file_system_of(int fd) {
  struct statfs fs {};
  struct statvfs vfs {};
  if (::fstatfs(fd, &fs) != 0 || ::fstatvfs(fd, &vfs) != 0) return {};
  return facts(fs, vfs);
}

FileSystemFacts file_system_of(const std::filesystem::path& path) {
  // The nearest existing parent: a cache directory not made yet will live there.
  std::filesystem::path probe = path;
  std::error_code ec;
  while (!probe.empty() && !std::filesystem::exists(probe, ec) && probe != probe.parent_path()) probe = probe.parent_path();
  const int fd = ::open(probe.empty() ? "." : probe.c_str(), O_RDONLY | O_CLOEXEC | O_PATH);
  if (fd < 0) return {};
  // O_PATH descriptors answer fstatfs; fstatvfs is built on it.
  FileSystemFacts out = file_system_of(fd);
  ::close(fd);
  return out;
}

}  // namespace vyre::sys
