#include "aot/local/driver_store.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "aot/entry/hashing.hpp"
#include "sys/safe_file.hpp"

namespace vyre::aot::driver {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kPendingPrefix = "pending-";
constexpr std::string_view kSelectionPrefix = "selection-";
constexpr uint64_t kMaxFingerprintBytes = 4096;

sys::Failure fs_failure(const std::error_code& ec, const std::string& what) {
  return sys::failure(sys::Fault::io, what + ": " + ec.message(), ec.value());
}

int64_t mtime_ms(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return 0;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1'000'000;
}

// A real directory (not a link) of this user.
bool own_directory(const fs::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid();
}

// The `.driver` folder, and the cache directory above it when it is not
// there yet (the driver is placed before the cache is first opened).
sys::Result<void> make_private_directory(const fs::path& path);

sys::Result<void> make_root(const fs::path& cache_dir) {
  std::error_code ec;
  if (!fs::exists(cache_dir, ec)) {
    // Every folder made on the way gets 0700, as the cache's own opening
    // makes them (docs/cache.md, "Safety"), whatever the umask.
    fs::path partial;
    for (const auto& part : cache_dir.parent_path()) {
      partial /= part;
      if (::mkdir(partial.c_str(), 0700) == 0) ::chmod(partial.c_str(), 0700);
    }
    if (::mkdir(cache_dir.c_str(), 0700) != 0 && errno != EEXIST) {
      const int e = errno;
      return sys::failure(sys::Fault::io, "cannot make " + cache_dir.string() + ": " + std::strerror(e), e);
    }
  }
  return make_private_directory(cache_dir / kFolder);
}

sys::Result<void> make_private_directory(const fs::path& path) {
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    const int e = errno;
    return sys::failure(sys::Fault::io, "cannot make " + path.string() + ": " + std::strerror(e), e);
  }
  if (!own_directory(path))
    return sys::failure(sys::Fault::unsafe, path.string() + " is not a directory of this user (a link or another's)");
  return {};
}

std::optional<std::string> read_small_file(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
      static_cast<uint64_t>(st.st_size) > kMaxFingerprintBytes)
    return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) return std::nullopt;
  return text.str();
}

sys::Result<void> write_small_file(const fs::path& dir, const std::string& name, std::string_view data) {
  sys::Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return sys::errno_failure(errno);
  return sys::write_atomic_at(fd.get(), name, data);
}

// Sizes of the regular files under `path`, links never followed.
void measure(const fs::path& path, Folder& folder) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    const fs::file_status status = it->symlink_status(ec);
    if (ec) break;
    if (!fs::is_regular_file(status)) continue;
    const uint64_t size = it->file_size(ec);
    if (ec) break;
    folder.bytes += size;
    ++folder.files;
  }
}

Folder read_folder(const fs::path& path, const std::string& id) {
  Folder folder;
  folder.id = id;
  folder.path = path;
  folder.last_used_ms = mtime_ms(path / kFingerprintFile);
  measure(path, folder);
  if (!own_directory(path)) {
    folder.ok = false;
    folder.problem = "not a directory of this user";
    return folder;
  }
  const auto recorded = read_small_file(path / kFingerprintFile);
  if (!recorded) {
    folder.ok = false;
    folder.problem = "no readable fingerprint file";
    folder.last_used_ms = mtime_ms(path);
    return folder;
  }
  folder.fingerprint = *recorded;
  if (folder_id(folder.fingerprint) != id) {
    folder.ok = false;
    folder.problem = "its fingerprint file names another folder";
  }
  return folder;
}

// Moves every file of `from` into `to` that `to` lacks, keeping the tree.
void merge_tree(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(from, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path target = to / fs::relative(it->path(), from, ec);
    if (ec) return;
    const fs::file_status status = it->symlink_status(ec);
    if (fs::is_directory(status)) {
      fs::create_directories(target, ec);
      ec.clear();
    } else if (fs::is_regular_file(status) && !fs::exists(fs::symlink_status(target, ec))) {
      fs::rename(it->path(), target, ec);
      ec.clear();
    }
  }
}

}  // namespace

std::string folder_id(std::string_view fingerprint) {
  return KeyEncoder().text("vyre-driver-folder").text(fingerprint).sha256_hex().substr(0, 32);
}

