#include "aot/stats_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <toml++/toml.h>

#include <array>
#include <cerrno>
#include <sstream>
#include <string>
#include <utility>

#include "sys/safe_file.hpp"

namespace vyre::aot {

Counters& Counters::operator+=(const Counters& o) {
  hits += o.hits;
  misses += o.misses;
  writes += o.writes;
  evictions += o.evictions;
  bad_entries += o.bad_entries;
  errors += o.errors;
  bytes_written += o.bytes_written;
  lowering_us += o.lowering_us;
  time_saved_us += o.time_saved_us;
  rejected += o.rejected;
  remote_hits += o.remote_hits;
  remote_misses += o.remote_misses;
  remote_writes += o.remote_writes;
  remote_errors += o.remote_errors;
  remote_timeouts += o.remote_timeouts;
  remote_rejected += o.remote_rejected;
  return *this;
}

bool Counters::empty() const {
  return hits == 0 && misses == 0 && writes == 0 && evictions == 0 && bad_entries == 0 && errors == 0 &&
         bytes_written == 0 && lowering_us == 0 && time_saved_us == 0 && rejected == 0 && remote_hits == 0 &&
         remote_misses == 0 && remote_writes == 0 && remote_errors == 0 && remote_timeouts == 0 &&
         remote_rejected == 0;
}

namespace {

constexpr uint64_t kMaxStatsFileBytes = 64u << 10;

// The fields of a shard file, by name.
template <class Fn>
void for_each_field(Counters& c, Fn&& fn) {
  fn("hits", c.hits);
  fn("misses", c.misses);
  fn("writes", c.writes);
  fn("evictions", c.evictions);
  fn("bad_entries", c.bad_entries);
  fn("errors", c.errors);
  fn("bytes_written", c.bytes_written);
  fn("lowering_us", c.lowering_us);
  fn("time_saved_us", c.time_saved_us);
  fn("rejected", c.rejected);
  fn("remote_hits", c.remote_hits);
  fn("remote_misses", c.remote_misses);
  fn("remote_writes", c.remote_writes);
  fn("remote_errors", c.remote_errors);
  fn("remote_timeouts", c.remote_timeouts);
  fn("remote_rejected", c.remote_rejected);
}

std::optional<toml::table> read_table(int dirfd, const std::string& name) {
  auto file = sys::read_file_at(dirfd, name, kMaxStatsFileBytes, sys::OwnerRule::self);
  if (!file) return std::nullopt;
  try {
    return toml::parse(file->data);
  } catch (const toml::parse_error&) {
    return std::nullopt;
  }
}

Counters read_shard(int dirfd, unsigned shard) {
  Counters c;
  auto table = read_table(dirfd, "shard-" + std::to_string(shard) + ".toml");
  if (!table) return c;
  for_each_field(c, [&](const char* name, uint64_t& field) {
    if (auto v = (*table)[name].value<int64_t>(); v && *v > 0) field = static_cast<uint64_t>(*v);
  });
  return c;
}

sys::Result<void> write_shard(int dirfd, unsigned shard, Counters c) {
  std::ostringstream out;
  for_each_field(c, [&](const char* name, uint64_t& field) {
    // TOML integers are signed 64-bit; counters saturate rather than wrap.
    uint64_t v = field > static_cast<uint64_t>(INT64_MAX) ? static_cast<uint64_t>(INT64_MAX) : field;
    out << name << " = " << v << '\n';
  });
  return sys::write_atomic_at(dirfd, "shard-" + std::to_string(shard) + ".toml", out.str());
}

}  // namespace

sys::Result<void> add_to_shard(int stats_dirfd, const Counters& delta) {
  unsigned shard = static_cast<unsigned>(::getpid()) % kStatsShards;
  auto lock = sys::FileLock::acquire(stats_dirfd, "shard-" + std::to_string(shard) + ".lock", sys::FileLock::Mode::wait);
  if (!lock) return lock.failure();
  Counters c = read_shard(stats_dirfd, shard);
  c += delta;
  return write_shard(stats_dirfd, shard, c);
}

Counters read_all_shards(int stats_dirfd) {
  Counters total;
  for (unsigned shard = 0; shard < kStatsShards; ++shard) total += read_shard(stats_dirfd, shard);
  return total;
}

sys::Result<void> zero_all_shards(int stats_dirfd) {
  sys::Result<void> outcome;
  for (unsigned shard = 0; shard < kStatsShards; ++shard) {
    auto lock = sys::FileLock::acquire(stats_dirfd, "shard-" + std::to_string(shard) + ".lock", sys::FileLock::Mode::wait);
    sys::Result<void> zeroed = lock ? write_shard(stats_dirfd, shard, Counters{}) : sys::Result<void>(lock.failure());
    if (!zeroed && outcome) outcome = zeroed;  // the first failure; the other shards are still zeroed
  }
  return outcome;
}

namespace {

Usage read_usage_unlocked(int dirfd) {
  Usage u;
  auto table = read_table(dirfd, "usage.toml");
  if (!table) return u;
  u.bytes = (*table)["bytes"].value_or<int64_t>(0);
  u.entries = (*table)["entries"].value_or<int64_t>(0);
  u.scanned_unix_ms = (*table)["scanned_unix_ms"].value_or<int64_t>(0);
  if (u.bytes < 0) u.bytes = 0;
  if (u.entries < 0) u.entries = 0;
  return u;
}

// The estimate is rewritten in place, one fixed-size record, never renamed
// or truncated: replacing a file by rename (or truncating it to zero) makes
// ext4 flush it to disk at once (auto_da_alloc), which would put a disk
// write on every miss. A record torn by a crash reads as unknown, and the
// next cleanup's scan replaces it.
sys::Result<void> write_usage_unlocked(int dirfd, const Usage& u) {
  constexpr size_t kRecordBytes = 128;
  std::ostringstream out;
  out << "bytes = " << u.bytes << "\nentries = " << u.entries << "\nscanned_unix_ms = " << u.scanned_unix_ms;
  std::string record = out.str();
  record.resize(kRecordBytes - 1, ' ');
  record += '\n';
  sys::Fd fd(::openat(dirfd, "usage.toml", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return sys::errno_failure(errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return sys::errno_failure(errno);
  if (!S_ISREG(st.st_mode) || !sys::owner_accepted(st.st_uid, sys::OwnerRule::self))
    return sys::failure(sys::Fault::unsafe, "usage.toml is not a regular file of your own");
  const ssize_t written = ::pwrite(fd.get(), record.data(), record.size(), 0);
  if (written < 0) return sys::errno_failure(errno);
  if (written != static_cast<ssize_t>(record.size())) return sys::errno_failure(ENOSPC);
  return {};
}

}  // namespace

sys::Result<Usage> add_usage(int stats_dirfd, int64_t bytes, int64_t entries) {
  auto lock = sys::FileLock::acquire(stats_dirfd, "usage.lock", sys::FileLock::Mode::wait);
  if (!lock) return lock.failure();
  Usage result = read_usage_unlocked(stats_dirfd);
  result.bytes = std::max<int64_t>(0, result.bytes + bytes);
  result.entries = std::max<int64_t>(0, result.entries + entries);
  if (bytes == 0 && entries == 0) return result;
  if (auto written = write_usage_unlocked(stats_dirfd, result); !written) return written.failure();
  return result;
}

sys::Result<void> set_usage(int stats_dirfd, const Usage& usage) {
  auto lock = sys::FileLock::acquire(stats_dirfd, "usage.lock", sys::FileLock::Mode::wait);
  if (!lock) return lock.failure();
  return write_usage_unlocked(stats_dirfd, usage);
}

sys::Result<void> set_usage_after_scan(int stats_dirfd, const Usage& scanned, const Usage& before) {
  auto lock = sys::FileLock::acquire(stats_dirfd, "usage.lock", sys::FileLock::Mode::wait);
  if (!lock) return lock.failure();
  Usage now = read_usage_unlocked(stats_dirfd);
  Usage result = scanned;
  result.bytes += std::max<int64_t>(0, now.bytes - before.bytes);
  result.entries += std::max<int64_t>(0, now.entries - before.entries);
  return write_usage_unlocked(stats_dirfd, result);
}

Usage read_usage(int stats_dirfd) { return read_usage_unlocked(stats_dirfd); }

}  // namespace vyre::aot
