#include "aot/local/stats_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <iterator>
#include <cerrno>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

#include "sys/safe_file.hpp"

namespace vyre::aot {

Counters& Counters::operator+=(const Counters& other) {
  for (const auto& field : kCounterFields) this->*field.member += other.*field.member;
  remote += other.remote;
  return *this;
}

bool Counters::empty() const {
  return remote.empty() && std::all_of(std::begin(kCounterFields), std::end(kCounterFields),
                                       [&](const CounterField& field) { return this->*field.member == 0; });
}

namespace {

constexpr uint64_t kMaxStatsFileBytes = 64u << 10;

// The table in a file; nullopt when it is absent or (with `problem` set)
// unreadable or malformed.
std::optional<toml::table> read_table(int dirfd, const std::string& name, std::string* problem = nullptr) {
  auto file = sys::read_file_at(dirfd, name, kMaxStatsFileBytes, sys::owner_rule_in(dirfd));
  if (!file) {
    if (problem != nullptr && !file.failed_with(sys::Fault::missing)) *problem = name + ": " + file.failure().message;
    return std::nullopt;
  }
  try {
    return toml::parse(file->data);
  } catch (const toml::parse_error& e) {
    if (problem != nullptr) *problem = name + ": malformed (" + std::string(e.description()) + ")";
    return std::nullopt;
  }
}

std::string shard_name(unsigned shard) { return "shard-" + std::to_string(shard) + ".toml"; }

// A shard is one record of kShardRecordBytes (so that it can be rewritten
// in place, below) ending with `check = "<FNV-1a 64 of the text before
// it>"` and spaces: a shard rewritten in place may be read while it is
// being written, and a reader must tell a torn one from a whole one. A
// shard of another size was written before shards had a fixed size and a
// check, and is taken as it is.
// 16 counters at their widest (19 digits) and the check take 562 bytes;
// under 1000, so that a process under a small file-size limit still writes
// them (AotStats.BadEntriesAndErrorsAreCounted).
constexpr size_t kShardRecordBytes = 768;
constexpr std::string_view kCheckKey = "check = \"";

std::string check_of(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<size_t>(i)] = kHex[h & 15];
  return out;
}

bool every_field_whole(std::string_view text);

bool whole(std::string_view text) {
  const size_t at = text.rfind(kCheckKey);
  // No check: a shard written before shards had one, whole if it has every
  // counter on a line of its own. A shard copied by a rename that is not
  // atomic (some network file systems) and read half-copied has lines
  // missing, or a last line cut short: torn.
  if (at == std::string_view::npos) return text.size() != kShardRecordBytes && every_field_whole(text);
  if (at != 0 && text[at - 1] != '\n') return false;
  const size_t end = at + kCheckKey.size() + 16;
  if (end + 2 > text.size() || text.substr(at + kCheckKey.size(), 16) != check_of(text.substr(0, at)) ||
      text.substr(end, 2) != "\"\n")
    return false;
  return text.find_first_not_of(" \n", end + 2) == std::string_view::npos;
}

bool every_field_whole(std::string_view text) {
  if (text.empty() || text.back() != '\n') return false;
  bool all = true;
  const Counters names;
  for_each_field(names, [&](const char* name, const uint64_t&) {
    const std::string line = std::string(name) + " = ";
    all = all && (text.starts_with(line) || text.find("\n" + line) != std::string_view::npos);
  });
  return all;
}

// With `refused`, the file system's refusal to read the shard (an I/O
// error such as ESTALE or EIO, not an absent, planted or malformed shard),
// or a shard still torn after reading it again, is given there, and no
// counters: a flush must not write over counts it could not read.
Counters read_shard(int dirfd, unsigned shard, std::string* problem = nullptr,
                    std::optional<sys::Failure>* refused = nullptr) {
  Counters c;
  const std::string name = shard_name(shard);
  std::optional<toml::table> table;
  // A torn read of a shard being rewritten in place (one pwrite: the next
  // read sees it whole) or copied by a rename that is not atomic (which
  // takes longer): read again, a little later each time.
  for (int attempt = 0; attempt < 3 && !table; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(25 * attempt));
    auto file = sys::read_file_at(dirfd, name, kMaxStatsFileBytes, sys::owner_rule_in(dirfd));
    if (!file) {
      if (problem != nullptr && !file.failed_with(sys::Fault::missing)) *problem = name + ": " + file.failure().message;
      if (refused != nullptr && file.failed_with(sys::Fault::io)) *refused = file.failure();
      return c;
    }
    if (!whole(file->data)) {
      if (attempt < 2) continue;
      const std::string torn = name + ": torn (its check does not match, or counters are missing)";
      if (problem != nullptr) *problem = torn;
      if (refused != nullptr)
        *refused = sys::failure(sys::Fault::mismatch, torn + "; `vyre cache zero-stats` starts the counters anew");
      return c;
    }
    try {
      table = toml::parse(file->data);
    } catch (const toml::parse_error& e) {
      if (problem != nullptr) *problem = name + ": malformed (" + std::string(e.description()) + ")";
      return c;
    }
  }
  if (!table) return c;
  for_each_field(c, [&](const char* field_name, uint64_t& field) {
    if (auto v = (*table)[field_name].value<int64_t>(); v && *v > 0) field = static_cast<uint64_t>(*v);
  });
  return c;
}

