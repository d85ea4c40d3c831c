// src/sys/: file access a hostile directory cannot turn against the process,
// sizes and durations, all under one error convention (sys::Result).
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "sys/deadline.hpp"
#include "sys/safe_file.hpp"
#include "sys/units.hpp"

// This program's read(2): the kernel's, except that while a test sets a cap
// each call moves at most that many bytes, short of the end of the file, as
// reads on FUSE with direct I/O, 9p or CIFS may (tests/fs/fault_fs.c).
namespace {
std::atomic<size_t> read_cap{0};
std::atomic<int> reads_cut_short{0};
}  // namespace

extern "C" ssize_t read(int fd, void* buf, size_t count) {
  const size_t cap = read_cap.load();
  if (cap != 0 && count > cap) {
    count = cap;
    ++reads_cut_short;
  }
  return ::syscall(SYS_read, fd, buf, count);
}

namespace vyre::sys {
namespace {

using test::contains;
using test::TempDir;

Fd open_directory(const std::filesystem::path& dir) {
  return Fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

TEST(SysSafeFile, EachWayAReadFailsHasItsOwnKind) {
  TempDir dir;
  test::write_file(dir / "small", "hello");
  test::write_file(dir / "large", std::string(100, 'x'));
  std::filesystem::create_symlink(dir / "small", dir / "link");
  Fd fd = open_directory(dir.path());

  auto ok = read_file_at(fd.get(), "small", 64, OwnerRule::self);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->data, "hello");
  EXPECT_TRUE(read_file_at(fd.get(), "absent", 64, OwnerRule::self).failed_with(Fault::missing));
  EXPECT_TRUE(read_file_at(fd.get(), "link", 64, OwnerRule::self).failed_with(Fault::unsafe));
  EXPECT_TRUE(read_file_at(fd.get(), ".", 64, OwnerRule::self).failed_with(Fault::unsafe));
  auto large = read_file_at(fd.get(), "large", 64, OwnerRule::self);
  ASSERT_TRUE(large.failed_with(Fault::too_large));
  EXPECT_TRUE(contains(large.failure().message, "over the bound of 64"));
}

TEST(SysSafeFile, AReadThatComesBackShortBeforeTheEndIsReadOn) {
  TempDir dir;
  std::string content;
  for (int i = 0; content.size() < 10'000; ++i) content += std::to_string(i) + ' ';
  test::write_file(dir / "entry", content);
  Fd fd = open_directory(dir.path());
  read_cap = 999;
  reads_cut_short = 0;
  auto read = read_file_at(fd.get(), "entry", 1 << 20, OwnerRule::self);
  read_cap = 0;
  EXPECT_GT(reads_cut_short.load(), 0);
  ASSERT_TRUE(read) << read.failure().message;
  EXPECT_EQ(read->data.size(), content.size());  // not the first 999 bytes
  EXPECT_TRUE(read->data == content);
}

TEST(SysSafeFile, AFailedWriteSaysWhyWithItsErrno) {
  TempDir dir;
  Fd fd = open_directory(dir.path());
  ASSERT_TRUE(write_new_file_at(fd.get(), "once", "a", 0600));
  auto again = write_new_file_at(fd.get(), "once", "b", 0600);
  ASSERT_TRUE(again.failed_with(Fault::io));
  EXPECT_EQ(again.failure().error, EEXIST);
  EXPECT_FALSE(again.failure().message.empty());
  EXPECT_EQ(test::read_file(dir / "once"), "a");
}

TEST(SysSafeFile, ATryLockHeldElsewhereIsBusyNotAnError) {
  TempDir dir;
  Fd fd = open_directory(dir.path());
  auto first = FileLock::acquire(fd.get(), "lock", FileLock::Mode::wait);
  ASSERT_TRUE(first);
  // flock locks belong to the open file description: a second open contends.
  auto second = FileLock::acquire(fd.get(), "lock", FileLock::Mode::try_only);
  EXPECT_TRUE(second.failed_with(Fault::busy));
}

TEST(SysUnits, SizesCountsAndDurationsParseOrSayWhatIsAccepted) {
  EXPECT_EQ(*parse_size("64M"), 64ull << 20);
  EXPECT_EQ(*parse_size("1GiB"), 1ull << 30);
  EXPECT_EQ(*parse_size("2KB"), 2000u);
  EXPECT_EQ(*parse_count("500000"), 500000u);
  EXPECT_EQ(*parse_duration("30d"), std::chrono::seconds(30 * 86400));

  auto size = parse_size("12Q");
  ASSERT_TRUE(size.failed_with(Fault::malformed));
  EXPECT_TRUE(contains(size.failure().message, "`12Q` is not a size"));
  EXPECT_TRUE(contains(size.failure().message, "512M"));  // an example of what works
  EXPECT_TRUE(parse_count("12k").failed_with(Fault::malformed));
  EXPECT_TRUE(parse_duration("3 fortnights").failed_with(Fault::malformed));
  EXPECT_TRUE(parse_size("99999999999999999999").failed_with(Fault::malformed));

  // Callers that only need "a value or not" read a Result as an optional.
  std::optional<uint64_t> bound = parse_size("1T");
  EXPECT_EQ(bound, 1ull << 40);
  bound = parse_size("lots");
  EXPECT_FALSE(bound);
}

TEST(SysUnits, DurationsBeyondACenturySaturateAtIt) {
  EXPECT_EQ(kLongestDuration, std::chrono::seconds(int64_t{36525} * 86400));
  EXPECT_EQ(*parse_duration("36525d"), kLongestDuration);
  EXPECT_EQ(*parse_duration("36524d"), std::chrono::seconds(int64_t{36524} * 86400));
  // Each of these overflowed a count of milliseconds, or of seconds.
  EXPECT_EQ(*parse_duration("300000000000h"), kLongestDuration);
  EXPECT_EQ(*parse_duration("9300000000000000000s"), kLongestDuration);
  EXPECT_EQ(*parse_duration("99999999999999999999999999w"), kLongestDuration);
  for (const char* nonsense : {"inf", "nan", "-1s", "1.5h", "s"})
    EXPECT_TRUE(parse_duration(nonsense).failed_with(Fault::malformed)) << nonsense;
  // Sizes and counts refuse what does not fit, as before.
  EXPECT_TRUE(parse_count("99999999999999999999").failed_with(Fault::malformed));
}

TEST(SysDeadline, ConversionsAndDeadlinesSaturateInsteadOfOverflowing) {
  using namespace std::chrono;
  EXPECT_EQ(saturating_millis(seconds::max()), milliseconds::max());
  EXPECT_EQ(saturating_millis(seconds::min()), milliseconds::min());
  EXPECT_EQ(saturating_millis(seconds(90)), milliseconds(90'000));
  EXPECT_EQ(saturating_millis(hours(24)), milliseconds(86'400'000));
  const auto now = steady_clock::now();
  EXPECT_EQ(deadline_after(now, milliseconds::max()), steady_clock::time_point::max());
  EXPECT_EQ(deadline_after(now, saturating_millis(kLongestDuration)), now + kLongestDuration);
  EXPECT_EQ(deadline_after(now, milliseconds(250)), now + milliseconds(250));
  EXPECT_EQ(deadline_after(now, milliseconds(-5)), now);
  EXPECT_GT(deadline_after(milliseconds::max()), steady_clock::now() + hours(24 * 365 * 200));
}

}  // namespace
}  // namespace vyre::sys