bool is_folder_id(std::string_view name) {
  return name.size() == 32 &&
         std::all_of(name.begin(), name.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

namespace {

// Calls fn(path, name) for each entry of <cache_dir>/.driver, a directory of
// this user (nothing otherwise).
template <class Fn>
void for_each_in_root(const fs::path& cache_dir, Fn&& fn) {
  const fs::path root = cache_dir / kFolder;
  if (!own_directory(root)) return;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
    fn(it->path(), it->path().filename().string());
}

}  // namespace

std::vector<Folder> list(const fs::path& cache_dir) {
  std::vector<Folder> out;
  for_each_in_root(cache_dir, [&](const fs::path& path, const std::string& name) {
    if (is_folder_id(name)) out.push_back(read_folder(path, name));
  });
  std::sort(out.begin(), out.end(), [](const Folder& a, const Folder& b) { return a.id < b.id; });
  return out;
}

std::vector<fs::path> stale_pending(const fs::path& cache_dir, int64_t cutoff_ms) {
  std::vector<fs::path> out;
  for_each_in_root(cache_dir, [&](const fs::path& path, const std::string& name) {
    if (name.starts_with(kPendingPrefix) && mtime_ms(path) < cutoff_ms) out.push_back(path);
  });
  return out;
}

std::vector<fs::path> stale_temporaries(const fs::path& cache_dir, int64_t cutoff_ms) {
  std::vector<fs::path> out;
  for_each_in_root(cache_dir, [&](const fs::path& folder, const std::string& name) {
    if ((!is_folder_id(name) && !name.starts_with(kPendingPrefix)) || !own_directory(folder)) return;
    std::error_code ec;
    for (fs::directory_iterator f(folder, ec), end; !ec && f != end; f.increment(ec)) {
      if (!sys::is_temporary_name(f->path().filename().string())) continue;
      if (fs::is_regular_file(f->symlink_status(ec)) && mtime_ms(f->path()) < cutoff_ms) out.push_back(f->path());
    }
  });
  return out;
}

uint64_t total_bytes(const fs::path& cache_dir) {
  const fs::path root = cache_dir / kFolder;
  if (!own_directory(root)) return 0;
  Folder all;
  measure(root, all);
  return all.bytes;
}

sys::Result<fs::path> data_folder(const fs::path& cache_dir, std::string_view fingerprint) {
  const fs::path root = cache_dir / kFolder;
  if (auto made = make_root(cache_dir); !made) return made.failure();
  const fs::path folder = root / folder_id(fingerprint);
  if (auto made = make_private_directory(folder); !made) return made.failure();
  // Written every time: it refreshes the folder's recency and repairs a lost file.
  if (auto written = write_small_file(folder, std::string(kFingerprintFile), fingerprint); !written)
    return written.failure();
  const fs::path data = folder / kDataFolder;
  if (auto made = make_private_directory(data); !made) return made.failure();
  return data;
}

sys::Result<fs::path> pending_data_folder(const fs::path& cache_dir) {
  static std::atomic<unsigned> counter{0};
  const fs::path root = cache_dir / kFolder;
  if (auto made = make_root(cache_dir); !made) return made.failure();
  const fs::path folder =
      root / (std::string(kPendingPrefix) + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  if (auto made = make_private_directory(folder); !made) return made.failure();
  const fs::path data = folder / kDataFolder;
  if (auto made = make_private_directory(data); !made) return made.failure();
  return data;
}

sys::Result<void> adopt_pending(const fs::path& cache_dir, const fs::path& pending_data, std::string_view fingerprint) {
  const fs::path pending = pending_data.parent_path();
  const fs::path target = cache_dir / kFolder / folder_id(fingerprint);
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(target, ec))) {
    // The common case: the whole folder becomes the fingerprint's, in one rename.
    if (auto written = write_small_file(pending, std::string(kFingerprintFile), fingerprint); !written)
      return written.failure();
    fs::rename(pending, target, ec);
    if (!ec) return {};
  }
  auto data = data_folder(cache_dir, fingerprint);
  if (!data) return data.failure();
  merge_tree(pending_data, *data);
  return remove_folder(pending);
}

sys::Result<void> mark_pending(const fs::path& pending_data, std::string_view fingerprint) {
  return write_small_file(pending_data.parent_path(), std::string(kFingerprintFile), fingerprint);
}

namespace {

// Pending folders whose process has ended and which were marked, with the
// fingerprint each names.
std::vector<std::pair<fs::path, std::string>> finished_pending(const fs::path& cache_dir) {
  const fs::path root = cache_dir / kFolder;
  std::vector<std::pair<fs::path, std::string>> finished;
  if (!own_directory(root)) return finished;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(kPendingPrefix)) continue;
    // pending-<pid>-<n>: a process that still runs may still be writing.
    const std::string rest = name.substr(kPendingPrefix.size());
    const long pid = std::strtol(rest.c_str(), nullptr, 10);
    if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM)) continue;
    if (!own_directory(it->path())) continue;
    if (auto fingerprint = read_small_file(it->path() / kFingerprintFile))
      finished.emplace_back(it->path(), *fingerprint);
  }
  return finished;
}

}  // namespace

