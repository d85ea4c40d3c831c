// Starting the AOT cache worker (tests/tools/aot_cache_worker.cpp) as a
// separate process, waiting for it or killing it.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/test_support.hpp"

namespace vyre::test {

inline std::vector<std::string> worker_argv(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv{VYRE_AOT_CACHE_WORKER_PATH, dir.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

// Runs the worker to completion.
inline ProcessResult run_worker(const std::filesystem::path& dir, const std::vector<std::string>& args,
                                const std::map<std::string, std::string>& env = {}) {
  return run_process(worker_argv(dir, args), env);
}

// Starts a program with its stdout and stderr in files; returns its pid.
inline pid_t spawn_to_files(std::vector<std::string> argv, const std::filesystem::path& out,
                            const std::filesystem::path& err) {
  pid_t pid = fork();
  if (pid == 0) {
    dup2(open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600), 1);
    dup2(open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600), 2);
    std::vector<char*> raw;
    for (auto& a : argv) raw.push_back(a.data());
    raw.push_back(nullptr);
    execv(raw[0], raw.data());
    _exit(127);
  }
  return pid;
}

// Starts the worker with output discarded; returns its pid.
inline pid_t spawn_worker(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  return spawn_to_files(worker_argv(dir, args), "/dev/null", "/dev/null");
}

// Waits for a spawned worker; returns its exit code, or 128 + signal.
inline int wait_worker(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// wait_worker() for at most `limit`: a worker still running then is killed
// and -1 returned (a hang is a failure of the test, not its timeout).
inline int wait_worker_for(pid_t pid, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (done < 0 && errno != EINTR) return -1;
    if (std::chrono::steady_clock::now() > end) {
      kill(pid, SIGKILL);
      wait_worker(pid);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// A start line a little in the future, so that workers spawned one after
// another begin together: "--start-at", start_line().
inline std::string start_line(int delay_ms = 400) {
  using namespace std::chrono;
  return std::to_string(duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count() + delay_ms);
}

inline bool stress_enabled() {
  const char* v = std::getenv("VYRE_STRESS");
  return v != nullptr && std::string(v) == "1";
}

}  // namespace vyre::test
