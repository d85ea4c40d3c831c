// What a host embedding the library relies on: typed reads of outputs are
// checked, the library's messages can go to the host's logging, and the
// library never points the process's stderr elsewhere (other threads'
// output must not vanish while adapters are enumerated).
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "support/test_support.hpp"
#include "util/log.hpp"
#include "vyre/dispatch.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"
#include "vyre/log.hpp"

using vyre::test::TempDir;

TEST(Embedding, OutputsGetReadsWholeElementsOnly) {
  const vyre::Outputs outputs({{"three", {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0}}, {"odd", {1, 2, 3}}});
  EXPECT_EQ(outputs.get<uint32_t>("three"), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(outputs.get<int32_t>("three").size(), 3u);
  try {
    (void)outputs.get<uint32_t>("odd");
    FAIL() << "3 bytes read as uint32_t";
  } catch (const vyre::Error& e) {
    EXPECT_EQ(e.kind(), vyre::ErrorKind::invalid_input);
    EXPECT_NE(std::string(e.what()).find("not a whole number of 4-byte elements"), std::string::npos) << e.what();
  }
  // outputs.get<double>("three") does not compile: T is uint32_t, int32_t or float.
}

TEST(Embedding, ALogSinkReceivesTheLibrarysMessagesInsteadOfStderr) {
  std::mutex mutex;
  std::vector<std::pair<vyre::LogLevel, std::string>> seen;
  vyre::set_log_sink([&](vyre::LogLevel level, std::string_view message) {
    std::lock_guard lock(mutex);
    seen.emplace_back(level, std::string(message));
  });
  vyre::log::warn("a warning for the host: {}", 42);
  vyre::log::error("an error for the host");
  vyre::set_log_sink({});  // back to stderr
  vyre::log::warn("this one goes to stderr");
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].first, vyre::LogLevel::warn);
  EXPECT_EQ(seen[0].second, "a warning for the host: 42");
  EXPECT_EQ(seen[1].first, vyre::LogLevel::error);
  EXPECT_EQ(seen[1].second, "an error for the host");
}

TEST(Embedding, TheLibraryNeverRedirectsTheProcessStderr) {
  TempDir dir;
  vyre::test::ScopedEnv no_runtime_dir("XDG_RUNTIME_DIR", nullptr);
  // Point fd 2 at a file for the length of the test; count what another
  // thread writes there while a Backend enumerates adapters.
  const int file = ::open((dir / "stderr.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(file, 0);
  const int saved = ::dup(STDERR_FILENO);
  ::dup2(file, STDERR_FILENO);
  std::atomic<bool> stop{false};
  size_t written = 0;
  std::thread writer([&] {
    while (!stop) {
      if (::write(STDERR_FILENO, "tick\n", 5) == 5) ++written;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  try {
    vyre::gpu::Backend backend;
  } catch (const vyre::Error&) {
    // No adapter here: the enumeration ran all the same.
  }
  stop = true;
  writer.join();
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(file);
  const std::string text = vyre::test::read_file(dir / "stderr.txt");
  size_t ticks = 0;
  for (size_t at = text.find("tick\n"); at != std::string::npos; at = text.find("tick\n", at + 1)) ++ticks;
  EXPECT_GT(written, 0u);
  EXPECT_EQ(ticks, written) << "writes to stderr from another thread were lost";
}
