// A Redis client: one connection per server (made by hiredis) with a connect
// timeout and a deadline for each request as a whole, and the interface the
// remote tier talks to (RedisTarget), which one server (RedisServer, here)
// and a cluster (RedisCluster, redis_cluster.hpp) both implement. Requests
// are written and replies read here (RespReader, bounded), so that a server
// trickling its answer a byte at a time, or announcing a huge one, fails the
// request at its deadline or at once. A connection that failed once is
// dropped and made again on the next command: a reply may be half read.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "aot/entry/entry_frame.hpp"
#include "aot/remote/resp_reader.hpp"
#include "sys/result.hpp"

struct redisContext;

namespace vyre::aot {

struct RedisTimeouts {
  std::chrono::milliseconds connect{100};
  std::chrono::milliseconds operation{250};  // one request whole: sending it and reading every reply
};

// The longest bulk string a reply may hold: the largest value the remote
// tier asks for (GETRANGE 0 kMaxEntryFrameBytes, inclusive). A reply
// announcing more is cut off at its header.
inline constexpr uint64_t kMaxReplyBulkBytes = kMaxEntryFrameBytes + 1;

// Where a server listens: a TCP host and port, or a unix socket path.
struct RedisEndpoint {
  std::string host;  // empty for a unix socket
  int port = 0;
  std::string socket_path;
  std::string text() const;  // "host:port" or the path
};

// A timeout (a request past its deadline) is Fault::io with error
// ETIMEDOUT, so that callers can count it apart from other failures.
bool is_timeout(const sys::Failure& failure);

class RedisConnection {
 public:
  // A database other than 0 is selected on every (re)connection.
  RedisConnection(RedisEndpoint endpoint, RedisTimeouts timeouts, int database = 0);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Sends the commands in one write and reads every reply (a pipeline),
  // all within timeouts.operation. Connects first when not connected. An
  // error reply is a reply; the failure is for a connection that could not
  // be made or answered in time, or a reply over the bounds (a bulk string
  // over kMaxReplyBulkBytes is refused at its header).
  sys::Result<std::vector<RedisReply>> pipeline(const std::vector<std::vector<std::string>>& commands);
  sys::Result<RedisReply> command(const std::vector<std::string>& args);
  const RedisEndpoint& endpoint() const { return endpoint_; }

 private:
  sys::Result<void> connect();
  sys::Failure fail(const std::string& what);  // drops the connection
  sys::Failure drop(sys::Failure why);         // drops the connection

  RedisEndpoint endpoint_;
  RedisTimeouts timeouts_;
  int database_;
  redisContext* context_ = nullptr;
};

// One server's or cluster node's answer to PING.
struct RedisNodePing {
  std::string node;
  std::string role;  // "server", "master", "replica"
  bool ok = false;
  double ms = 0;
  std::string problem;
};

// PING on one connection, timed.
RedisNodePing ping_node(RedisConnection& connection, std::string role);

// What the remote tier talks to. run() sends one command about one key (the
// key routes it in a cluster); every call is bounded by the timeouts.
class RedisTarget {
 public:
  virtual ~RedisTarget() = default;
  virtual sys::Result<RedisReply> run(std::string_view key, const std::vector<std::string>& args) = 0;
  virtual std::vector<RedisNodePing> ping() = 0;
};

// One server (redis://, redis+unix://): one connection under a mutex.
class RedisServer final : public RedisTarget {
 public:
  RedisServer(RedisEndpoint endpoint, RedisTimeouts timeouts, int database);
  sys::Result<RedisReply> run(std::string_view key, const std::vector<std::string>& args) override;
  std::vector<RedisNodePing> ping() override;

 private:
  std::mutex mutex_;
  RedisConnection connection_;
};

// Parses redis://HOST:PORT[/DB], redis+unix:///PATH[?db=N] and
// redis-cluster://HOST:PORT[,HOST:PORT...] into a target; fails with
// malformed and a message that shows the accepted forms.
sys::Result<std::unique_ptr<RedisTarget>> make_redis_target(std::string_view url, const RedisTimeouts& timeouts);

}  // namespace vyre::aot