size_t adopt_finished_pending(const fs::path& cache_dir) {
  size_t adopted = 0;
  for (const auto& [pending, fingerprint] : finished_pending(cache_dir))
    if (adopt_pending(cache_dir, pending / kDataFolder, fingerprint)) ++adopted;
  return adopted;
}

std::vector<Folder> list_as_filed(const fs::path& cache_dir) {
  std::vector<Folder> out = list(cache_dir);
  for (const auto& [pending, fingerprint] : finished_pending(cache_dir)) {
    const Folder seen = read_folder(pending, folder_id(fingerprint));
    auto same = std::find_if(out.begin(), out.end(), [&](const Folder& f) { return f.id == seen.id; });
    if (same == out.end()) {
      out.push_back(seen);
      continue;
    }
    same->bytes += seen.bytes;
    same->files += seen.files;
    same->last_used_ms = std::max(same->last_used_ms, seen.last_used_ms);
  }
  std::sort(out.begin(), out.end(), [](const Folder& a, const Folder& b) { return a.id < b.id; });
  return out;
}

sys::Result<void> remove_folder(const fs::path& folder) {
  std::error_code ec;
  fs::remove_all(folder, ec);
  if (ec) return fs_failure(ec, "cannot remove " + folder.string());
  if (fs::exists(fs::symlink_status(folder, ec)))
    return sys::failure(sys::Fault::io, "cannot remove " + folder.string() + ": still there");
  return {};
}

sys::Result<bool> copy_folder(const Folder& folder, const fs::path& destination_dir, unsigned file_mode) {
  const fs::path root = destination_dir / kFolder;
  const fs::path target = root / folder.id;
  std::error_code ec;
  if (fs::exists(fs::symlink_status(target, ec))) {
    const Folder there = read_folder(target, folder.id);
    if (there.ok) return false;
    if (auto gone = remove_folder(target); !gone) return gone.failure();
  }
  if (auto made = make_private_directory(root); !made) return made.failure();
  // Copied under a temporary name, then renamed: a reader never sees half a folder.
  const fs::path temporary = root / ("pending-copy-" + std::to_string(::getpid()) + "-" + folder.id);
  fs::remove_all(temporary, ec);
  fs::create_directory(temporary, ec);
  if (ec) return fs_failure(ec, "cannot make " + temporary.string());
  for (fs::recursive_directory_iterator it(folder.path, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path to = temporary / fs::relative(it->path(), folder.path, ec);
    if (ec) break;
    const fs::file_status status = it->symlink_status(ec);
    if (fs::is_directory(status)) {
      fs::create_directory(to, ec);
    } else if (fs::is_regular_file(status)) {
      // The driver runs what these files hold: only this user's (or root's) travel.
      struct stat st {};
      if (::lstat(it->path().c_str(), &st) != 0 || (st.st_uid != ::geteuid() && st.st_uid != 0)) continue;
      fs::copy_file(it->path(), to, ec);
      if (!ec) fs::permissions(to, static_cast<fs::perms>(file_mode), ec);
    }
    if (ec) break;
  }
  if (!ec) fs::rename(temporary, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove_all(temporary, ignored);
    return fs_failure(ec, "cannot copy " + folder.path.string() + " to " + target.string());
  }
  return true;
}

std::optional<std::string> read_selection(const fs::path& cache_dir, std::string_view selection) {
  auto id = read_small_file(cache_dir / kFolder / (std::string(kSelectionPrefix) + std::string(selection)));
  if (!id || !is_folder_id(*id)) return std::nullopt;
  return id;
}

void write_selection(const fs::path& cache_dir, std::string_view selection, std::string_view id) {
  const fs::path root = cache_dir / kFolder;
  if (!make_root(cache_dir)) return;
  (void)write_small_file(root, std::string(kSelectionPrefix) + std::string(selection), id);
}

}  // namespace vyre::aot::driver
