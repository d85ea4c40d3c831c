// A fake Redis on loopback for the remote client's deadlines: it answers
// every request (whatever bytes arrive) with one fixed reply, sent a byte
// at a time with a pause between bytes (a server that trickles), and can
// stop after a prefix of it (a server that announces a huge value and then
// sends nothing). Bounded in time: the server thread checks every 10 ms
// whether it is to stop, and the destructor stops and joins it.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace vyre::test {

class SlowRedis {
 public:
  // Sends `reply` a byte every `pause` (0: all at once); with `hold_after`,
  // only its first bytes, then nothing more on that connection.
  SlowRedis(std::string reply, std::chrono::milliseconds pause, size_t hold_after = std::string::npos)
      : reply_(std::move(reply)), pause_(pause), hold_after_(hold_after) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listener_, 8) != 0 || ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0)
      return;
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~SlowRedis() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (listener_ >= 0) ::close(listener_);
  }
  SlowRedis(const SlowRedis&) = delete;
  SlowRedis& operator=(const SlowRedis&) = delete;

  int port() const { return port_; }  // 0: it could not listen
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  // Requests received so far (each read of request bytes counts one).
  int requests() const { return requests_.load(); }

 private:
  // Whether `fd` became readable within 10 ms.
  static bool readable(int fd) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 10) > 0;
  }

  void serve() {
    while (!stop_) {
      if (!readable(listener_)) continue;
      const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      answer(client);
      ::close(client);
    }
  }

  // Answers each request on one connection until it closes or the server stops.
  void answer(int client) {
    char buffer[4096];
    while (!stop_) {
      if (!readable(client)) continue;
      if (::recv(client, buffer, sizeof buffer, 0) <= 0) return;
      ++requests_;
      for (size_t i = 0; i < reply_.size(); ++i) {
        if (i == hold_after_) {
          while (!stop_ && !peer_closed(client)) {
          }
          return;
        }
        if (::send(client, reply_.data() + i, 1, MSG_NOSIGNAL) != 1) return;
        for (auto waited = std::chrono::milliseconds(0); waited < pause_ && !stop_; waited += std::chrono::milliseconds(10))
          std::this_thread::sleep_for(std::min(pause_ - waited, std::chrono::milliseconds(10)));
        if (stop_) return;
      }
    }
  }

  // Whether the client has gone (waits up to 10 ms to see).
  static bool peer_closed(int fd) {
    if (!readable(fd)) return false;
    char byte;
    return ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) <= 0;
  }

  std::string reply_;
  std::chrono::milliseconds pause_;
  size_t hold_after_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

}  // namespace vyre::test