sys::Result<sys::Fd> open_record(int dirfd, const char* name, int flags);
sys::Result<void> write_record(int fd, std::string record, size_t record_bytes);

bool no_room(const sys::Failure& f) { return f.error == ENOSPC || f.error == EDQUOT; }

sys::Result<void> write_shard(int dirfd, unsigned shard, Counters c) {
  std::ostringstream out;
  for_each_field(c, [&](const char* name, uint64_t& field) {
    // TOML integers are signed 64-bit; counters saturate rather than wrap.
    uint64_t v = field > static_cast<uint64_t>(INT64_MAX) ? static_cast<uint64_t>(INT64_MAX) : field;
    out << name << " = " << v << '\n';
  });
  std::string text = out.str();
  text += std::string(kCheckKey) + check_of(text) + "\"\n";
  if (text.size() >= kShardRecordBytes)  // never cut: a record that does not fit is not written
    return sys::failure(sys::Fault::too_large, "counters over the shard's record size");
  text.resize(kShardRecordBytes - 1, ' ');  // as write_record pads it
  text += '\n';
  const std::string name = shard_name(shard);
  auto renamed = sys::write_atomic_at(dirfd, name, text, nullptr, sys::file_mode_in(dirfd));
  if (renamed || !no_room(renamed.failure())) return renamed;
  // No inode (or block) for the new file a rename needs, as on a file
  // system out of inodes where the SQLite store still takes entries: the
  // shard that exists is rewritten in place (one pwrite of a fixed-size
  // record, under the shard's lock), so no count is lost there.
  auto fd = open_record(dirfd, name.c_str(), O_WRONLY);
  if (!fd) return renamed;
  auto in_place = write_record(fd->get(), std::move(text), kShardRecordBytes);
  return in_place ? in_place : renamed;
}

// A small file rewritten in place, one fixed-size record, never renamed or
// truncated: no new disk block once it exists (a full disk can still take
// it) and no flush to disk on rename (ext4's auto_da_alloc). A record torn
// by a crash reads as unknown.
sys::Result<sys::Fd> open_record(int dirfd, const char* name, int flags) {
  const mode_t mode = sys::file_mode_in(dirfd);
  sys::Fd fd(::openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!fd) return sys::errno_failure(errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return sys::errno_failure(errno);
  if (!S_ISREG(st.st_mode) || !sys::owner_accepted(st.st_uid, sys::owner_rule_in(dirfd)))
    return sys::failure(sys::Fault::unsafe, std::string(name) + " is not a regular file of your own");
  if (st.st_uid == ::geteuid() && (st.st_mode & 0777) != mode) ::fchmod(fd.get(), mode);
  return fd;
}

sys::Result<void> write_record(int fd, std::string record, size_t record_bytes) {
  record.resize(record_bytes - 1, ' ');
  record += '\n';
  const ssize_t written = ::pwrite(fd, record.data(), record.size(), 0);
  if (written < 0) return sys::errno_failure(errno);
  if (written != static_cast<ssize_t>(record.size())) return sys::errno_failure(ENOSPC);
  return {};
}

// .stats/lost.toml: how many flushes of counters were lost, and the last
// reason, so that `vyre cache stats` can say its counts are incomplete.
constexpr const char* kLossRecord = "lost.toml";
constexpr size_t kLossRecordBytes = 512;

struct LossRecord {
  uint64_t lost_flushes = 0;
  std::string reason;
};

std::string encode_loss(const LossRecord& loss) {
  std::ostringstream out;
  out << toml::table{{"lost_flushes", static_cast<int64_t>(std::min<uint64_t>(loss.lost_flushes, INT64_MAX))},
                     {"reason", loss.reason.substr(0, kLossRecordBytes / 2)}};
  return out.str();
}

LossRecord parse_loss(std::string_view text) {
  LossRecord loss;
  try {
    toml::table t = toml::parse(text);
    if (auto n = t["lost_flushes"].value<int64_t>(); n && *n > 0) loss.lost_flushes = static_cast<uint64_t>(*n);
    loss.reason = t["reason"].value_or<std::string>("");
  } catch (const toml::parse_error&) {
    loss.lost_flushes = 1;  // torn by a crash in the middle of noting a loss
    loss.reason = "the record of lost flushes is damaged";
  }
  return loss;
}

LossRecord read_loss_record(int dirfd) {
  auto file = sys::read_file_at(dirfd, kLossRecord, kLossRecordBytes, sys::owner_rule_in(dirfd));
  if (!file) return {};
  return parse_loss(file->data);
}

void make_loss_record(int dirfd) {
  auto fd = open_record(dirfd, kLossRecord, O_WRONLY | O_CREAT | O_EXCL);
  if (fd) (void)write_record(fd->get(), encode_loss({}), kLossRecordBytes);
}

}  // namespace

