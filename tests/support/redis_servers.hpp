// Real redis-server processes for the remote tier's tests: one server, or a
// Redis Cluster made with `redis-cli --cluster create`, on 127.0.0.1 at
// random free ports, in a temporary folder. Every process is killed when its
// owner goes out of scope (a failed assertion included) and, should the test
// process die, by the kernel (PR_SET_PDEATHSIG). Every wait is bounded.
#pragma once

#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "aot/remote/redis_client.hpp"
#include "support/test_support.hpp"

namespace vyre::test {

inline bool redis_installed() {
  return std::filesystem::exists("/usr/bin/redis-server") && std::filesystem::exists("/usr/bin/redis-cli");
}
#define VYRE_REQUIRE_REDIS()                                                                                      \
  do {                                                                                                            \
    if (!::vyre::test::redis_installed())                                                                         \
      GTEST_SKIP() << "redis-server or redis-cli is not installed (apt-get install redis-server redis-tools; "    \
                      "scripts/setup installs them)";                                                             \
  } while (0)

// A loopback port nothing listens on now (nor on port + 10000, a cluster's bus).
inline int free_port() {
  static std::mt19937 rng(std::random_device{}());
  auto bindable = [](int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
  };
  for (int attempt = 0; attempt < 200; ++attempt) {
    int port = 20000 + static_cast<int>(rng() % 30000);
    if (bindable(port) && bindable(port + 10000)) return port;
  }
  throw std::runtime_error("no free loopback port");
}

inline sys::Result<aot::RedisReply> redis_command(const aot::RedisEndpoint& at, const std::vector<std::string>& args,
                                                       int timeout_ms = 2000) {
  aot::RedisConnection c(at, aot::RedisTimeouts{std::chrono::milliseconds(timeout_ms), std::chrono::milliseconds(timeout_ms)});
  return c.command(args);
}

// One redis-server process.
class RedisProcess {
 public:
  // `extra`: more redis-server arguments (--cluster-enabled yes ...).
  explicit RedisProcess(const std::filesystem::path& dir, std::vector<std::string> extra = {}, int port = 0,
                        bool unix_socket = false)
      : dir_(dir), extra_(std::move(extra)), port_(port == 0 ? free_port() : port), unix_socket_(unix_socket) {
    std::filesystem::create_directories(dir_);
    start();
  }
  ~RedisProcess() { kill(); }
  RedisProcess(const RedisProcess&) = delete;
  RedisProcess& operator=(const RedisProcess&) = delete;

  int port() const { return port_; }
  std::string socket_path() const { return (dir_ / "redis.sock").string(); }
  aot::RedisEndpoint endpoint() const { return aot::RedisEndpoint{"127.0.0.1", port_, {}}; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  bool running() const { return pid_ > 0; }

  void start() {
    std::vector<std::string> argv{"/usr/bin/redis-server", "--port", std::to_string(port_), "--bind", "127.0.0.1",
                                  "--save", "", "--appendonly", "no", "--dir", dir_.string(), "--logfile",
                                  (dir_ / "redis.log").string(), "--enable-debug-command", "local"};
    if (unix_socket_) {
      argv.insert(argv.end(), {"--unixsocket", socket_path(), "--unixsocketperm", "700"});
    }
    argv.insert(argv.end(), extra_.begin(), extra_.end());
    pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test
      if (::getppid() != parent) _exit(1);
      std::vector<char*> raw;
      for (auto& a : argv) raw.push_back(a.data());
      raw.push_back(nullptr);
      ::execv(raw[0], raw.data());
      _exit(127);
    }
    // Up within 5 s, or the test fails.
    for (int i = 0; i < 250; ++i) {
      auto pong = redis_command(endpoint(), {"PING"}, 200);
      if (pong && pong->text == "PONG") return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    throw std::runtime_error("redis-server did not start on port " + std::to_string(port_) + "; see " +
                             (dir_ / "redis.log").string());
  }

  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  void stop_signal(int sig) { if (pid_ > 0) ::kill(pid_, sig); }
  pid_t pid() const { return pid_; }

 private:
  std::filesystem::path dir_;
  std::vector<std::string> extra_;
  int port_;
  bool unix_socket_;
  pid_t pid_ = -1;
};

// A Redis Cluster of `masters` masters, each with `replicas` replicas.
class RedisClusterProcesses {
 public:
  RedisClusterProcesses(const std::filesystem::path& dir, int masters, int replicas) {
    const int n = masters * (1 + replicas);
    std::vector<std::string> create{"/usr/bin/redis-cli", "--cluster", "create"};
    for (int i = 0; i < n; ++i) {
      std::filesystem::path node_dir = dir / ("node" + std::to_string(i));
      nodes_.push_back(std::make_unique<RedisProcess>(
          node_dir, std::vector<std::string>{"--cluster-enabled", "yes", "--cluster-config-file",
                                             (node_dir / "nodes.conf").string(), "--cluster-node-timeout", "1000",
                                             // A replica syncs at once (not after 5 s), so that it can be promoted.
                                             "--repl-diskless-sync-delay", "0"}));
      create.push_back("127.0.0.1:" + std::to_string(nodes_.back()->port()));
    }
    create.insert(create.end(), {"--cluster-replicas", std::to_string(replicas), "--cluster-yes"});
    auto made = run_process(create);
    if (made.exit_code != 0) throw std::runtime_error("redis-cli --cluster create failed: " + made.out + made.err);
    wait_ok();
  }

  // Until every live node says cluster_state:ok and knows every slot, and
  // every replica has synced with its master (10 s at most).
  void wait_ok() {
    for (int i = 0; i < 500; ++i) {
      bool ok = true;
      for (auto& node : nodes_) {
        if (!node->running()) continue;
        auto info = redis_command(node->endpoint(), {"CLUSTER", "INFO"}, 500);
        ok = ok && info && info->text.find("cluster_state:ok") != std::string::npos &&
             info->text.find("cluster_slots_ok:16384") != std::string::npos;
        auto replication = redis_command(node->endpoint(), {"INFO", "replication"}, 500);
        ok = ok && replication &&
             (replication->text.find("role:slave") == std::string::npos ||
              replication->text.find("master_link_status:up") != std::string::npos);
      }
      if (ok) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    throw std::runtime_error("the Redis Cluster did not become ready in 10 s");
  }

  std::string url() const {
    std::string u = "redis-cluster://";
    for (size_t i = 0; i < nodes_.size() && i < 2; ++i) u += (i ? "," : "") + std::string("127.0.0.1:") + std::to_string(nodes_[i]->port());
    return u;
  }
  std::vector<std::unique_ptr<RedisProcess>>& nodes() { return nodes_; }
  // The node serving `slot` as master now.
  RedisProcess* master_of(int slot) {
    for (auto& node : nodes_) {
      if (!node->running()) continue;
      auto slots = redis_command(node->endpoint(), {"CLUSTER", "SLOTS"}, 500);
      if (!slots) continue;
      for (const auto& range : slots->elements)
        if (range.elements.size() >= 3 && range.elements[0].integer <= slot && slot <= range.elements[1].integer) {
          const int port = static_cast<int>(range.elements[2].elements[1].integer);
          for (auto& n : nodes_)
            if (n->port() == port) return n.get();
        }
      return nullptr;
    }
    return nullptr;
  }

 private:
  std::vector<std::unique_ptr<RedisProcess>> nodes_;
};

}  // namespace vyre::test
