#include "util/bounded_read.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

#include "vyre/error.hpp"

namespace vyre {
namespace {

std::string size_text(uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

Error too_large(const ReadBound& bound) {
  return Error(ErrorKind::invalid_input, bound.what + " is larger than " + size_text(bound.max_bytes) + ", " + bound.limit);
}

class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() { ::close(fd_); }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

}  // namespace

std::vector<uint8_t> read_fd_bounded(int fd, const ReadBound& bound, std::vector<uint8_t> data) {
  // Room for the bound plus one byte (one byte past it is enough to refuse),
  // reserved at once: growing by reallocation would hold the old and the
  // new block together, twice the bound at the end. Pages never written
  // are never resident, so a short read costs what it reads.
  // (A caller that knows the size reserved it already.)
  if (data.capacity() == 0) data.reserve(static_cast<size_t>(bound.max_bytes) + 1);
  constexpr size_t kChunk = 1 << 16;
  while (true) {
    const uint64_t room = bound.max_bytes + 1 - data.size();
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, room));
    const size_t filled = data.size();
    data.resize(filled + want);
    const ssize_t n = ::read(fd, data.data() + filled, want);
    if (n < 0) {
      if (errno == EINTR) {
        data.resize(filled);
        continue;
      }
      const int err = errno;
      throw Error(ErrorKind::io, "cannot read " + bound.what + ": " +
                                     (err == EISDIR ? std::string("it is a directory") : std::strerror(err)));
    }
    data.resize(filled + static_cast<size_t>(n));
    if (data.size() > bound.max_bytes) throw too_large(bound);
    if (n == 0) return data;
  }
}

std::vector<uint8_t> read_file_bounded(const std::filesystem::path& path, const ReadBound& bound) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(ErrorKind::io, "cannot read " + bound.what + ": " + std::strerror(errno));
  FdCloser closer(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw Error(ErrorKind::io, "cannot read " + bound.what + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    throw Error(ErrorKind::io, bound.what + " is a directory: give a file");
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > bound.max_bytes)  // refused without reading
    throw too_large(bound);
  // A regular file's size is known: one exact allocation.
  std::vector<uint8_t> data;
  if (S_ISREG(st.st_mode)) data.reserve(static_cast<size_t>(st.st_size) + 1);
  return read_fd_bounded(fd, bound, std::move(data));
}

}  // namespace vyre