void note_lost_flush(int dirfd, const std::string& reason) {
  auto fd = open_record(dirfd, kLossRecord, O_RDWR | O_CREAT);
  if (!fd) return;
  while (::flock(fd->get(), LOCK_EX) != 0)
    if (errno != EINTR) return;
  std::string text(kLossRecordBytes, '\0');
  const ssize_t n = ::pread(fd->get(), text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  LossRecord loss = text.empty() ? LossRecord{} : parse_loss(text);
  ++loss.lost_flushes;
  loss.reason = reason;
  (void)write_record(fd->get(), encode_loss(loss), kLossRecordBytes);
}

namespace {

sys::Result<void> reset_loss_record(int dirfd) {
  auto fd = open_record(dirfd, kLossRecord, O_RDWR);
  if (!fd) return fd.failed_with(sys::Fault::io) && fd.failure().error == ENOENT ? sys::Result<void>() : fd.failure();
  while (::flock(fd->get(), LOCK_EX) != 0)
    if (errno != EINTR) return sys::errno_failure(errno);
  return write_record(fd->get(), encode_loss({}), kLossRecordBytes);
}

}  // namespace

sys::Result<void> add_to_shard(int stats_dirfd, const Counters& delta) {
  const unsigned shard = static_cast<unsigned>(::getpid()) % kStatsShards;
  const std::string name = "shard-" + std::to_string(shard) + ".toml";
  auto lock = sys::FileLock::acquire(stats_dirfd, "shard-" + std::to_string(shard) + ".lock", sys::FileLock::Mode::wait);
  sys::Result<void> added = lock ? sys::Result<void>() : sys::Result<void>(lock.failure());
  if (added) {
    // A shard the file system would not read (ESTALE, EIO: a network file
    // system's moment) is not rewritten from nothing, which would lose its
    // counts: the flush fails, and its counters are kept for a later one.
    std::optional<sys::Failure> refused;
    Counters c = read_shard(stats_dirfd, shard, nullptr, &refused);
    c += delta;
    added = refused ? sys::Result<void>(sys::failure(refused->kind, "cannot read it first: " + refused->message,
                                                     refused->error))
                    : write_shard(stats_dirfd, shard, c);
  }
  if (!added) return sys::failure(added.failure().kind, "cannot write " + name + ": " + added.failure().message,
                                  added.failure().error);
  make_loss_record(stats_dirfd);  // while there is room for it
  return added;
}

Counters read_all_shards(int stats_dirfd, StatsGaps* gaps) {
  Counters total;
  std::string problem;
  for (unsigned shard = 0; shard < kStatsShards; ++shard) {
    total += read_shard(stats_dirfd, shard, &problem);
    if (gaps != nullptr && gaps->unreadable_shard.empty()) gaps->unreadable_shard = problem;
  }
  if (gaps != nullptr) {
    const LossRecord loss = read_loss_record(stats_dirfd);
    gaps->lost_flushes = loss.lost_flushes;
    gaps->last_loss = loss.reason;
  }
  return total;
}

std::string StatsGaps::describe() const {
  std::string out;
  if (lost_flushes > 0)
    out = std::to_string(lost_flushes) + (lost_flushes == 1 ? " flush" : " flushes") +
          " of counters could not be written (the last: " + last_loss + ")";
  if (!unreadable_shard.empty()) out += (out.empty() ? "" : "; ") + unreadable_shard;
  return out;
}

sys::Result<void> zero_all_shards(int stats_dirfd) {
  sys::Result<void> outcome = reset_loss_record(stats_dirfd);
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

// The estimate is a record rewritten in place (open_record): a write per
// miss must not flush the disk.
sys::Result<void> write_usage_unlocked(int dirfd, const Usage& u) {
  constexpr size_t kRecordBytes = 128;
  std::ostringstream out;
  out << "bytes = " << u.bytes << "\nentries = " << u.entries << "\nscanned_unix_ms = " << u.scanned_unix_ms;
  auto fd = open_record(dirfd, "usage.toml", O_RDWR | O_CREAT);
  if (!fd) return fd.failure();
  return write_record(fd->get(), out.str(), kRecordBytes);
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
